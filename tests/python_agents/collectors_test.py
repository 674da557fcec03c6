"""Tests for agents/python_agents/collectors.py: BLE's collectors and their dispatcher."""

import json
import os
import pickle
import tempfile
import unittest

import numpy as np

from agents.python_agents import collectors
from agents.python_agents.agent import CollectorError


class Recorder(collectors.Collector):
  """Records every call it gets, as a BLE user's collector might."""

  def __init__(self, base_dir, num_actions, current_episode):
    super().__init__(base_dir, num_actions, current_episode)
    self.calls = []

  def get_name(self):
    return 'recorder'

  def pre_training(self):
    self.calls.append('pre_training')

  def begin_episode(self):
    self.calls.append('begin_episode')

  def step(self, statistics):
    self.calls.append(('step', statistics.step, statistics.action, statistics.reward,
                       statistics.terminal))

  def end_episode(self, statistics):
    self.calls.append(('end_episode', statistics.step, statistics.terminal,
                       statistics.episode_statistics))
    self.current_episode += 1

  def end_training(self):
    self.calls.append('end_training')


class Broken(Recorder):

  def get_name(self):
    return 'broken'

  def step(self, statistics):
    raise KeyError('missing')


SUMMARY = {'episode': 4, 'iteration': 2, 'row': 1, 'length': 3, 'return': 1.5,
           'terminal': True, 'twr50': 0.25, 'out_of_power_rate': 0.0}


class DispatcherTest(unittest.TestCase):

  def test_a_finished_episode_is_replayed_as_bles_loop_reports_it(self):
    dispatcher = collectors.CollectorDispatcher(None, 3, [Recorder], 4)
    dispatcher.pre_training()
    dispatcher.record_episode(np.array([2, 1, 0]), np.array([0.5, 0.25, 0.75]), True, SUMMARY)
    dispatcher.end_training()
    self.assertEqual(dispatcher.collectors[0].calls, [
        'pre_training', 'begin_episode', ('step', 0, 2, 0.5, False),
        ('step', 1, 1, 0.25, False), ('step', 2, 0, 0.75, True),
        ('end_episode', 3, True, SUMMARY), 'end_training'])
    self.assertEqual(dispatcher.collectors[0].current_episode, 5)

  def test_a_raising_collector_is_named_with_the_call_and_episode(self):
    dispatcher = collectors.CollectorDispatcher(None, 3, [Recorder, Broken], 7)
    with self.assertRaisesRegex(CollectorError, r"collector 'broken \(Broken\)' raised in "
                                r"step\(\) at episode 7: KeyError: 'missing'"):
      dispatcher.record_episode(np.array([1]), np.array([0.0]), False, SUMMARY)

  def test_a_constructor_that_raises_is_named(self):
    def constructor(base_dir, num_actions, current_episode):
      raise OSError('read-only file system')

    with self.assertRaisesRegex(CollectorError, "'constructor' raised when constructed: "
                                'OSError: read-only'):
      collectors.CollectorDispatcher(None, 3, [constructor], 0)

  def test_statistics_instance_takes_bles_four_fields(self):
    statistics = collectors.StatisticsInstance(3, 1, 0.5, False)
    self.assertEqual((statistics.step, statistics.action, statistics.reward,
                      statistics.terminal, statistics.episode_statistics),
                     (3, 1, 0.5, False, None))

  def test_available_collectors_by_bles_names(self):
    self.assertEqual(sorted(collectors.AVAILABLE_COLLECTORS),
                     ['console', 'jsonl', 'pickle', 'tensorboard'])


class ShippedCollectorsTest(unittest.TestCase):

  def _fly(self, base_dir, constructor, current_episode=0):
    dispatcher = collectors.CollectorDispatcher(base_dir, 3, [constructor], current_episode)
    dispatcher.pre_training()
    dispatcher.record_episode(np.array([2, 2, 1]), np.array([0.5, 0.5, 0.5]), True,
                              dict(SUMMARY, episode=current_episode))
    dispatcher.end_training()
    return dispatcher.collectors[0]

  def test_console_logs_bles_line_then_the_statistics_once_per_episode(self):
    with tempfile.TemporaryDirectory() as base_dir:
      with self.assertLogs('absl', 'INFO') as logs:
        self._fly(base_dir, collectors.ConsoleCollector)
      with open(os.path.join(base_dir, 'metrics', 'console', 'console.log')) as file:
        logged = file.read()
    # The episode's return and action counts as flown: the last step is counted once.
    line = (f'Episode 0: reward: 0001.50, episode length: 3, action distribution: '
            f'{np.array([0, 1, 2]) / 3}, row: 1, twr50: 0.250, out_of_power_rate: 0.000')
    self.assertEqual([record.getMessage() for record in logs.records], [line])
    self.assertEqual(logged, line + '\n')

  def test_jsonl_writes_the_episode_and_drops_episodes_flown_again(self):
    with tempfile.TemporaryDirectory() as base_dir:
      for episode in (0, 1, 2):
        self._fly(base_dir, collectors.JsonLinesCollector, episode)
      self._fly(base_dir, collectors.JsonLinesCollector, 1)  # Resumed: 1 and 2 flown again.
      with open(os.path.join(base_dir, 'metrics', 'jsonl', 'episodes.jsonl')) as file:
        rows = [json.loads(line) for line in file]
    self.assertEqual([row['episode'] for row in rows], [0, 1])
    self.assertEqual(rows[0]['twr50'], 0.25)

  def test_tensorboard_logs_the_episode_scalars(self):
    from tests.helpers import events  # TensorFlow, only for this test
    with tempfile.TemporaryDirectory() as base_dir:
      collector = self._fly(base_dir, collectors.TensorboardCollector)
      # What a BLE agent does with the writer the loop gives it (flax's interface).
      collector.summary_writer.scalar('HuberLoss', np.float32(0.5), 7)
      collector.summary_writer.flush()
      directory = os.path.join(base_dir, 'metrics', 'tensorboard')
      tags = set()
      for name in os.listdir(directory):
        for event in events.events(os.path.join(directory, name)):
          tags.update(value.tag for value in event.summary.value)
    self.assertTrue({'Train/EpisodeReward', 'Train/EpisodeLength', 'Train/twr50',
                     'HuberLoss'} <= tags)

  def test_pickle_is_bles_format_when_asked_for(self):
    with tempfile.TemporaryDirectory() as base_dir:
      self._fly(base_dir, collectors.PickleCollector)
      with open(os.path.join(base_dir, 'metrics', 'pickle', 'pickle_0.pkl'), 'rb') as file:
        statistics = pickle.load(file)  # noqa: S301 - written by this test
    self.assertEqual(len(statistics), 4)  # Three steps and the end of the episode.
    self.assertIn('runs whatever code', collectors.PickleCollector.__doc__)


if __name__ == '__main__':
  unittest.main()
