"""Tests of agents/env/balloon/physics/reward.py: the reward values of balloon.md §12."""

import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import reward

DOWN, STAY = constants.DOWN, constants.STAY


class RewardTest(unittest.TestCase):

  def test_distance_shape(self):
    distance = np.array([0.0, 50.0, 50.0001, 150.0, 250.0])
    got = reward.station_keeping_reward(distance * 600.0, distance * 800.0, np.full(5, STAY),
                                        np.zeros(5, bool), np.zeros(5))
    np.testing.assert_allclose(got, [1.0, 1.0, 0.4, 0.2, 0.1], atol=1e-6)

  def test_distance_reward_matches_the_exact_reward_without_penalty(self):
    distance_km = np.array([[0.0, 49.9, 50.0, 50.0001], [75.0, 150.0, 250.0, 1234.5]])
    x, y = distance_km.ravel() * 600.0, distance_km.ravel() * 800.0
    exact = reward.station_keeping_reward(x, y, np.full(8, STAY), np.zeros(8, bool),
                                          np.zeros(8))
    got = reward.distance_reward(distance_km)
    self.assertEqual(got.shape, (2, 4))
    np.testing.assert_allclose(got.ravel(), exact, rtol=1e-9)
    single = reward.distance_reward(distance_km, np.float32)
    self.assertEqual(single.dtype, np.float32)
    np.testing.assert_allclose(single.ravel(), exact, rtol=1e-6)

  def test_descent_penalty(self):
    got = reward.station_keeping_reward(
        np.array([10e3, 10e3, 10e3, 10e3, 150e3, 10e3]), np.zeros(6),
        np.array([DOWN, DOWN, DOWN, DOWN, DOWN, STAY]),
        np.array([False, False, False, True, False, False]),
        np.array([100.0, 200.0, 400.0, 400.0, 0.0, 400.0]))
    np.testing.assert_allclose(got, [0.95, 0.8, 0.65, 1.0, 0.2 * 0.95, 1.0])

class ProgressRewardTest(unittest.TestCase):
  """The optional shaped training reward: BLE's reward plus w per km gained."""

  def _flight(self, progress_reward, steps=6):
    from agents.env.balloon import env
    slab = env.BalloonVectorEnv(num_envs=3, progress_reward=progress_reward,
                                wind='procedural')
    slab.reset(seed=11)
    distance = np.hypot(slab.read_state()['x'], slab.read_state()['y']) / 1000.0
    distances, rewards = [distance], []
    for step in range(steps):
      _, got, _, _, infos = slab.step(np.array([step % 3, 2, 0]))
      rewards.append(got)
      distances.append(infos['distance_km'])
    slab.close()
    return np.array(rewards), np.array(distances)

  def test_adds_weight_times_km_gained_to_bles_reward(self):
    ble_rewards, distances = self._flight(0.0)
    shaped, shaped_distances = self._flight(0.25)
    np.testing.assert_array_equal(shaped_distances, distances)  # Same flight.
    gained_km = distances[:-1] - distances[1:]
    np.testing.assert_allclose(shaped - ble_rewards, 0.25 * gained_km, rtol=0, atol=1e-12)
    # Over a flight it telescopes to w times (first - last distance).
    np.testing.assert_allclose((shaped - ble_rewards).sum(axis=0),
                               0.25 * (distances[0] - distances[-1]), rtol=0, atol=1e-9)

  def test_default_is_bles_reward(self):
    from agents.env.balloon import env
    slab = env.BalloonVectorEnv(num_envs=1, wind='procedural')
    self.assertEqual(slab.simulator.progress_reward, 0.0)

  def test_bad_weight_is_refused_by_name(self):
    for bad, error in ((-0.1, ValueError), (float('nan'), ValueError), ('0.1', TypeError),
                       (True, TypeError)):
      with self.assertRaisesRegex(error, 'progress_reward'):
        reward.check_progress_weight(bad)


if __name__ == '__main__':
  unittest.main()
