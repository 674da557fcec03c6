"""The logged values of an experiment's fits as one long pandas DataFrame.

A config's fit writes `metrics.jsonl` in its run directory (one JSON row per log,
with `step`, `phase` and scalar tags). `read_fits` turns the rows of several
fits into one row per logged value, `name, fit, step, phase, tag, value`, the
shape seaborn, pandas' `pivot_table` and `plots.plot_writer_data` want.

An agent class's fit writes what its `DefaultWriter` kept to `writer_data.csv`
(`agent_fitting.py`); `read_writer_rows` gathers them with rlberry's columns,
`name, tag, value, dw_time_elapsed, global_step, n_simu`.
"""

import numbers
import os

import pandas as pd

from agents.run import metrics_writer

COLUMNS = ('name', 'fit', 'step', 'phase', 'tag', 'value')
WRITER_COLUMNS = ('name', 'tag', 'value', 'dw_time_elapsed', 'global_step', 'n_simu')
WRITER_DATA = 'writer_data.csv'
# Row keys that say where a value was logged, not what.
_INDEX_KEYS = ('step', 'phase')


def read_run(run_dir):
  """The rows of one run's `metrics.jsonl` (empty when it has none yet)."""
  path = os.path.join(run_dir, 'metrics.jsonl')
  if not os.path.exists(path):
    return []
  return metrics_writer.read_metrics(path)


def read_fits(name, fits):
  """One DataFrame row per numeric value logged by the given fits.

  Args:
    name: the experiment's name, written in the `name` column.
    fits: iterable of (fit index, run directory).

  Returns:
    DataFrame with columns `name, fit, step, phase, tag, value`; `value` is a
    float, booleans become 0/1, and missing (`null`) or non-numeric values
    are left out.
  """
  records = []
  for index, run_dir in fits:
    for row in read_run(run_dir):
      step, phase = row.get('step'), row.get('phase')
      for tag, value in row.items():
        if tag in _INDEX_KEYS or not isinstance(value, numbers.Real):
          continue
        records.append((name, index, step, phase, tag, float(value)))
  frame = pd.DataFrame.from_records(records, columns=list(COLUMNS))
  return frame.astype({'fit': 'int64', 'value': 'float64'})


def final_values(frame, tag='mean_score', phase='train'):
  """The last logged value of `tag` in `phase` of every fit.

  Args:
    frame: a DataFrame from `read_fits` (one or several experiments).
    tag: the logged value, e.g. 'mean_score'.
    phase: 'train', 'eval' or 'update'.

  Returns:
    A Series indexed by (name, fit).
  """
  rows = frame[(frame['tag'] == tag) & (frame['phase'] == phase)]
  rows = rows.sort_values(['name', 'fit', 'step'])
  return rows.groupby(['name', 'fit'])['value'].last()


def read_writer_rows(name, fits):
  """The rows the agents' writers kept, with rlberry's columns.

  Args:
    name: the agents' name, for the rows of a `metrics.jsonl`.
    fits: iterable of (fit index, run directory).

  Returns:
    DataFrame with columns `name, tag, value, dw_time_elapsed, global_step, n_simu`
    (`n_simu` is the fit's index): each fit's `writer_data.csv`, then the numeric
    values of its `metrics.jsonl` (`global_step` its step, `dw_time_elapsed` NaN).
  """
  frames = []
  for index, run_dir in fits:
    path = os.path.join(run_dir, WRITER_DATA)
    if os.path.exists(path) and os.path.getsize(path):
      frame = pd.read_csv(path)
      frames.append(frame.assign(n_simu=index))
    records = [(name, tag, float(value), float('nan'), row.get('step'), index)
               for row in read_run(run_dir) for tag, value in row.items()
               if tag not in _INDEX_KEYS and isinstance(value, numbers.Real)]
    if records:
      frames.append(pd.DataFrame.from_records(records, columns=list(WRITER_COLUMNS)))
  frames = [frame for frame in frames if len(frame)]
  if not frames:
    return pd.DataFrame(columns=list(WRITER_COLUMNS))
  return pd.concat(frames, ignore_index=True)[list(WRITER_COLUMNS)]
