"""BatchPPO's training commands: `--config=module:function` and a tiny HalfCheetah run."""

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import textwrap
import unittest

from agents.scripts import train, visualize

_USER_MODULE = '''
from agents.scripts import configs

def mytask():
  locals().update(configs.default())
  env = 'Pendulum-v1'
  max_length = 200
  steps = 1e5
  return locals()
'''


class ModuleFunctionConfigTest(unittest.TestCase):

  def test_a_users_config_function_names_the_run_by_the_function(self):
    directory = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, directory)
    with open(os.path.join(directory, 'batchppo_user_module.py'), 'w') as file:
      file.write(textwrap.dedent(_USER_MODULE))
    sys.path.insert(0, directory)
    self.addCleanup(sys.path.remove, directory)
    self.addCleanup(sys.modules.pop, 'batchppo_user_module', None)
    args = train.parse_args(['--logdir', '/tmp/x', '--config', 'batchppo_user_module:mytask',
                             '--timestamp', 't', '--num_agents', '4'])
    config, run_dir = train.resolve_run(args)
    self.assertEqual(run_dir, '/tmp/x/t-mytask')
    self.assertEqual(config['environment']['num_agents'], 4)  # The flag wins.
    self.assertEqual(config['loop']['steps'], 100_000)


class TinyCheetahTest(unittest.TestCase):
  """`--config=cheetah`, shrunk by flags, trains, updates and resumes."""

  def test_trains_and_resumes(self):
    logdir = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, logdir)
    # BatchPPO's absl flags take `--env_processes=False` as well as `--noenv_processes`.
    argv = ['--config=cheetah', f'--logdir={logdir}', '--timestamp=t', '--num_agents=2',
            '--env_processes=False', '--set', 'algorithm.segment_length=50', '--set',
            'algorithm.update_epochs=2', '--set', 'loop.steps_per_call=25', '--quiet']
    with contextlib.redirect_stdout(io.StringIO()) as stdout:
      self.assertEqual(train.main(argv + ['--set', 'loop.steps=200']), 0)
      self.assertEqual(train.main(argv + ['--set', 'loop.steps=400']), 0)
    run_dir = os.path.join(logdir, 't-cheetah')
    self.assertIn(f'Run finished at step 400: {run_dir}', stdout.getvalue())
    with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
      rows = [json.loads(line) for line in file]
    self.assertEqual(max(row['updates'] for row in rows if row['phase'] == 'update'), 4)
    # BatchPPO's visualize command, with its flags, on the run.
    outdir = os.path.join(logdir, 'video')
    with contextlib.redirect_stdout(io.StringIO()):
      code = visualize.main([f'--logdir={run_dir}', f'--outdir={outdir}', '--num_agents=1',
                             '--env_processes=False', '--num_episodes=1', '--max_steps=10',
                             '--format=gif'])
    self.assertEqual(code, 0)
    with open(os.path.join(outdir, 'episodes.json'), encoding='utf-8') as file:
      episodes = json.load(file)['episodes']
    self.assertEqual([episode['length'] for episode in episodes], [10])


if __name__ == '__main__':
  unittest.main()
