"""Tests of agents/run/tracking.py: the tracker interface, its registry and start-up."""

import socket
import sys
import unittest
from unittest import mock

import numpy as np

from agents import configs, plugins
from agents.run import tracking


class RecordingTracker(tracking.Tracker):
  """Keeps what it is given (class attributes: the registry builds it with no argument)."""

  started = []
  rows = []

  def start(self, run, previous=None):
    RecordingTracker.started.append((run, previous))
    return {'id': 'recorded'}

  def write(self, row):
    RecordingTracker.rows.append(row)


class RefusingTracker(tracking.Tracker):

  def start(self, run, previous=None):
    raise tracking.TrackerUnavailableError('cannot reach the server at http://127.0.0.1:1:'
                                           ' Connection refused\nsecond line')


def _run():
  return tracking.TrackedRun(name='run', group=None, run_dir='/nowhere', config={},
                             params={})


class TrackingTest(unittest.TestCase):

  def setUp(self):
    RecordingTracker.started, RecordingTracker.rows = [], []
    plugins.TRACKERS.register('recording', RecordingTracker)
    plugins.TRACKERS.register('refusing', RefusingTracker)
    self.addCleanup(plugins.TRACKERS.unregister, 'recording')
    self.addCleanup(plugins.TRACKERS.unregister, 'refusing')

  def test_the_flag_is_a_comma_separated_list(self):
    self.assertEqual(tracking.parse_names('mlflow,wandb'), ['mlflow', 'wandb'])
    self.assertEqual(tracking.parse_names(' mlflow , '), ['mlflow'])
    self.assertEqual(tracking.parse_names(''), [])

  def test_the_framework_registers_mlflow_and_wandb(self):
    self.assertIn('mlflow', plugins.TRACKERS)
    self.assertIn('wandb', plugins.TRACKERS)
    tracking.check_names(['mlflow', 'wandb'])  # Imports no client package.
    self.assertTrue(issubclass(plugins.TRACKERS.get('mlflow'), tracking.Tracker))

  def test_an_unknown_tracker_names_the_config_key(self):
    with self.assertRaisesRegex(configs.ConfigError, r"'loop.track' must be a registered "
                                r"experiment tracker, one of \[.*'mlflow'.*\]; got 'mlfow'. "
                                r"Did you mean 'mlflow'\?"):
      tracking.check_names(['mlfow'])

  def test_the_config_key_defaults_to_no_tracker_and_takes_a_list(self):
    self.assertEqual(configs.resolve('cartpole')['loop']['track'], [])
    config = configs.resolve('cartpole', {'loop.track': ['mlflow', 'wandb']})
    self.assertEqual(config['loop']['track'], ['mlflow', 'wandb'])
    with self.assertRaisesRegex(configs.ConfigError, 'loop.track'):
      configs.resolve('cartpole', {'loop.track': 'mlflow'})

  def test_a_tracker_that_cannot_start_is_one_warning_line_and_left_out(self):
    with self.assertLogs('agents.run.tracking', 'WARNING') as logs:
      trackers, states = tracking.start(['refusing', 'recording'], _run(),
                                        previous={'recording': {'id': 'before'}})
    self.assertEqual([tracker.name for tracker in trackers], ['recording'])
    self.assertEqual(states, {'recording': {'id': 'recorded'}})
    self.assertEqual(RecordingTracker.started[0][1], {'id': 'before'})
    self.assertEqual(len(logs.output), 1)
    self.assertNotIn('\n', logs.output[0])
    self.assertIn("Tracker 'refusing' cannot start (cannot reach the server at "
                  'http://127.0.0.1:1: Connection refused)', logs.output[0])
    self.assertIn('metrics.jsonl and TensorBoard are written as usual', logs.output[0])

  def test_a_missing_client_package_names_the_extra_to_install(self):
    for name, module in (('mlflow', 'mlflow'), ('wandb', 'wandb')):
      with mock.patch.dict(sys.modules, {module: None}), \
          self.assertLogs('agents.run.tracking', 'WARNING') as logs:
        trackers, _ = tracking.start([name], _run())
      self.assertEqual(trackers, [])
      self.assertEqual(len(logs.output), 1)
      self.assertIn(f"{module} is not installed: pip install 'batchppo-agents[{name}]'",
                    logs.output[0])

  def test_a_refused_connection_is_reported_at_once(self):
    with self.assertRaisesRegex(tracking.TrackerUnavailableError,
                                r'cannot reach the server at http://127.0.0.1:1: '
                                r'Connection refused'):
      tracking.check_reachable('http://127.0.0.1:1', 'the server')
    tracking.check_reachable('file:/tmp/mlruns', 'the server')  # Not a network address.

  def test_a_listening_server_is_reachable(self):
    with socket.socket() as server:
      server.bind(('127.0.0.1', 0))
      server.listen(1)
      tracking.check_reachable(f'http://127.0.0.1:{server.getsockname()[1]}', 'the server')

  def test_measurements_are_the_numbers_of_a_row_under_its_phase(self):
    row = dict(step=64, phase='train', phase_step=64, wall_time=1.5, episodes=3,
               mean_score=np.float32(2.5), mean_length=None, twr50=0.25, note='text',
               flag=True)
    self.assertEqual(tracking.measurements(row), {
        'train/episodes': 3.0, 'train/mean_score': 2.5, 'train/twr50': 0.25})


if __name__ == '__main__':
  unittest.main()
