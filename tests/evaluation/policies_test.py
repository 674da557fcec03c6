"""Tests for agents/evaluation/policies.py: which environment an agent flies, checkpoints."""

import os
import tempfile
import unittest

import tensorflow as tf

from agents import configs
from agents.env.balloon import constants
from agents.evaluation import policies
from agents.evaluation.errors import EvaluationError
from agents.run import checkpoints


def _run_with_checkpoints(steps, config_name='cartpole'):
  """A run directory with config.yaml and one (tiny) checkpoint per step."""
  run_dir = tempfile.mkdtemp()
  configs.save_yaml(configs.resolve(config_name), os.path.join(run_dir, 'config.yaml'))
  variable = tf.Variable(0, dtype=tf.int64)
  checkpoint = tf.train.Checkpoint(variable=variable)
  manager = tf.train.CheckpointManager(checkpoint, os.path.join(run_dir, 'checkpoints'),
                                       max_to_keep=10, checkpoint_name='ckpt')
  for step in steps:
    variable.assign(step)
    manager.save(checkpoint_number=step)
  return run_dir


class ResolveCheckpointTest(unittest.TestCase):

  def test_a_damaged_newest_checkpoint_is_skipped(self):
    run_dir = _run_with_checkpoints([10, 20])
    newest = os.path.join(run_dir, 'checkpoints', 'ckpt-20')
    self.assertEqual(policies.resolve_checkpoint(run_dir), newest)
    os.truncate(f'{newest}.data-00000-of-00001', 10)  # a kill during the save
    with self.assertLogs(checkpoints._LOG, 'WARNING') as logs:
      path = policies.resolve_checkpoint(run_dir)
    self.assertEqual(os.path.basename(path), 'ckpt-10')
    self.assertIn('ckpt-20: it does not restore', logs.output[0])

  def test_every_checkpoint_damaged_is_an_evaluation_error(self):
    run_dir = _run_with_checkpoints([10])
    os.truncate(os.path.join(run_dir, 'checkpoints', 'ckpt-10.index'), 5)
    with self.assertRaisesRegex(EvaluationError, 'ckpt-10'):
      policies.resolve_checkpoint(run_dir)


class ResolveEnvTest(unittest.TestCase):

  def test_the_callers_then_the_agents_then_the_default_environment(self):
    run_dir = _run_with_checkpoints([1])
    self.assertEqual(policies.resolve_env_id(f'run:{run_dir}'), 'CartPole-v1')
    self.assertEqual(policies.resolve_env_id('station_seeker'), constants.BALLOON_ENV_ID)
    self.assertEqual(policies.resolve_env_id('random'), constants.BALLOON_ENV_ID)
    self.assertEqual(policies.resolve_env_id('random', 'Pendulum-v1'), 'Pendulum-v1')
    with self.assertRaisesRegex(EvaluationError, 'unknown agent .*station_seeker'):
      policies.resolve_env_id('station_keeper')

  def test_random_acts_in_any_action_space(self):
    policy = policies.make_policy('random', 3, env_id='Pendulum-v1')
    policy.begin_episode([0, 1, 2], seeds=[0, 1, 0])
    actions = policy(None)
    self.assertEqual(actions.shape, (3, 1))
    self.assertEqual(actions[0, 0], actions[2, 0])


if __name__ == '__main__':
  unittest.main()
