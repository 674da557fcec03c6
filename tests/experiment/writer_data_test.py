"""Tests of agents/experiment/writer_data.py and plots.py on hand-written metrics files."""

import json
import os
import tempfile
import unittest
import warnings

import numpy as np
import pandas as pd
import scipy.stats

from agents.experiment import plots, writer_data


def _run(rows):
  run_dir = tempfile.mkdtemp()
  with open(os.path.join(run_dir, 'metrics.jsonl'), 'w', encoding='utf-8') as file:
    for row in rows:
      file.write(json.dumps(row) + '\n')
    file.write('{"step": 99, "pha')  # A line cut off by a killed process.
  return run_dir


def _frame(name, scores_per_fit, steps=(10, 20, 30)):
  fits = []
  for index, scores in enumerate(scores_per_fit):
    rows = [dict(step=step, phase='train', mean_score=score, episodes=3, flag=True,
                 note='text', missing=None) for step, score in zip(steps, scores)]
    rows.append(dict(step=steps[-1], phase='update', kl=0.5))
    fits.append((index, _run(rows)))
  return writer_data.read_fits(name, fits)


class WriterDataTest(unittest.TestCase):

  def test_one_row_per_numeric_value(self):
    frame = _frame('a', [[1.0, 2.0, 3.0]])
    self.assertEqual(list(frame.columns), list(writer_data.COLUMNS))
    # 3 train rows x (mean_score, episodes, flag) + 1 update row; text and null left out.
    self.assertEqual(len(frame), 10)
    self.assertEqual(set(frame['tag']), {'mean_score', 'episodes', 'flag', 'kl'})
    self.assertEqual(frame.loc[frame['tag'] == 'flag', 'value'].tolist(), [1.0] * 3)
    self.assertEqual(frame['value'].dtype, np.float64)

  def test_final_values_and_missing_runs(self):
    frame = _frame('a', [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    final = writer_data.final_values(frame)
    self.assertEqual(final.to_dict(), {('a', 0): 3.0, ('a', 1): 6.0})
    self.assertTrue(writer_data.read_fits('b', [(0, tempfile.mkdtemp())]).empty)


class PlotTest(unittest.TestCase):

  def test_mean_and_student_band(self):
    frame = _frame('a', [[1.0, 2.0, 3.0], [3.0, 4.0, 7.0], [2.0, 6.0, 5.0]])
    table = plots.curves(frame, 'mean_score')
    mean, low, high = plots.mean_and_band(table, 0.95)
    np.testing.assert_allclose(mean, [2.0, 4.0, 5.0])
    expected = scipy.stats.t.interval(0.95, 2, loc=2.0, scale=scipy.stats.sem([1.0, 3.0, 2.0]))
    np.testing.assert_allclose([low[0], high[0]], expected)

  def test_one_fit_has_its_mean_and_no_band_without_a_warning(self):
    table = plots.curves(_frame('a', [[1.0, 2.0, 3.0]]), 'mean_score')
    with warnings.catch_warnings():
      warnings.simplefilter('error')
      mean, low, high = plots.mean_and_band(table, 0.95)
    np.testing.assert_allclose(mean, [1.0, 2.0, 3.0])
    self.assertTrue(np.isnan(low).all() and np.isnan(high).all())

  def test_smoothing_and_interpolation(self):
    frame = _frame('a', [[0.0, 2.0, 4.0]])
    np.testing.assert_allclose(plots.curves(frame, 'mean_score', smooth=2)[0], [0.0, 1.0, 3.0])
    # A fit that logged other steps is interpolated on the common grid.
    sparse = _frame('a', [[0.0, 10.0]], steps=(10, 30)).assign(fit=1)
    table = plots.curves(pd.concat([frame, sparse]), 'mean_score')
    np.testing.assert_allclose(table[1], [0.0, 5.0, 10.0])

  def test_several_experiments_on_one_axes_written_as_png(self):
    path = os.path.join(tempfile.mkdtemp(), 'sub', 'curve.png')
    figure = plots.plot_writer_data(
        [_frame('a', [[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]), _frame('b', [[0.0, 1.0, 1.0]] * 2)],
        'mean_score', path=path)
    with open(path, 'rb') as file:
      self.assertEqual(file.read(8), b'\x89PNG\r\n\x1a\n')
    axes = figure.axes[0]
    self.assertEqual([line.get_label() for line in axes.lines], ['a (2 fits)', 'b (2 fits)'])
    self.assertEqual(len(axes.collections), 2)  # One band each.

  def test_unknown_tag_lists_the_logged_ones(self):
    with self.assertRaisesRegex(ValueError, r"No experiment logged 'score'.*'mean_score'"):
      plots.plot_writer_data([_frame('a', [[1.0, 2.0, 3.0]])], 'score')


if __name__ == '__main__':
  unittest.main()
