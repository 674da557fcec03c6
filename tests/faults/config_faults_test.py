"""Bad inputs to train, export and visualize: one line on stderr, exit code 2, nothing written.

Each case is a row of docs/bad_inputs.md. Most run the commands' `main` in this
process (fast); a few run the real command line in a subprocess, to check the
exit code and that no traceback (or oneDNN abort) reaches the user.
"""

import contextlib
import copy
import io
import os
import subprocess
import sys
import tempfile
import unittest

from agents import configs
from agents.run import session
from agents.scripts import export, train, visualize
from agents.training import trainer
from tests.helpers import tiny_run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run_main(main, argv):
  """Runs a command's main(argv); returns (exit code, stderr)."""
  stderr = io.StringIO()
  with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
    try:
      code = main(argv)
    except SystemExit as exit_:
      code = exit_.code
  return code, stderr.getvalue()


def _run_command(module, *argv):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL='3', OPENBLAS_NUM_THREADS='1')
  return subprocess.run([sys.executable, '-m', module, *argv], capture_output=True, text=True,
                        cwd=ROOT, env=env, timeout=300)


def _untrained_run():
  """A run directory with a valid config.yaml and no checkpoint."""
  run_dir = os.path.join(tempfile.mkdtemp(), 't-cartpole')
  session.prepare_run(tiny_run.tiny_config(), run_dir)
  return run_dir


class _OneLineTest(unittest.TestCase):

  def assert_one_line(self, code, stderr, *fragments):
    self.assertEqual(code, 2, stderr)
    lines = stderr.strip().splitlines()
    self.assertEqual(len(lines), 1, stderr)
    for fragment in fragments:
      self.assertIn(fragment, lines[0])


