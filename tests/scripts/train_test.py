"""Tests of agents/scripts/train.py: outputs, resume, Ctrl-C and flag errors."""

import contextlib
import io
import json
import os
import signal
import tempfile
import unittest
from unittest import mock

import numpy as np

from agents.scripts import config_schema, export, train
from tests.scripts import tiny_run


def _rows(run_dir):
  with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
    return [json.loads(line) for line in file]


def _main_error(argv):
  """Runs main(argv) and returns (exit code, stderr)."""
  stderr = io.StringIO()
  with contextlib.redirect_stderr(stderr):
    try:
      code = train.main(argv)
    except SystemExit as exit_:
      code = exit_.code
  return code, stderr.getvalue()


class TrainTest(unittest.TestCase):

  def test_run_directory_contents(self):
    run_dir, result = tiny_run.tiny_run()
    self.assertEqual(result['step'], 128)
    self.assertFalse(result['interrupted'])
    for name in ('config.yaml', 'metrics.jsonl', 'checkpoints', 'train', 'policy'):
      self.assertTrue(os.path.exists(os.path.join(run_dir, name)), name)
    self.assertTrue(any(name.startswith('events.out.tfevents')
                        for name in os.listdir(os.path.join(run_dir, 'train'))))
    rows = _rows(run_dir)
    train_rows = [row for row in rows if row['phase'] == 'train']
    update_rows = [row for row in rows if row['phase'] == 'update']
    self.assertEqual([row['step'] for row in train_rows], [64, 128])
    # 128 steps / (2 agents * 16 steps) = 4 updates.
    self.assertEqual(update_rows[-1]['updates'], 4)
    for key in ('policy_loss', 'value_loss', 'kl', 'kl_penalty', 'entropy', 'clip_fraction',
                'explained_variance', 'gradient_norm', 'observ_mean', 'observ_std'):
      self.assertIn(key, update_rows[-1])
    self.assertEqual(config_schema.load_yaml(os.path.join(run_dir, 'config.yaml')),
                     tiny_run.tiny_config())

  def test_resume_continues_from_checkpoint(self):
    run_dir = tempfile.mkdtemp()
    first = train.train(tiny_run.tiny_config(steps=64), run_dir, quiet=True)
    self.assertEqual(first['step'], 64)
    second = train.train(tiny_run.tiny_config(steps=128), run_dir, quiet=True)
    self.assertEqual(second['step'], 128)
    steps = [row['step'] for row in _rows(run_dir) if row['phase'] == 'train']
    self.assertEqual(steps, [64, 128])
    _, algorithm, _, _ = export.restore_algorithm(run_dir)
    self.assertEqual(int(algorithm.num_updates.numpy()), 4)

  def test_ctrl_c_saves_checkpoint_and_stops(self):
    run_dir = tempfile.mkdtemp()
    original = train._ProgressReporter.__call__
    calls = []

    def interrupting_call(reporter, row):
      calls.append(row['step'])
      if len(calls) == 2:
        signal.raise_signal(signal.SIGINT)
      return original(reporter, row)

    with mock.patch.object(train._ProgressReporter, '__call__', interrupting_call):
      result = train.train(tiny_run.tiny_config(steps=10_000), run_dir, quiet=True)
    self.assertTrue(result['interrupted'])
    self.assertEqual(result['step'], calls[-1])
    checkpoints = os.listdir(os.path.join(run_dir, 'checkpoints'))
    self.assertIn(f"ckpt-{result['step']}.index", checkpoints)
    self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)

  def test_unknown_config_is_one_line_exit_2(self):
    code, stderr = _main_error(['--logdir', tempfile.mkdtemp(), '--config', 'pendulm'])
    self.assertEqual(code, 2)
    self.assertEqual(len(stderr.strip().splitlines()), 1)
    self.assertIn("Unknown config 'pendulm'", stderr)

  def test_bad_flags_are_one_line_exit_2(self):
    for argv, message in ((['--config', 'pendulum', '--bogus'], 'unrecognized'),
                          (['--config', 'pendulum', '--num_agents', 'x'], 'num_agents'),
                          (['--config', 'pendulum', '--set', 'lerning_rate=1'], 'lerning_rate'),
                          (['--config', 'pendulum', '--set', 'discount=[1]'], 'discount')):
      code, stderr = _main_error(['--logdir', tempfile.mkdtemp()] + argv)
      self.assertEqual(code, 2, argv)
      self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
      self.assertIn(message, stderr)

  def test_flags_override_config_and_name_the_run(self):
    args = train.parse_args(['--logdir', '/tmp/x', '--config', 'cartpole', '--timestamp', 't',
                             '--num_agents', '4', '--noenv_processes', '--seed', '3',
                             '--set', 'learning_rate=1e-3'])
    config, run_dir = train.resolve_run(args)
    self.assertEqual(run_dir, '/tmp/x/t-cartpole')
    self.assertEqual((config['num_agents'], config['env_processes'], config['seed'],
                      config['learning_rate']), (4, False, 3, 1e-3))


class BatchEnvTest(unittest.TestCase):

  def test_vector_env_slabs_for_the_balloon(self):
    from agents.scripts import configs
    config = configs.resolve('balloon', {'num_agents': 3, 'env_processes': False})
    batch = train.make_batch_env(config)
    try:
      self.assertEqual(len(batch), 3)
      observ, _ = batch.reset(seeds=[0, 1, 2])
      self.assertEqual(observ.shape, (3, 1099))
      observ, reward, terminated, truncated, _ = batch.step(np.array([0, 1, 2]))
      self.assertEqual((observ.shape, reward.shape), ((3, 1099), (3,)))
    finally:
      batch.close()


if __name__ == '__main__':
  unittest.main()
