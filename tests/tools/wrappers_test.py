"""Tests of agents/tools/wrappers.py."""

import unittest

import gymnasium
import numpy as np

from agents.tools import errors, wrappers
from tests.tools import fake_envs


class BoxEnv(gymnasium.Env):
  """Echoes its action: observation = action, reward = 1, terminates after `length` steps."""

  def __init__(self, low=-2.0, high=6.0, length=10, dtype=np.float64):
    self.observation_space = gymnasium.spaces.Box(low, high, (2,), dtype)
    self.action_space = gymnasium.spaces.Box(low, high, (2,), dtype)
    self.length = length
    self.actions = []

  def reset(self, *, seed=None, options=None):
    super().reset(seed=seed)
    self.actions = []
    return np.full(2, self.observation_space.low[0], self.observation_space.dtype), {}

  def step(self, action):
    self.actions.append(np.asarray(action))
    observ = np.asarray(action, self.observation_space.dtype)
    return observ, 1.0, len(self.actions) >= self.length, False, {}


class RangeNormalizeTest(unittest.TestCase):

  def test_maps_finite_boxes_to_unit_range(self):
    env = wrappers.RangeNormalize(BoxEnv(-2.0, 6.0))
    self.assertEqual(env.observation_space, gymnasium.spaces.Box(-1, 1, (2,), np.float32))
    self.assertEqual(env.action_space, gymnasium.spaces.Box(-1, 1, (2,), np.float32))
    observ, _ = env.reset()
    np.testing.assert_allclose(observ, [-1, -1])
    observ, *_ = env.step(np.array([0.0, 1.0]))
    np.testing.assert_allclose(env.unwrapped.actions[-1], [2.0, 6.0])
    np.testing.assert_allclose(observ, [0.0, 1.0], atol=1e-6)

  def test_leaves_unbounded_spaces_alone_and_rejects_forced_normalization(self):
    env = wrappers.RangeNormalize(fake_envs.CountingEnv())
    self.assertEqual(env.observation_space, fake_envs.CountingEnv().observation_space)
    with self.assertRaises(ValueError):
      wrappers.RangeNormalize(fake_envs.CountingEnv(), observ=True)


class ClipActionTest(unittest.TestCase):

  def test_advertises_unbounded_space_and_clips(self):
    env = wrappers.ClipAction(BoxEnv(-1.0, 1.0))
    self.assertTrue(np.all(np.isinf(env.action_space.high)))
    env.reset()
    env.step(np.array([5.0, -5.0]))
    np.testing.assert_array_equal(env.unwrapped.actions[-1], [1.0, -1.0])


class ConvertTo32BitTest(unittest.TestCase):

  def test_converts_dtypes(self):
    env = wrappers.ConvertTo32Bit(BoxEnv(dtype=np.float64))
    self.assertEqual(env.observation_space.dtype, np.float32)
    observ, _ = env.reset()
    self.assertEqual(observ.dtype, np.float32)
    observ, reward, *_ = env.step(np.array([1.0, 2.0]))
    self.assertEqual(observ.dtype, np.float32)
    self.assertIsInstance(reward, np.float32)

  def test_non_finite_observation_names_field_environment_and_step(self):
    env = wrappers.ConvertTo32Bit(fake_envs.FaultyEnv('nan', at_step=3), index=4)
    env.reset(seed=0)
    env.step(0)
    env.step(0)
    with self.assertRaises(errors.NonFiniteError) as context:
      env.step(0)
    error = context.exception
    self.assertEqual((error.field, error.index, error.step), ('observation', 4, 3))
    self.assertIn('environment 4', str(error))
    self.assertIn('step 3', str(error))

  def test_non_finite_reward_is_an_error(self):
    class InfiniteReward(BoxEnv):
      def step(self, action):
        observ, _, terminated, truncated, info = super().step(action)
        return observ, float('inf'), terminated, truncated, info
    env = wrappers.ConvertTo32Bit(InfiniteReward())
    env.reset()
    with self.assertRaises(errors.NonFiniteError) as context:
      env.step(np.zeros(2))
    self.assertEqual(context.exception.field, 'reward')


class FrameWrappersTest(unittest.TestCase):

  def test_frame_history_picks_past_steps(self):
    env = wrappers.FrameHistory(BoxEnv(-10.0, 10.0), past_indices=[0, 1, 3])
    self.assertEqual(env.observation_space.shape, (3, 2))
    observ, _ = env.reset()
    np.testing.assert_array_equal(observ[:, 0], [-10, -10, -10])
    for value in [1.0, 2.0, 3.0, 4.0]:
      observ, *_ = env.step(np.full(2, value))
    np.testing.assert_array_equal(observ[:, 0], [4, 3, 1])
    flat = wrappers.FrameHistory(BoxEnv(-10.0, 10.0), past_indices=[0, 1], flatten=True)
    self.assertEqual(flat.observation_space.shape, (4,))
    self.assertEqual(flat.reset()[0].shape, (4,))

  def test_frame_delta(self):
    env = wrappers.FrameDelta(BoxEnv(-2.0, 6.0))
    np.testing.assert_array_equal(env.observation_space.high, [8, 8])
    np.testing.assert_array_equal(env.reset()[0], [0, 0])
    observ, *_ = env.step(np.array([1.0, 3.0]))
    np.testing.assert_array_equal(observ, [3.0, 5.0])

  def test_action_repeat_sums_rewards_and_stops_at_episode_end(self):
    env = wrappers.ActionRepeat(BoxEnv(length=5), 3)
    env.reset()
    _, reward, terminated, _, _ = env.step(np.zeros(2))
    self.assertEqual((reward, terminated, len(env.unwrapped.actions)), (3.0, False, 3))
    _, reward, terminated, _, _ = env.step(np.zeros(2))
    self.assertEqual((reward, terminated, len(env.unwrapped.actions)), (2.0, True, 5))

  def test_cache_spaces_and_time_limit(self):
    env = wrappers.CacheSpaces(wrappers.TimeLimit(BoxEnv(length=100), max_episode_steps=2))
    self.assertIs(env.observation_space, env.observation_space)
    env.reset()
    self.assertFalse(env.step(np.zeros(2))[3])
    self.assertTrue(env.step(np.zeros(2))[3])


if __name__ == '__main__':
  unittest.main()
