"""Tests of agents/scripts/train.py: flags, run directories and one-line errors."""

import contextlib
import io
import os
import tempfile
import unittest

from agents.scripts import train


def main_error(argv):
  """Runs train.main(argv) and returns (exit code, stderr)."""
  stderr = io.StringIO()
  with contextlib.redirect_stderr(stderr):
    try:
      code = train.main(argv)
    except SystemExit as exit_:
      code = exit_.code
  return code, stderr.getvalue()


class TrainCommandTest(unittest.TestCase):

  def test_unknown_config_is_one_line_exit_2(self):
    code, stderr = main_error(['--logdir', tempfile.mkdtemp(), '--config', 'pendulm'])
    self.assertEqual(code, 2)
    self.assertEqual(len(stderr.strip().splitlines()), 1)
    self.assertIn("Unknown config 'pendulm'", stderr)

  def test_bad_flags_are_one_line_exit_2_and_write_nothing(self):
    for argv, message in ((['--config', 'pendulum', '--bogus'], 'unrecognized'),
                          (['--config', 'pendulum', '--num_agents', 'x'], 'num_agents'),
                          (['--config', 'pendulum', '--set', 'lerning_rate=1'], 'lerning_rate'),
                          (['--config', 'pendulum', '--set', 'discount=[1]'], 'discount'),
                          (['--config', 'pendulum', '--set', 'network.kind=recurent'],
                           'recurent')):
      logdir = tempfile.mkdtemp()
      code, stderr = main_error(['--logdir', logdir] + argv)
      self.assertEqual(code, 2, argv)
      self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
      self.assertIn(message, stderr)
      self.assertEqual(os.listdir(logdir), [])

  def test_flags_override_config_and_name_the_run(self):
    args = train.parse_args(['--logdir', '/tmp/x', '--config', 'cartpole', '--timestamp', 't',
                             '--num_agents', '4', '--noenv_processes', '--seed', '3',
                             '--set', 'learning_rate=1e-3'])
    config, run_dir = train.resolve_run(args)
    self.assertEqual(run_dir, '/tmp/x/t-cartpole')
    self.assertEqual((config['environment']['num_agents'], config['environment']['processes'],
                      config['seed'], config['algorithm']['learning_rate']), (4, False, 3, 1e-3))

  def test_a_yaml_config_names_the_run_by_its_stem(self):
    path = os.path.join(tempfile.mkdtemp(), 'best.yaml')
    with open(path, 'w', encoding='utf-8') as file:
      file.write('environment: {id: CartPole-v1}\n')
    args = train.parse_args(['--logdir', '/tmp/x', '--config', path, '--timestamp', 't'])
    config, run_dir = train.resolve_run(args)
    self.assertEqual(run_dir, '/tmp/x/t-best')
    self.assertEqual(config['environment']['id'], 'CartPole-v1')


if __name__ == '__main__':
  unittest.main()