class TrainValuesTest(_OneLineTest):
  """Out-of-range values: refused before anything is built or written."""

  CASES = [
      (['--set', 'learning_rate=nan'], "'algorithm.learning_rate'", 'a float > 0, got nan'),
      (['--set', 'learning_rate=-1e-3'], "'algorithm.learning_rate'", 'got -0.001'),
      (['--set', 'learning_rate=.inf'], "'algorithm.learning_rate'", 'got inf'),
      (['--set', 'discount=1.5'], "'algorithm.discount'", 'in (0, 1], got 1.5'),
      (['--set', 'gae_lambda=-0.1'], "'algorithm.gae_lambda'", 'in [0, 1]'),
      (['--set', 'max_episode_steps=-1'], "'environment.max_episode_steps'", '>= 1 or null'),
      (['--set', 'update_epochs=0'], "'algorithm.update_epochs'", 'an int >= 1, got 0'),
      (['--set', 'num_minibatches=0'], "'algorithm.num_minibatches'", 'got 0'),
      (['--set', 'num_minibatches=7'], "'algorithm.num_minibatches' = 7", 'must divide'),
      (['--set', 'kl_target=-0.01'], "'algorithm.kl_target'", 'a float > 0'),
      (['--set', 'max_grad_norm=-1'], "'algorithm.max_grad_norm'", 'a float >= 0'),
      (['--set', 'tf_threads=-1'], "'loop.tf_threads'", 'an int >= 0'),
      (['--set', 'steps=0'], "'loop.steps'", 'an int >= 1, got 0'),
      (['--set', 'policy_layers=[0]'], "'network.policy_layers'", 'each an int >= 1, got [0]'),
      (['--set', 'network.kind=recurent'], "'network.kind'", "got 'recurent'"),
      (['--set', 'network.kind=column', '--set', 'network.column_stride=7'],
       "'network.column_stride' = 7", 'must divide 180'),
      (['--set', 'network.kind=column', '--set', 'network.initializer=glorot'],
       "'network.initializer' = 'glorot'", 'is not read by the column network'),
      (['--num_agents', '0'], "'environment.num_agents'", 'an int >= 1, got 0'),
      (['--num_agents=-2'], "'environment.num_agents'", 'got -2'),
      (['--seed=-1'], "'seed'", 'got -1'),
      (['--set', 'environment.id=NoSuchEnv-v0'], "'environment.id' = 'NoSuchEnv-v0'",
       'not a registered Gymnasium environment'),
      (['--set', 'environment.imports=[no_such_module]'], "cannot import 'no_such_module'"),
      (['--set', 'seed=!!python/object/apply:os.system [echo hi]'], 'not a plain YAML value'),
      (['--set', 'learning_rate=!!binary aGk='], "'algorithm.learning_rate'"),
      (['--algorithm=no_such_module:Agent'], "'algorithm.name'", 'cannot import'),
      (['--set', 'environment.kwargs={gravity: 1}'], "'environment.kwargs' names ['gravity']",
       'CartPole-v1 does not take'),
  ]

  def assert_each_refused(self, cases, common_argv):
    """Every (argv, *fragments) case: one line naming the fragments, and an empty logdir."""
    for case in cases:
      argv, fragments = case[0], case[1:]
      with self.subTest(argv=argv):
        logdir = tempfile.mkdtemp()
        code, stderr = _run_main(train.main, [f'--logdir={logdir}'] + common_argv + argv)
        self.assert_one_line(code, stderr, *fragments)
        self.assertEqual(os.listdir(logdir), [])

  def test_each_bad_value_is_one_line_and_writes_nothing(self):
    self.assert_each_refused(self.CASES, ['--config=cartpole'])

  def test_the_real_command_refuses_zero_width_layers_without_aborting(self):
    # policy_layers=[0] used to reach oneDNN and abort the process (exit 134).
    logdir = tempfile.mkdtemp()
    result = _run_command('agents.scripts.train', '--config=cartpole', f'--logdir={logdir}',
                          '--set', 'policy_layers=[0]', '--set', 'learning_rate=nan')
    self.assert_one_line(result.returncode, result.stderr, "'network.policy_layers'")
    self.assertNotIn('Traceback', result.stderr)
    self.assertEqual(os.listdir(logdir), [])

  # Refused only once the environment or the network is built, after config.yaml is written.
  BUILD_CASES = [
      (['--config=balloon', '--num_agents=8', '--set', 'environment.kwargs={progress_reward: -1}'],
       "environment.kwargs = {'progress_reward': -1, 'wind': 'generative'}",
       'progress_reward must be finite and >= 0'),
      (['--config=cartpole', '--num_agents=2', '--set', 'network.kind=column'],
       'Cannot build ppo for CartPole-v1', 'balloon observation of 1099 floats', 'got 4',
       'network.kind'),
  ]

  def test_a_config_refused_at_build_time_is_one_line_and_leaves_no_run(self):
    self.assert_each_refused(self.BUILD_CASES, ['--noenv_processes'])


class TrainPathsTest(_OneLineTest):

  def test_logdir_that_is_a_file(self):
    path = os.path.join(tempfile.mkdtemp(), 'file')
    open(path, 'w', encoding='utf-8').close()
    code, stderr = _run_main(train.main, ['--config=cartpole', f'--logdir={path}'])
    self.assert_one_line(code, stderr, f'--logdir {path} is a file')

  def test_corrupted_or_binary_config_yaml_on_resume(self):
    for content, message in ((b'\x89PNG\r\n\x1a\n\x00\x00', 'not UTF-8 text'),
                             (b'seed: [0\nloop: {', 'not valid YAML'),
                             (b'\x00\x00\x00\x00', 'NUL bytes'),
                             (b'seed: 0\n', "missing the section 'environment'"),
                             (b'just a string', 'does not hold a mapping')):
      with self.subTest(content=content):
        logdir = tempfile.mkdtemp()
        run_dir = os.path.join(logdir, 't-cartpole')
        os.makedirs(run_dir)
        with open(os.path.join(run_dir, 'config.yaml'), 'wb') as file:
          file.write(content)
        code, stderr = _run_main(train.main, ['--config=cartpole', f'--logdir={logdir}',
                                              '--timestamp=t'])
        self.assert_one_line(code, stderr, 'config.yaml', message)

  def test_resume_that_changes_the_run_names_the_keys(self):
    logdir = tempfile.mkdtemp()
    run_dir = os.path.join(logdir, 't-cartpole')
    session.prepare_run(tiny_run.tiny_config(), run_dir)
    code, stderr = _run_main(train.main, ['--config=cartpole', f'--logdir={logdir}',
                                          '--timestamp=t', '--seed=3', '--num_agents=4'])
    self.assert_one_line(code, stderr, 'environment.num_agents (2 -> 4)', 'seed (0 -> 3)')


