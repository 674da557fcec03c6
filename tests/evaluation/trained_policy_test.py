"""Tests for flying trained policies: run:<RUN_DIR> and savedmodel:<DIR> (a tiny balloon run)."""

import functools
import json
import logging
import os
import tempfile
import unittest
from unittest import mock

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.env import BalloonVectorEnv
from agents.evaluation import policies, runner, suites
from agents.evaluation.errors import EvaluationError
from agents.evaluation.play import DeterministicPolicy
from agents.tools import space_spec
from tests.helpers import tiny_run


class _Warnings(logging.Handler):

  def __init__(self):
    super().__init__(logging.WARNING)
    self.messages = []

  def emit(self, record):
    self.messages.append(record.getMessage())


@functools.cache
def tiny_balloon_run_and_warnings():
  """A balloon run of 32 steps (8-step episodes) with a checkpoint and policy/ (built once).

  Returns:
    (run_dir, the warnings logged by the package while training).
  """
  from agents.training import trainer
  config = tiny_run.tiny_config('balloon', wind='procedural', **{
      'environment.num_agents': 2, 'environment.processes': False,
      'environment.max_episode_steps': 8, 'loop.steps': 32, 'loop.log_every': 16,
      'algorithm.segment_length': 16, 'loop.steps_per_call': 16, 'loop.eval_every': 16,
      'loop.eval_steps': 16, 'loop.eval_suite': 'custom:seeds=0-2,episode_length=6'})
  run_dir = tempfile.mkdtemp(prefix='tiny-balloon-')
  handler = _Warnings()
  logger = logging.getLogger('agents')
  logger.addHandler(handler)
  try:
    # A fresh record of the keys logged, so that a key dropped earlier in this process
    # (another test's environment) would be logged, and seen, again.
    with mock.patch.object(space_spec, '_REPORTED', set()):
      trainer.train(config, run_dir, quiet=True)
  finally:
    logger.removeHandler(handler)
  return run_dir, handler.messages


def tiny_balloon_run():
  return tiny_balloon_run_and_warnings()[0]


