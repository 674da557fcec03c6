"""Tests of agents/algorithms/ppo/utility.py against hand-computed returns and advantages."""

import unittest

import numpy as np
import tensorflow as tf

from agents.algorithms.ppo import utility


def _columns(*columns):
  """Stacks per-environment sequences into a time-major [T, B] array."""
  return np.stack(columns, 1)


def _returns(reward, next_value, terminated, truncated, discount):
  """Discounted returns in NumPy, bootstrapped at truncation and at the segment end."""
  returns = np.zeros_like(reward)
  future = next_value[-1]
  for t in reversed(range(len(reward))):
    cut = terminated[t] | truncated[t] | (t == len(reward) - 1)
    future = np.where(cut, next_value[t], future)
    returns[t] = reward[t] + discount * (1.0 - terminated[t]) * future
    future = returns[t]
  return returns


class LambdaAdvantageTest(unittest.TestCase):

  def test_lambda_one_equals_return_minus_value(self):
    rng = np.random.default_rng(0)
    reward = rng.normal(size=(6, 3)).astype(np.float32)
    value = rng.normal(size=(6, 3)).astype(np.float32)
    next_value = rng.normal(size=(6, 3)).astype(np.float32)
    terminated = np.zeros((6, 3), bool)
    truncated = np.zeros((6, 3), bool)
    terminated[2, 0] = True
    truncated[3, 1] = True
    # Inside an episode the next observation is the next step's observation.
    done = terminated | truncated
    next_value[:-1] = np.where(done[:-1], next_value[:-1], value[1:])
    advantage = utility.lambda_advantage(reward, value, next_value, terminated, truncated,
                                         0.95, 1.0)
    returns = _returns(reward, next_value, terminated, truncated, 0.95)
    np.testing.assert_allclose(advantage.numpy(), returns - value, rtol=1e-5,
                               atol=1e-5)

  def test_lambda_zero_is_td_error(self):
    reward = _columns([1.0, 2.0])
    value = _columns([0.5, 1.5])
    next_value = _columns([1.5, 3.0])
    terminated = _columns([False, True])
    truncated = _columns([False, False])
    advantage = utility.lambda_advantage(reward, value, next_value, terminated, truncated,
                                         0.9, 0.0)
    np.testing.assert_allclose(advantage.numpy()[:, 0], [1.0 + 0.9 * 1.5 - 0.5, 2.0 - 1.5])

  def test_hand_computed_gae_with_truncation_and_varied_lengths(self):
    gamma, lam = 0.9, 0.5
    # Env 0: steps 0-1 form an episode truncated at t=1 (bootstrap 10), steps
    # 2-3 a new episode that terminates at t=3.
    reward = _columns([1.0, 1.0, 2.0, 2.0])
    value = _columns([2.0, 3.0, 1.0, 1.0])
    next_value = _columns([3.0, 10.0, 1.0, 99.0])
    terminated = _columns([False, False, False, True])
    truncated = _columns([False, True, False, False])
    delta = [1.0 + gamma * 3.0 - 2.0, 1.0 + gamma * 10.0 - 3.0,
             2.0 + gamma * 1.0 - 1.0, 2.0 - 1.0]
    expected = [delta[0] + gamma * lam * delta[1], delta[1],
                delta[2] + gamma * lam * delta[3], delta[3]]
    advantage = utility.lambda_advantage(reward, value, next_value, terminated, truncated,
                                         gamma, lam)
    np.testing.assert_allclose(advantage.numpy()[:, 0], expected, rtol=1e-6)

  def test_transpose_of_booleans_is_tf_transpose(self):
    flags = tf.constant([[True, False, False], [False, True, True]])
    for perm in (None, [1, 0]):
      transposed = utility.transpose(flags, perm)
      self.assertEqual(transposed.dtype, tf.bool)
      np.testing.assert_array_equal(transposed, np.transpose(flags.numpy(), perm))

  def test_explained_variance(self):
    target = tf.constant([1.0, 2.0, 3.0, 4.0])
    self.assertAlmostEqual(float(utility.explained_variance(target, target)), 1.0)
    mean = tf.fill([4], 2.5)
    self.assertAlmostEqual(float(utility.explained_variance(mean, target)), 0.0)


if __name__ == '__main__':
  unittest.main()
