"""Tests of RandomAlgorithm, the worked example of the algorithm interface."""

import os
import shutil
import tempfile
import unittest

import gymnasium
import numpy as np
import tensorflow as tf

from agents.algorithms import random_algorithm
from agents.tools import batch_env as batch_env_lib
from agents.tools import in_graph_batch_env, mock_environment
from agents.tools import loop as loop_lib


def _batch(action_space, durations=([2], [3], [4])):
  envs = [mock_environment.MockEnvironment(d, action_space=action_space) for d in durations]
  return envs, in_graph_batch_env.InGraphBatchEnv(
      batch_env_lib.BatchEnv(envs), info_specs=mock_environment.INFO_SPECS)


class RandomAgentTest(unittest.TestCase):

  def test_box_actions_are_uniform_within_the_bounds(self):
    space = gymnasium.spaces.Box(np.array([-2.0, 0.0], np.float32),
                                 np.array([2.0, 0.5], np.float32))
    agent = random_algorithm.RandomAlgorithm(500, space, seed=1)
    actions = agent.perform(tf.range(500), tf.zeros([500, 2])).numpy()
    self.assertEqual(actions.shape, (500, 2))
    self.assertTrue(np.all(actions >= space.low) and np.all(actions <= space.high))
    np.testing.assert_allclose(actions.mean(0), [0.0, 0.25], atol=0.1)

  def test_discrete_actions_cover_the_space(self):
    space = gymnasium.spaces.Discrete(3, start=1)
    agent = random_algorithm.RandomAlgorithm(300, space, seed=1)
    actions = agent.perform(tf.range(300), tf.zeros([300, 2])).numpy()
    self.assertEqual(set(actions.tolist()), {1, 2, 3})

  def test_same_seed_gives_the_same_actions(self):
    space = gymnasium.spaces.Discrete(5)
    first, second = (
        random_algorithm.RandomAlgorithm(8, space, seed=7).perform(tf.range(8), tf.zeros([8, 2]))
        for _ in range(2))
    np.testing.assert_array_equal(first, second)

  def test_unbounded_box_is_rejected(self):
    with self.assertRaisesRegex(TypeError, 'bounded'):
      random_algorithm.RandomAlgorithm(2, gymnasium.spaces.Box(-np.inf, np.inf, (1,), np.float32))

  def test_counts_episodes_per_phase_in_a_loop(self):
    logdir = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, logdir)
    envs, batch = _batch(gymnasium.spaces.Box(-1, 1, (1,), np.float32))
    loop = loop_lib.Loop(logdir)
    agent = random_algorithm.RandomAlgorithm(len(batch), batch.action_space,
                                             is_training=loop.is_training)
    loop.add_phase('train', batch, agent, steps=36, is_training=True, steps_per_call=4)
    loop.add_phase('eval', batch, agent, steps=12, is_training=False, steps_per_call=4)
    loop.run(48)
    # 12 train steps per env: 6 + 4 + 3 episodes; 4 eval steps: 2 + 1 + 1.
    self.assertEqual(int(agent.training_episodes.numpy()), 13)
    self.assertEqual(int(agent.evaluation_episodes.numpy()), 4)
    self.assertTrue(all(-1 <= float(a[0]) <= 1 for env in envs for a in env.actions))
    self.assertTrue(os.listdir(os.path.join(logdir, 'train')))


if __name__ == '__main__':
  unittest.main()
