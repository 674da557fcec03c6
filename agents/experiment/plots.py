"""Learning curves of experiments: the mean over fits with a confidence band.

Each experiment is drawn as the mean of its fits' values of one tag against
the step, with a Student-t confidence band over the fits (the fits are
independent runs, so the band says where the mean of more runs would lie).
Several experiments share one set of axes.
"""

import os

import numpy as np
import scipy.stats


class NothingToPlotError(ValueError):
  """No fit of the experiments logged the value asked for."""


def as_fit_rows(frame):
  """`frame` with the columns `name, fit, step, phase, tag, value`.

  An agent class's manager's `get_writer_data()` (rlberry's {fit index: DataFrame} of
  `name, tag, value, dw_time_elapsed, global_step`) becomes such rows, in phase 'train'
  (an agent class's writer has no phases); a config experiment's frame is returned as is.
  """
  import pandas as pd
  if isinstance(frame, dict):
    frame = pd.concat([rows.assign(n_simu=index) for index, rows in frame.items()],
                      ignore_index=True) if frame else pd.DataFrame(
                          columns=['name', 'tag', 'value', 'global_step', 'n_simu'])
  if 'phase' in frame.columns:
    return frame
  return pd.DataFrame(dict(name=frame['name'], fit=frame['n_simu'], step=frame['global_step'],
                           phase='train', tag=frame['tag'], value=frame['value']))


def curves(frame, tag, phase='train', smooth=1):
  """The fits' values of `tag` on a common step grid, one column per fit.

  Args:
    frame: a `writer_data` DataFrame of one experiment.
    tag: the logged value to draw.
    phase: the phase whose rows count.
    smooth: trailing moving-average window in rows, applied to each fit.

  Returns:
    DataFrame indexed by step, one column per fit; a fit that logged other
    steps is linearly interpolated on the union of steps (not extrapolated).
  """
  frame = as_fit_rows(frame)
  rows = frame[(frame['tag'] == tag) & (frame['phase'] == phase)]
  table = rows.pivot_table(index='step', columns='fit', values='value', aggfunc='last')
  table = table.sort_index().interpolate(method='index', limit_area='inside')
  if smooth and smooth > 1:
    table = table.rolling(int(smooth), min_periods=1).mean()
  return table


def mean_and_band(table, ci=0.95):
  """Mean over the columns and its Student-t confidence band (NaN band with one fit).

  Returns:
    (mean, low, high) as NumPy arrays over the table's index.
  """
  values = table.to_numpy(dtype=float)
  counts = np.sum(np.isfinite(values), axis=1)
  mean = np.nanmean(values, axis=1)
  if not ci:
    return mean, mean, mean
  sem = np.full(len(values), np.nan)  # No band where fewer than two fits have a value.
  several = counts > 1
  sem[several] = np.nanstd(values[several], axis=1, ddof=1) / np.sqrt(counts[several])
  half = scipy.stats.t.ppf(0.5 + ci / 2, np.maximum(counts - 1, 1)) * sem
  return mean, mean - half, mean + half


def plot_writer_data(frames, tag, phase='train', smooth=1, ci=0.95, path=None, title=None,
                     references=None, labels=None):
  """Draws each experiment's mean curve of `tag` with its band; writes a PNG.

  Args:
    frames: one per experiment: a `writer_data` DataFrame (their `name` column labels
      the curves), or an agent class's manager's `get_writer_data()` (its fits' rows are
      in phase 'train').
    tag: the logged value to draw, e.g. 'mean_score'.
    phase: the phase whose rows are drawn.
    smooth: moving-average window (rows) per fit.
    ci: confidence level of the bands, in (0, 1); 0 draws none.
    path: PNG file to write (folders created); None writes nothing.
    title: axes title; defaults to the tag.
    references: optional mapping of labels to values drawn as dashed horizontal
      lines (e.g. a baseline's score on the same metric).
    labels: optional curve labels, one per frame in order (default: each frame's
      experiment name).

  Returns:
    The matplotlib Figure.

  Raises:
    ValueError: no experiment logged `tag` in `phase` (the message lists the tags).
  """
  if ci and not 0 < ci < 1:
    raise ValueError(f'ci must be in (0, 1) or 0, got {ci!r}.')
  if labels is not None and len(labels) != len(frames):
    raise ValueError(f'{len(labels)} curve labels for {len(frames)} experiments: give one '
                     'per experiment, in order.')
  import matplotlib
  matplotlib.use('Agg', force=False)
  from matplotlib import figure as figure_lib
  fig = figure_lib.Figure(figsize=(7, 4.2), dpi=110)
  ax = fig.add_subplot()
  drawn = 0
  frames = [as_fit_rows(frame) for frame in frames]
  for index, frame in enumerate(frames):
    table = curves(frame, tag, phase, smooth)
    if table.empty:
      continue
    name = labels[index] if labels is not None else frame['name'].iloc[0]
    mean, low, high = mean_and_band(table, ci)
    steps = table.index.to_numpy()
    line, = ax.plot(steps, mean, label=f'{name} ({table.shape[1]} fits)')
    if ci:
      ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.25, linewidth=0)
    drawn += 1
  if not drawn:
    tags = sorted(set().union(*(set(f.loc[f['phase'] == phase, 'tag']) for f in frames)))
    raise NothingToPlotError(
        f"No experiment logged '{tag}' in phase '{phase}'; logged tags: {tags}. A fit whose "
        'episodes never end within its budget logs no score: raise the budget.')
  for index, (label, value) in enumerate((references or {}).items()):
    ax.axhline(float(value), color=f'C{(drawn + index) % 10}', linestyle='--', linewidth=1,
               label=f'{label} ({float(value):g})')
  ax.set_xlabel('environment steps')
  ax.set_ylabel(tag)
  band = f', {ci:.0%} CI over fits' if ci else ''
  ax.set_title(title or f'{tag} ({phase}{band})')
  ax.grid(alpha=0.3)
  ax.legend(loc='best')
  fig.tight_layout()
  if path:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path)
  return fig
