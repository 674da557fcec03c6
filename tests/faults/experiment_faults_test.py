"""Bad input to `python -m agents.scripts.experiment`, run as a user runs it (a fresh
process, so that warnings printed once per process are seen): one line, exit 2."""

import os
import subprocess
import sys
import tempfile
import unittest

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_experiment(*argv):
  """Runs the experiment CLI in a fresh process; returns (exit code, stderr)."""
  result = subprocess.run([sys.executable, '-m', 'agents.scripts.experiment', *argv],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=_REPOSITORY,
                                   TF_CPP_MIN_LOG_LEVEL='3'))
  return result.returncode, result.stderr


class ExperimentFaultsTest(unittest.TestCase):

  def test_an_unknown_pruner_is_one_line_before_any_optuna_warning(self):
    empty = tempfile.mkdtemp()
    code, stderr = run_experiment('optimize', '--config=pendulum', '--pruner=hyperband',
                                  f'--output_dir={empty}', '--n_trials=1')
    self.assertEqual(code, 2, stderr)
    self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
    self.assertIn("pruner must be one of ('none', 'median', 'halving'), got 'hyperband'",
                  stderr)
    self.assertEqual(os.listdir(empty), [])


  def test_an_output_dir_that_is_a_file_is_one_line_and_the_file_is_kept(self):
    with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as file:
      file.write('keep me')
    code, stderr = run_experiment('fit', '--config=cartpole', f'--output_dir={file.name}',
                                  '--budget=64')
    self.assertEqual(code, 2, stderr)
    self.assertEqual(stderr.strip().splitlines(),
                     [f'agents.scripts.experiment: error: output_dir: {file.name} is a file, '
                      'not a folder of experiments.'])
    with open(file.name) as kept:
      self.assertEqual(kept.read(), 'keep me')

  def test_a_set_that_is_not_plain_yaml_is_one_line(self):
    empty = tempfile.mkdtemp()
    for value, fragment in (('[1', 'not a plain YAML value'),
                            ('!!python/object/apply:os.system [true]', 'not a plain YAML')):
      with self.subTest(value=value):
        code, stderr = run_experiment('fit', '--config=cartpole', f'--output_dir={empty}',
                                      '--set', f'network.policy_layers={value}')
        self.assertEqual(code, 2, stderr)
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        self.assertIn(fragment, stderr)
    self.assertEqual(os.listdir(empty), [])


if __name__ == '__main__':
  unittest.main()
