"""Tests of agents/env/balloon/reward.py: the reward values of balloon.md §12."""

import unittest

import numpy as np

from agents.env.balloon import constants, reward

DOWN, STAY = constants.DOWN, constants.STAY


class RewardTest(unittest.TestCase):

  def test_distance_shape(self):
    distance = np.array([0.0, 50.0, 50.0001, 150.0, 250.0])
    got = reward.station_keeping_reward(distance * 600.0, distance * 800.0, np.full(5, STAY),
                                        np.zeros(5, bool), np.zeros(5))
    np.testing.assert_allclose(got, [1.0, 1.0, 0.4, 0.2, 0.1], atol=1e-6)

  def test_descent_penalty(self):
    got = reward.station_keeping_reward(
        np.array([10e3, 10e3, 10e3, 10e3, 150e3, 10e3]), np.zeros(6),
        np.array([DOWN, DOWN, DOWN, DOWN, DOWN, STAY]),
        np.array([False, False, False, True, False, False]),
        np.array([100.0, 200.0, 400.0, 400.0, 0.0, 400.0]))
    np.testing.assert_allclose(got, [0.95, 0.8, 0.65, 1.0, 0.2 * 0.95, 1.0])


if __name__ == '__main__':
  unittest.main()
