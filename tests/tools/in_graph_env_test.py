"""Tests of InGraphEnv, the single-environment in-graph wrapper."""

import unittest

import gymnasium
import numpy as np
import tensorflow as tf

from agents.tools import in_graph_env
from tests.tools import mock_environment


class InGraphEnvTest(unittest.TestCase):

  def test_variables_have_no_batch_dimension_and_done_starts_true(self):
    env = in_graph_env.InGraphEnv(mock_environment.MockEnvironment([2]))
    self.assertEqual(env.observ.shape, (2,))
    self.assertEqual(env.action.shape, (1,))
    self.assertEqual(env.reward.shape, ())
    self.assertTrue(bool(env.done.numpy()))

  def test_reset_and_simulate_inside_a_tf_function(self):
    mock = mock_environment.MockEnvironment([2], truncated=[True])
    env = in_graph_env.InGraphEnv(mock, info_specs={'episode_step': ((), tf.int64)}, seed=3)

    @tf.function
    def run_episode():
      env.reset()
      env.simulate(tf.constant([0.5]))
      return env.simulate(tf.constant([0.25]))

    observ, reward, terminated, truncated = run_episode()
    np.testing.assert_array_equal(observ, [0, 2])
    self.assertEqual(float(reward), 1.0)
    self.assertFalse(bool(terminated))
    self.assertTrue(bool(truncated))
    self.assertTrue(bool(env.done.numpy()))
    self.assertEqual(int(env.infos['episode_step'].numpy()), 2)
    np.testing.assert_array_equal(env.action.numpy(), [0.25])
    self.assertEqual(mock.seeds, [3])
    run_episode()
    self.assertEqual(mock.seeds, [3, None])

  def test_discrete_actions_and_shape_errors(self):
    mock = mock_environment.MockEnvironment([2], action_space=gymnasium.spaces.Discrete(4))
    env = in_graph_env.InGraphEnv(mock)
    env.reset()
    env.simulate(tf.constant(3, tf.int32))
    self.assertEqual(int(mock.actions[0]), 3)
    with self.assertRaisesRegex(ValueError, 'Discrete'):
      env.simulate(tf.constant([3]))
    with self.assertRaisesRegex(TypeError, 'float32'):
      env.simulate(tf.constant(1.0))


if __name__ == '__main__':
  unittest.main()
