"""Tests for agents/python_agents/episode_statistics.py: per-episode values, row by row."""

import unittest

import numpy as np

from agents.python_agents.episode_statistics import CollectorStatistics

BALLOON = 'BalloonLearningEnvironment-v0'


def infos(distances, burst=(False, False, False)):
  size = len(distances)
  return {'distance_km': np.asarray(distances, float),
          'out_of_power': np.zeros(size, bool), 'envelope_burst': np.asarray(burst),
          'zeropressure': np.zeros(size, bool)}


def flags(*rows, size=3):
  mask = np.zeros(size, bool)
  mask[list(rows)] = True
  return mask


class CollectorStatisticsTest(unittest.TestCase):

  def test_rows_that_end_together_get_their_own_values(self):
    statistics = CollectorStatistics(BALLOON, 3, episode_length=4)
    statistics.reset(np.arange(3))
    none = np.zeros(3, bool)
    reward = np.zeros(3)
    # Row 0 is within 50 km for 2 steps, row 1 for 1 step, row 2 for 3 steps.
    self.assertEqual(statistics.step(reward, none, none, infos([10, 10, 10]), []), {})
    statistics.step(reward, none, none, infos([10, 90, 10]), [])
    ended = statistics.step(reward, flags(0), flags(2), infos([90, 90, 10], (True, 0, 0)),
                            np.array([0, 2]))
    self.assertEqual(ended[0], {'twr50': 0.5, 'out_of_power_rate': 0.0,
                                'envelope_burst_rate': 1.0, 'zeropressure_rate': 0.0})
    self.assertEqual(ended[2]['twr50'], 0.75)
    self.assertEqual(ended[2]['envelope_burst_rate'], 0.0)
    alone = statistics.step(reward, none, flags(1), infos([90, 90, 90]), np.array([1]))
    self.assertEqual(alone[1]['twr50'], 0.25)

  def test_an_environment_without_collectors_has_no_statistics(self):
    statistics = CollectorStatistics('CartPole-v1', 2, episode_length=10)
    self.assertEqual(statistics.names, [])
    none = np.zeros(2, bool)
    self.assertEqual(statistics.step(np.zeros(2), none, none, {}, np.array([1])), {1: {}})


if __name__ == '__main__':
  unittest.main()