class TrainedPolicyTest(unittest.TestCase):

  def test_run_and_its_savedmodel_fly_the_same_episodes(self):
    run_dir = tiny_balloon_run()
    suite = suites.Suite('three', range(3), episode_length=8)
    from_run = runner.fly(f'run:{run_dir}', suite, suite.seeds, workers=0)
    from_export = runner.fly(f'savedmodel:{os.path.join(run_dir, "policy")}', suite,
                             suite.seeds, workers=0)
    self.assertEqual(from_run, from_export)
    self.assertEqual(sorted(r.seed for r in from_run), [0, 1, 2])

  def test_the_batch_acts_as_the_training_graph_does(self):
    run_dir = tiny_balloon_run()
    slab = BalloonVectorEnv(2, wind='procedural')
    observations, _ = slab.reset(seed=[suites.episode_seed(5), suites.episode_seed(6)])
    batched = policies.make_policy(f'run:{run_dir}', 8)
    trained = DeterministicPolicy(run_dir)  # algorithm.perform, as in training
    trained.begin_episode([0, 1])
    np.testing.assert_array_equal(batched(np.tile(observations, (4, 1)))[:2],
                                  trained(observations))

  def test_a_run_of_another_environment_is_refused(self):
    run_dir, _ = tiny_run.tiny_run()  # CartPole
    with self.assertRaisesRegex(EvaluationError, 'trained on CartPole-v1'):
      policies.make_policy(f'run:{run_dir}', 2, env_id=constants.BALLOON_ENV_ID)
    # An exported policy's record (policy.yaml) names its environment.
    exported = tiny_run.policy_copy()
    self.assertEqual(policies.resolve_env_id(f'savedmodel:{exported}'), 'CartPole-v1')
    with self.assertRaisesRegex(EvaluationError, 'was trained on CartPole-v1'):
      policies.make_policy(f'savedmodel:{exported}', 2, env_id=constants.BALLOON_ENV_ID)
    # Without a record it flies the default environment, the balloon, and is refused.
    os.remove(os.path.join(exported, 'policy.yaml'))
    with self.assertRaisesRegex(EvaluationError, r'shape \(None, 4\)'):
      policies.make_policy(f'savedmodel:{exported}', 2)

  def test_training_logs_twr50_and_failure_rates_without_dropped_info_warnings(self):
    run_dir, warnings = tiny_balloon_run_and_warnings()
    self.assertFalse([message for message in warnings if 'not exposed' in message], warnings)
    with open(os.path.join(run_dir, 'metrics.jsonl')) as file:
      rows = [json.loads(line) for line in file]
    train_rows = [row for row in rows if row['phase'] == 'train' and row['episodes']]
    self.assertTrue(train_rows, rows)
    for row in train_rows:
      self.assertTrue(0.0 <= row['twr50'] <= 1.0, row)
      for name in ('out_of_power_rate', 'envelope_burst_rate', 'zeropressure_rate'):
        self.assertIn(name, row)

  def test_eval_suite_rows_after_each_eval_phase(self):
    run_dir, _ = tiny_balloon_run_and_warnings()
    with open(os.path.join(run_dir, 'metrics.jsonl')) as file:
      rows = [json.loads(line) for line in file if '"eval_suite"' in line]
    self.assertEqual(len(rows), 2)  # two eval phases in 32 training steps, one every 16
    for row in rows:
      self.assertEqual((row['suite'], row['episodes']), ('custom:seeds=0-2,episode_length=6', 3))
      self.assertTrue(row['twr50_ci95_low'] <= row['twr50'] <= row['twr50_ci95_high'])

  def test_a_bad_eval_suite_is_refused_before_anything_is_written(self):
    from agents import configs
    from agents.training import trainer
    run_dir = os.path.join(tempfile.mkdtemp(), 'run')
    for overrides, message in (
        ({'loop.eval_suite': 'huge_eval'}, "loop.eval_suite.*unknown suite 'huge_eval'"),):
      config = tiny_run.tiny_config('balloon', wind='procedural',
                                    **{'loop.eval_every': 64, **overrides})
      with self.assertRaisesRegex(configs.ConfigError, message):
        trainer.train(config, run_dir, quiet=True)
    config = tiny_run.tiny_config('cartpole', **{'loop.eval_every': 64,
                                                 'loop.eval_suite': 'custom:wind=static'})
    with self.assertRaisesRegex(configs.ConfigError, 'option wind=static'):
      trainer.train(config, run_dir, quiet=True)
    self.assertFalse(os.path.exists(run_dir))

  def test_a_named_checkpoint_that_does_not_exist(self):
    with self.assertRaisesRegex(EvaluationError, 'ckpt-999.* does not exist'):
      policies.make_policy(f'run:{tiny_balloon_run()}', 2, checkpoint='ckpt-999')


  def test_a_damaged_newest_checkpoint_is_skipped_for_the_one_before(self):
    import shutil
    run_dir = tempfile.mkdtemp(prefix='damaged-')
    shutil.copytree(tiny_run.tiny_run()[0], run_dir, dirs_exist_ok=True)  # 2 checkpoints
    directory = os.path.join(run_dir, 'checkpoints')
    prefixes = sorted({name.split('.')[0] for name in os.listdir(directory)
                       if name.startswith('ckpt-')}, key=lambda name: int(name[5:]))
    self.assertGreaterEqual(len(prefixes), 2)
    data = [name for name in os.listdir(directory)
            if name.startswith(prefixes[-1] + '.data')][0]
    with open(os.path.join(directory, data), 'r+b') as file:
      file.truncate(8)
    with self.assertLogs('agents', logging.WARNING) as logs:
      path = policies.resolve_checkpoint(run_dir)
    self.assertEqual(os.path.basename(path), prefixes[-2])
    self.assertIn(f'Skipped checkpoint {os.path.join(directory, prefixes[-1])}',
                  logs.output[0])

if __name__ == '__main__':
  unittest.main()
