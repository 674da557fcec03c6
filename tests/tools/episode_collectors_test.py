"""Tests of agents/tools/episode_collectors.py: the interface, the registry, the means."""

import unittest

import numpy as np

from agents import plugins
from agents.configs import sections
from agents.tools import episode_collectors


class EpisodeCountCollector(episode_collectors.EpisodeCollector):
  """Counts finished episodes and sums their lengths."""

  info_keys = ('lives',)

  def __init__(self, batch_size):
    self.length = np.zeros(batch_size, np.int64)
    self.finished = self.total = 0

  def reset(self, indices):
    self.length[indices] = 0

  def step(self, reward, terminated, truncated, infos):
    self.length += 1
    done = np.flatnonzero(terminated | truncated)
    self.finished += len(done)
    self.total += int(self.length[done].sum())

  def totals(self):
    return {'length': (self.finished, float(self.total))}


class _CountingPlugin(plugins.EnvironmentPlugin):

  def episode_collectors(self, environment, batch_size):
    del environment
    return [EpisodeCountCollector(batch_size)]


class EpisodeCollectorsTest(unittest.TestCase):

  def test_an_environment_gets_the_collectors_its_id_registers(self):
    plugins.ENVIRONMENTS.register('Counting-v0', _CountingPlugin())
    self.addCleanup(plugins.ENVIRONMENTS.unregister, 'Counting-v0')
    collectors = episode_collectors.for_environment(sections.EnvironmentConfig(id='Counting-v0'), 3)
    self.assertIsInstance(collectors[0], EpisodeCountCollector)
    self.assertEqual(collectors[0].length.shape, (3,))
    self.assertEqual(episode_collectors.handled_info_keys(collectors), {'lives'})
    cartpole = sections.EnvironmentConfig(id='CartPole-v1')
    self.assertEqual(episode_collectors.for_environment(cartpole, 3), [])

  def test_means_are_over_the_episodes_since_the_mark(self):
    collector = EpisodeCountCollector(2)
    no, yes = np.zeros(2, bool), np.array([True, False])
    collector.step(0, no, no, {})
    collector.step(0, yes, no, {})
    mark = collector.totals()
    collector.reset(np.array([0]))
    collector.step(0, no, np.array([False, True]), {})
    self.assertEqual(episode_collectors.means(collector.totals(), {}), {'length': 2.5})
    self.assertEqual(episode_collectors.means(collector.totals(), mark), {'length': 3.0})
    self.assertEqual(episode_collectors.means(mark, mark), {'length': None})


if __name__ == '__main__':
  unittest.main()
