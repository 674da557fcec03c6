"""Tests of agents/scripts/train.py: flags, run directories and one-line errors."""

import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

from agents.scripts import train
from agents.training import trainer
from tests.helpers import tiny_run


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
                           'recurent'),
                          (['--config', 'pendulum', '--env_processes=maybe'],
                           "expected true or false, got 'maybe'")):
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

  def test_env_processes_as_absl_reads_a_boolean_flag(self):
    for flags, expected in ((['--env_processes'], True), (['--env_processes=False'], False),
                            (['--env_processes=true'], True), (['--env_processes=0'], False),
                            (['--noenv_processes'], False), ([], None)):
      args = train.parse_args(['--logdir', '/tmp/x', '--config', 'cartpole', *flags])
      self.assertIs(args.env_processes, expected, flags)

  def test_a_yaml_config_names_the_run_by_its_stem(self):
    path = os.path.join(tempfile.mkdtemp(), 'best.yaml')
    with open(path, 'w', encoding='utf-8') as file:
      file.write('environment: {id: CartPole-v1}\n')
    args = train.parse_args(['--logdir', '/tmp/x', '--config', path, '--timestamp', 't'])
    config, run_dir = train.resolve_run(args)
    self.assertEqual(run_dir, '/tmp/x/t-best')
    self.assertEqual(config['environment']['id'], 'CartPole-v1')


class ResumeFlagTest(unittest.TestCase):
  """`--resume=RUN_DIR` resumes a run by its directory, whatever the directory's name."""

  def test_a_copied_run_resumes_and_extends_under_its_new_name(self):
    # A run of the random agent: the directory's bookkeeping is checked, not the learner's.
    run_dir = tempfile.mkdtemp(prefix='random-run-')
    trainer.train(tiny_run.tiny_config(**{'algorithm.name': 'random'}), run_dir, quiet=True,
                  export_policy=False)
    copied = os.path.join(tempfile.mkdtemp(), 'a copy')
    shutil.copytree(run_dir, copied)
    with contextlib.redirect_stdout(io.StringIO()) as stdout:
      code = train.main(['--resume', copied, '--set', 'loop.steps=192', '--quiet'])
    self.assertEqual(code, 0)
    self.assertIn(f'Run finished at step 192: {copied}', stdout.getvalue())
    with open(os.path.join(copied, 'metrics.jsonl'), encoding='utf-8') as file:
      steps = [json.loads(line)['step'] for line in file]
    self.assertEqual(max(steps), 192)
    self.assertEqual(os.listdir(os.path.dirname(copied)), ['a copy'])  # no new run beside it

  def test_bad_uses_are_one_line_exit_2(self):
    run_dir = tempfile.mkdtemp()
    for argv, message in ((['--config', 'cartpole'], 'required: --logdir .or --resume'),
                          (['--logdir', run_dir], 'required: --config'),
                          (['--resume', run_dir], 'no run there .no config.yaml'),
                          (['--resume', tiny_run.tiny_run()[0], '--config', 'cartpole',
                            '--timestamp', 't'], 'drop --config, --timestamp')):
      with self.subTest(argv=argv):
        code, stderr = main_error(argv)
        self.assertEqual(code, 2)
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        self.assertRegex(stderr, message)
    self.assertEqual(os.listdir(run_dir), [])


if __name__ == '__main__':
  unittest.main()
