"""Tests of the metrics.jsonl writer and reader."""

import json
import os
import shutil
import tempfile
import unittest

import numpy as np

from agents.run import metrics_writer


class MetricsWriterTest(unittest.TestCase):

  def setUp(self):
    folder = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, folder)
    self.path = os.path.join(folder, 'run', 'metrics.jsonl')

  def test_rows_are_plain_json_lines_with_null_for_non_finite_values(self):
    writer = metrics_writer.MetricsWriter(self.path)
    writer.write({'step': np.int64(10), 'mean_score': np.float32(1.5), 'loss': float('nan')})
    writer.write({'step': 20, 'mean_score': None})
    with open(self.path) as file:
      lines = file.read().splitlines()
    self.assertEqual([json.loads(line) for line in lines], [
        {'step': 10, 'mean_score': 1.5, 'loss': None}, {'step': 20, 'mean_score': None}])

  def test_values_that_are_not_json_name_the_row(self):
    with self.assertRaisesRegex(TypeError, 'not JSON-compatible'):
      metrics_writer.MetricsWriter(self.path).write({'step': 1, 'bad': object()})

  def test_reader_skips_a_line_cut_off_by_a_kill(self):
    metrics_writer.MetricsWriter(self.path).write({'step': 1})
    with open(self.path, 'a') as file:
      file.write('{"step": 2, "mea')
    self.assertEqual(metrics_writer.read_metrics(self.path), [{'step': 1}])

  def test_truncate_after_keeps_rows_up_to_the_step(self):
    writer = metrics_writer.MetricsWriter(self.path)
    for step in (10, 20, 30):
      writer.write({'step': step})
    writer.truncate_after(20)
    self.assertEqual(metrics_writer.read_metrics(self.path), [{'step': 10}, {'step': 20}])
    writer.write({'step': 30})
    self.assertEqual(len(metrics_writer.read_metrics(self.path)), 3)

  def test_truncate_without_a_file_does_nothing(self):
    metrics_writer.MetricsWriter(self.path).truncate_after(5)
    self.assertFalse(os.path.exists(self.path))


if __name__ == '__main__':
  unittest.main()
