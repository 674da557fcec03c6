"""Tests for BLE's launch commands here: `python -m agents.python_agents.train` and `.eval`.

BLE 1.0.1's flags with its names and defaults, its output layout (checkpoints and
collector output under `<base_dir>/<agent>/<run_number>`, eval JSON in
`<output_dir>/<suite>/<name>.json`), and bad input refused in one line with exit code 2,
nothing written.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import gin

from agents.python_agents import eval as eval_command
from agents.python_agents import train as train_command
from agents.python_agents import train_lib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ['--num_iterations=1', '--max_episode_length=3', '--episodes_per_iteration=2',
        '--collectors=jsonl', '--wind_field=procedural']


def run(main, argv):
  """(exit code, stderr) of a command's `main(argv)` in this process."""
  gin.clear_config()
  stderr = io.StringIO()
  with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
    try:
      code = main(argv)
    except SystemExit as exit_:
      code = exit_.code
  gin.clear_config()
  return code, stderr.getvalue()


class FlagsTest(unittest.TestCase):

  def test_train_has_bles_flags_and_defaults(self):
    args = train_command.define_flags().parse(['--base_dir=/b'])
    self.assertEqual(vars(args), dict(
        agent='dqn', env_name='BalloonLearningEnvironment-v0', num_iterations=200,
        max_episode_length=960, base_dir='/b', run_number=1, wind_field='generative',
        agent_gin_file=None, collectors=['console'], gin_bindings=[], renderer=None,
        render_period=10, episodes_per_iteration=50))

  def test_eval_has_bles_flags_and_defaults(self):
    args = eval_command.define_flags().parse([])
    self.assertEqual(vars(args), dict(
        agent='dqn', suite='big_eval', wind_field='generative', agent_gin_file=None,
        gin_bindings=[], output_dir='/tmp/ble/eval', num_shards=1, shard_idx=0,
        pretty_json=False, checkpoint_dir=None, checkpoint_idx=None, name_override=None,
        renderer=None, render_period=10))

  def test_absl_syntax(self):
    flags = eval_command.define_flags()
    args = flags.parse(['--agent', 'random', '--gin_bindings=A.b=1', '--gin_bindings=C.d=2',
                        '--pretty_json', '--num_shards=4'])
    self.assertEqual((args.agent, args.gin_bindings, args.pretty_json, args.num_shards),
                     ('random', ['A.b=1', 'C.d=2'], True, 4))
    self.assertFalse(flags.parse(['--nopretty_json']).pretty_json)
    self.assertFalse(flags.parse(['--pretty_json=false']).pretty_json)


