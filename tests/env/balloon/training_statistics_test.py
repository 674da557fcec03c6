"""Tests of agents/env/balloon/training_statistics.py and the collectors it registers."""

import unittest

import numpy as np

from agents.configs import sections
from agents.env.balloon import training_statistics as balloon_collectors
from agents.tools import episode_collectors


def _infos(distance_km, out_of_power=(False, False)):
  return {'distance_km': np.array(distance_km),
          'out_of_power': np.array(out_of_power),
          'envelope_burst': np.zeros(2, bool), 'zeropressure': np.zeros(2, bool)}


class BalloonCollectorTest(unittest.TestCase):

  def test_twr50_and_failure_rates_of_finished_episodes(self):
    collector = balloon_collectors.BalloonCollector(2, episode_length=4)
    collector.reset(np.array([0, 1]))
    no = np.zeros(2, bool)
    collector.step(np.zeros(2), no, no, _infos([10.0, 80.0]))
    collector.step(np.zeros(2), no, no, _infos([20.0, 40.0]))
    # Balloon 1 runs out of power at its third step; balloon 0 flies its 4 steps.
    collector.step(np.zeros(2), np.array([False, True]), no, _infos([60.0, 30.0], (False, True)))
    mark = collector.totals()
    collector.reset(np.array([1]))
    collector.step(np.zeros(2), no, np.array([True, False]), _infos([30.0, 90.0]))
    totals = collector.totals()
    self.assertEqual(totals['twr50'], (2, 2 / 4 + 3 / 4))
    self.assertEqual(totals['out_of_power_rate'], (2, 1.0))
    means = episode_collectors.means(totals, mark)
    self.assertEqual((means['twr50'], means['out_of_power_rate']), (3 / 4, 0.0))
    self.assertEqual(episode_collectors.means(totals, totals)['twr50'], None)

  def test_handled_keys_and_defaults(self):
    collectors = episode_collectors.for_environment(
        sections.EnvironmentConfig(id='BalloonLearningEnvironment-v0'), 4)
    self.assertEqual(len(collectors), 1)
    self.assertIn('distance_km', episode_collectors.handled_info_keys(collectors))
    self.assertIn('battery_soc', episode_collectors.handled_info_keys(collectors))
    cartpole = sections.EnvironmentConfig(id='CartPole-v1')
    self.assertEqual(episode_collectors.for_environment(cartpole, 4), [])


if __name__ == '__main__':
  unittest.main()