class ExportTest(_OneLineTest):

  def test_missing_logdir_and_run_without_checkpoint(self):
    missing = os.path.join(tempfile.mkdtemp(), 'nope')
    code, stderr = _run_main(export.main, ['--logdir', missing])
    self.assert_one_line(code, stderr, f'Run directory {missing} does not exist')
    code, stderr = _run_main(export.main, ['--logdir', tempfile.mkdtemp()])
    self.assert_one_line(code, stderr, 'has no config.yaml')
    code, stderr = _run_main(export.main, ['--logdir', _untrained_run()])
    self.assert_one_line(code, stderr, 'has no checkpoint')

  def test_outdir_that_is_a_file_or_not_writable(self):
    run_dir, _ = tiny_run.tiny_run()
    path = os.path.join(tempfile.mkdtemp(), 'file')
    open(path, 'w', encoding='utf-8').close()
    code, stderr = _run_main(export.main, ['--logdir', run_dir, '--outdir', path])
    self.assert_one_line(code, stderr, f'--outdir {path} is a file')
    if os.geteuid() == 0:
      read_only = '/proc/exported-policy'  # Root may write anywhere but in /proc.
    else:
      read_only = os.path.join(tempfile.mkdtemp(), 'locked')
      os.makedirs(read_only)
      os.chmod(read_only, 0o555)
      self.addCleanup(os.chmod, read_only, 0o755)
    code, stderr = _run_main(export.main, ['--logdir', run_dir, '--outdir', read_only])
    self.assert_one_line(code, stderr, read_only)


class VisualizeTest(_OneLineTest):

  def test_run_without_checkpoint_outdir_file_and_zero_episodes(self):
    outdir = tempfile.mkdtemp()
    code, stderr = _run_main(visualize.main, ['--logdir', _untrained_run(), '--outdir', outdir])
    self.assert_one_line(code, stderr, 'has no checkpoint')
    path = os.path.join(tempfile.mkdtemp(), 'file')
    open(path, 'w', encoding='utf-8').close()
    run_dir, _ = tiny_run.tiny_run()
    code, stderr = _run_main(visualize.main, ['--logdir', run_dir, '--outdir', path])
    self.assert_one_line(code, stderr, f'--outdir {path} is a file')
    code, stderr = _run_main(visualize.main, ['--logdir', run_dir, '--outdir', outdir,
                                              '--num_episodes=0'])
    self.assert_one_line(code, stderr, '--num_episodes must be at least 1, got 0')
    self.assertEqual(os.listdir(outdir), [])


class ApiTest(unittest.TestCase):

  def test_train_refuses_a_bad_config_before_writing(self):
    run_dir = os.path.join(tempfile.mkdtemp(), 'run')
    config = copy.deepcopy(tiny_run.tiny_config())  # A resolved config is frozen.
    config['algorithm']['discount'] = 1.5
    with self.assertRaisesRegex(configs.ConfigError, "'algorithm.discount'"):
      trainer.train(config, run_dir, quiet=True)
    self.assertFalse(os.path.exists(run_dir))


if __name__ == '__main__':
  unittest.main()