class TrainCommandTest(unittest.TestCase):

  def test_the_launch_command_writes_under_base_dir_agent_run_number(self):
    base_dir = tempfile.mkdtemp()
    result = subprocess.run(
        [sys.executable, '-m', 'agents.python_agents.train', f'--base_dir={base_dir}',
         '--agent=station_seeker', '--run_number=3', *TINY],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    self.assertEqual(result.returncode, 0, result.stderr[-2000:])
    run_dir = os.path.join(base_dir, 'station_seeker', '3')
    self.assertEqual(sorted(os.listdir(base_dir)), ['station_seeker'])
    self.assertEqual(train_lib.read_records(os.path.join(run_dir, 'checkpoints'))[0]['episodes'],
                     2)
    with open(os.path.join(run_dir, 'metrics', 'jsonl', 'episodes.jsonl')) as file:
      self.assertEqual(len(file.readlines()), 2)

  def test_gin_bound_mlp_trains_then_eval_loads_its_checkpoint(self):
    base_dir, output_dir = tempfile.mkdtemp(), tempfile.mkdtemp()
    code, stderr = run(train_command.main, [
        f'--base_dir={base_dir}', '--agent=mlp', '--gin_bindings=MLPAgent.seed = 3', *TINY])
    self.assertEqual(code, 0, stderr)
    checkpoints = os.path.join(base_dir, 'mlp', '1', 'checkpoints')
    self.assertIn('mlp-0.npz', os.listdir(checkpoints))
    code, stderr = run(eval_command.main, [
        '--agent=mlp', '--suite=micro_eval', '--wind_field=procedural',
        f'--output_dir={output_dir}',
        f'--checkpoint_dir={checkpoints}', '--checkpoint_idx=0', '--pretty_json'])
    self.assertEqual(code, 0, stderr)
    path = os.path.join(output_dir, 'micro_eval', 'mlp_0.json')
    with open(path) as file:
      text = file.read()
    self.assertEqual([result['seed'] for result in json.loads(text)], [0])
    self.assertIn('\n  {', text)  # --pretty_json: an indent of 2.

  def test_bad_input_is_one_line_exit_2_and_nothing_written(self):
    cases = {
        '--agent=nope': "--agent: unknown agent 'nope'",
        '--gin_bindings=MLPAgent.hidden_unitz=3': "'MLPAgent.hidden_unitz=3'.*hidden_unitz",
        '--gin_bindings=Nope.x=1': "No configurable matching 'Nope'",
        '--gin_bindings=MLPAgent.num_layers=0': '--agent=mlp: ValueError: .*num_layers',
        '--agent_gin_file=/nonexistent.gin': 'gin file /nonexistent.gin: no such file',
        '--num_iterations=0': 'flag --num_iterations=0: 0 is not >= 1',
        '--max_episode_length=x': "--max_episode_length: invalid int value: 'x'",
        '--wind_field=gusty': "--wind_field: invalid choice: 'gusty'",
        '--collectors=nope': "--collectors: unknown collector 'nope'",
        '--env_name=Nope-v0': '--env_name=Nope-v0: ',
        # The weights named where there are none: the fetch command, in one line.
        '--agent=finetune_perciatelli': 'ble_models fetch',
        '--bogus=1': "unknown command line flag '--bogus=1'",
    }
    for flag, message in cases.items():
      with self.subTest(flag=flag):
        base_dir = os.path.join(tempfile.mkdtemp(), 'never')
        argv = [f'--base_dir={base_dir}', '--agent=mlp', *TINY, flag]
        with mock.patch.dict(os.environ, {'AGENTS_PERCIATELLI44': '/nonexistent/p44.pb'}):
          code, stderr = run(train_command.main, argv)
        self.assertEqual(code, 2, stderr)
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        self.assertRegex(stderr, message)
        self.assertFalse(os.path.exists(base_dir))
    code, stderr = run(train_command.main, ['--agent=random'])
    self.assertEqual((code, stderr.strip().split(': error: ')[1]),
                     (2, 'flag --base_dir must have a value other than None.'))


class EvalCommandTest(unittest.TestCase):

  def test_names_the_json_as_ble_does(self):
    args = eval_command.define_flags().parse(['--agent=quantile', '--suite=small_eval',
                                              '--output_dir=/out'])
    from agents.python_agents import command_setup
    self.assertEqual(command_setup.result_path(args), '/out/small_eval/quantile.json')
    args.checkpoint_idx, args.num_shards, args.shard_idx = 7, 4, 2
    self.assertEqual(command_setup.result_path(args), '/out/small_eval/quantile_7_2.json')
    args.name_override = 'mine'
    self.assertEqual(command_setup.result_path(args), '/out/small_eval/mine_2.json')

  def test_a_shard_flies_its_seeds(self):
    output_dir = tempfile.mkdtemp()
    code, stderr = run(eval_command.main, [
        '--agent=random', '--suite=micro_eval', '--wind_field=procedural',
        f'--output_dir={output_dir}',
        '--num_shards=2', '--shard_idx=1', '--name_override=walk'])
    self.assertEqual(code, 0, stderr)
    with open(os.path.join(output_dir, 'micro_eval', 'walk_1.json')) as file:
      self.assertEqual([result['seed'] for result in json.load(file)], [0])

  def test_bad_input_is_one_line_exit_2_and_nothing_written(self):
    cases = {
        '--shard_idx=2': '--shard_idx=2: must be below --num_shards=2',
        '--shard_idx=0': 'shard 0 of 2 of micro_eval has no seeds',
        '--suite=nope': "--suite: invalid choice: 'nope'",
        '--checkpoint_idx=4': '--checkpoint_dir=.* --checkpoint_idx=4: the checkpoint does not',
        '--agent=nope': "--agent: unknown agent 'nope'",
    }
    for flag, message in cases.items():
      with self.subTest(flag=flag):
        output_dir = os.path.join(tempfile.mkdtemp(), 'never')
        argv = ['--agent=mlp', '--suite=micro_eval', '--wind_field=procedural', '--num_shards=2',
                '--shard_idx=1', f'--output_dir={output_dir}',
                f'--checkpoint_dir={tempfile.mkdtemp()}', flag]
        code, stderr = run(eval_command.main, argv)
        self.assertEqual(code, 2, stderr)
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        self.assertRegex(stderr, message)
        self.assertFalse(os.path.exists(output_dir))


if __name__ == '__main__':
  unittest.main()
