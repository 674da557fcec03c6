"""Tests of agents/run/run_metrics.py: one row to metrics.jsonl, TensorBoard and trackers."""

import glob
import os
import tempfile
import unittest

import tensorflow as tf

from agents.run import metrics_writer, run_metrics, tracking
from tests.helpers import events


class ListTracker(tracking.Tracker):

  def __init__(self, name='list', fail_on=None):
    self.name = name
    self.rows, self.artifacts, self.status = [], [], None
    self._fail_on = fail_on

  def write(self, row):
    if self._fail_on == 'write':
      raise ConnectionError('server went away\nretries exhausted')
    self.rows.append(row)

  def log_artifact(self, path):
    self.artifacts.append(path)

  def finish(self, status):
    if self._fail_on == 'finish':
      raise ConnectionError('upload refused')
    self.status = status


def _scalars(folder):
  """{(tag, step): value} of the TensorBoard event files in `folder`."""
  values = {}
  for path in glob.glob(os.path.join(folder, 'events.out.tfevents*')):
    for event in events.events(path):
      for value in event.summary.value:
        values[(value.tag, event.step)] = float(tf.make_ndarray(value.tensor))
  return values


class RunMetricsTest(unittest.TestCase):

  def setUp(self):
    self.logdir = tempfile.mkdtemp()
    self.metrics = run_metrics.RunMetrics(self.logdir)

  def test_a_row_goes_to_jsonl_tensorboard_and_every_tracker(self):
    self.metrics.tensorboard.writer('train')
    tracker = ListTracker()
    self.metrics.attach([tracker])
    row = dict(step=64, phase='train', phase_step=64, episodes=3, mean_score=2.5,
               mean_length=None, steps_per_second=100.0, wall_time=1.0, twr50=0.25)
    self.metrics.write(row)
    self.assertEqual(metrics_writer.read_metrics(self.metrics.path), [row])
    self.assertEqual(tracker.rows, [row])
    self.assertEqual(_scalars(os.path.join(self.logdir, 'train')), {
        ('episodes', 64): 3.0, ('mean_score', 64): 2.5, ('steps_per_second', 64): 100.0,
        ('twr50', 64): 0.25})

  def test_rows_of_a_phase_without_a_writer_skip_tensorboard_only(self):
    tracker = ListTracker()
    self.metrics.attach([tracker])
    self.metrics.write(dict(step=64, phase='update', updates=1, policy_loss=0.5))
    self.assertFalse(os.path.exists(os.path.join(self.logdir, 'update')))
    self.assertEqual(len(tracker.rows), 1)
    self.assertEqual(len(metrics_writer.read_metrics(self.metrics.path)), 1)

  def test_a_failing_tracker_is_dropped_after_one_line_and_the_local_logs_go_on(self):
    failing, working = ListTracker('failing', fail_on='write'), ListTracker()
    self.metrics.attach([failing, working])
    with self.assertLogs('agents.run.tracking', 'WARNING') as logs:
      for step in (1, 2, 3):
        self.metrics.write(dict(step=step, phase='train', mean_score=1.0))
    self.assertEqual(len(logs.output), 1)
    self.assertIn("Tracker 'failing' failed to log a row (server went away)", logs.output[0])
    self.assertEqual(self.metrics.trackers, [working])
    self.assertEqual(len(working.rows), 3)
    self.assertEqual(len(metrics_writer.read_metrics(self.metrics.path)), 3)

  def test_finish_sends_the_artifacts_and_closes_every_tracker(self):
    tracker, refusing = ListTracker(), ListTracker('refusing', fail_on='finish')
    self.metrics.attach([tracker, refusing])
    with self.assertLogs('agents.run.tracking', 'WARNING') as logs:
      self.metrics.finish(tracking.FINISHED, ['/run/policy', '/run/config.yaml'])
    self.assertEqual(tracker.artifacts, ['/run/policy', '/run/config.yaml'])
    self.assertEqual(tracker.status, tracking.FINISHED)
    self.assertEqual(len(logs.output), 1)
    self.assertEqual(self.metrics.trackers, [])

  def test_truncation_is_the_jsonl_files(self):
    for step in (1, 2, 3):
      self.metrics.write(dict(step=step, phase='train'))
    self.metrics.truncate_after(2)
    self.assertEqual([row['step'] for row in metrics_writer.read_metrics(self.metrics.path)],
                     [1, 2])


if __name__ == '__main__':
  unittest.main()
