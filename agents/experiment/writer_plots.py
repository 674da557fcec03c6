"""rlberry's `plot_writer_data`: each agent's curve of a logged tag, with a band over its fits.

    from agents.experiment import plot_writer_data

    data = plot_writer_data([manager_a, manager_b], 'episode_rewards', show=False)
    data = plot_writer_data('experiments', 'reward', preprocess_func=np.cumsum,
                            smooth=True, savefig_fname='reward.png', show=False)

The data source is `read_writer_data`'s (managers, or folders they were saved in).
`plot_synchronized_curves` draws fits logged at the same x values (interpolated on the
union of them); `plot_smoothed_curves` first smooths each fit with a Gaussian kernel
(Nadaraya-Watson) on a common grid, so fits logged at different x (time) can be averaged.
The band over the fits (`error_representation`) is one of

- 'ci': a confidence interval of the mean, mean ± z * std / sqrt(n), at `level`;
- 'pi': a prediction interval, mean ± z * std, at `level`;
- 'cb': a simultaneous confidence band of the mean curve: the bootstrap (`n_boot`
  resamples of the fits) quantile of the largest standardized deviation over x;
- 'raw_curves': every fit's curve.
"""

import logging

import numpy as np
import scipy.stats

from agents.experiment import writer_sources

_LOG = logging.getLogger(__name__)
ERROR_REPRESENTATIONS = ('ci', 'pi', 'cb', 'raw_curves')
_GRID_POINTS = 200
_LINESTYLES = ('-', '--', ':', '-.')


def _check_representation(error_representation):
  if error_representation not in ERROR_REPRESENTATIONS:
    raise ValueError(f'error_representation not implemented: {error_representation!r} (one of '
                     f'{ERROR_REPRESENTATIONS}).')


def plot_writer_data(data_source, tag, xtag=None, smooth=False, smoothing_bandwidth=None,
                     id_agent=None, ax=None, error_representation='ci', n_boot=500, level=0.9,
                     sub_sample=True, show=True, preprocess_func=None, title=None,
                     savefig_fname=None, linestyles=False):
  """Draws each agent's curve of `tag` with a band over its fits (rlberry's).

  Args:
    data_source: a manager, a list of managers, the `output_dir` they were saved in, or
      a list of manager folders (`read_writer_data`'s).
    tag: the tag on the y axis.
    xtag: the column on the x axis (None: 'global_step'; 'dw_time_elapsed' for time,
      with `smooth=True`). Rows without it are numbered in their fit's order.
    smooth: smooth each fit with a Gaussian kernel first (`plot_smoothed_curves`).
    smoothing_bandwidth: the kernel's width in x units; a list of candidates is chosen
      from by leave-one-out error; None chooses among 20 from the data's range.
    id_agent: draw only this fit.
    ax: matplotlib axes to draw on (None: a new figure).
    error_representation: 'ci', 'pi', 'cb' or 'raw_curves' (see the module).
    n_boot: bootstrap resamples of 'cb'.
    level: the level of the band.
    sub_sample: keep at most 1,000 rows per fit.
    show: call `plt.show()`.
    preprocess_func: a function of each fit's values (e.g. `np.cumsum`).
    title: the title (None: the tag).
    savefig_fname: write the figure to this file.
    linestyles: a line style per agent as well as a color.

  Returns:
    DataFrame of the rows drawn: `name, tag, value, dw_time_elapsed, global_step, n_simu`.

  Raises:
    ValueError: an unknown `error_representation`.
  """
  _check_representation(error_representation)
  data = writer_sources.read_writer_data(data_source, tag, preprocess_func, id_agent)
  data = data[data['tag'] == tag].copy()
  if data.empty:
    _LOG.error('[plot_writer_data]: no fit logged %r; nothing to plot.', tag)
  xtag = xtag or 'global_step'
  if xtag not in data.columns or data[xtag].isna().all():
    xtag = 'index'
    data[xtag] = data.groupby(['name', 'n_simu']).cumcount()
  elif data[xtag].isna().any():
    _LOG.warning('Plotting %s against %s, but %s is missing for some rows.', tag, xtag, xtag)
  data['n_simu'] = data['n_simu'].astype(int)
  if sub_sample and len(data):  # At most about 1,000 rows per fit, evenly spaced in x.
    data = data.sort_values(['name', 'n_simu', xtag], kind='stable')
    groups = data.groupby(['name', 'n_simu'])
    step = (groups[xtag].transform('size') // 1000).clip(lower=1)
    data = data[groups.cumcount() % step == 0]
  import matplotlib.pyplot as plt
  if ax is None:
    _, ax = plt.subplots(1, 1)
  columns = ['name', xtag, 'value', 'n_simu']
  if smooth:
    plot_smoothed_curves(data[columns], xtag, 'value', smoothing_bandwidth, ax,
                         error_representation, n_boot, level, False, None, linestyles)
  else:
    plot_synchronized_curves(data[columns], xtag, 'value', ax, error_representation, level,
                             False, None, linestyles, n_boot=n_boot)
  ax.set_xlabel(xtag)
  ax.set_ylabel(tag if preprocess_func is None else 'value')
  ax.set_title(title or tag)
  if savefig_fname is not None:
    ax.figure.savefig(savefig_fname)
  if show:
    plt.show()
  return data


def plot_synchronized_curves(data, x, y, ax=None, error_representation='pi', level=0.9,
                             show=True, savefig_fname=None, linestyles=False, n_boot=500):
  """Draws each `name`'s mean of `y` over its fits (`n_simu`) against `x`, with a band.

  Args:
    data: DataFrame with columns `name`, `n_simu`, `x` and `y`.
    x, y: the columns on the axes.
    ax: matplotlib axes (None: a new figure).
    error_representation, level, n_boot: the band (see the module).
    show: call `plt.show()`.
    savefig_fname: write the figure to this file.
    linestyles: a line style per name.

  Returns:
    The matplotlib axes.
  """
  _check_representation(error_representation)
  curves = {}
  for name, rows in data.groupby('name', sort=False):
    table = rows.pivot_table(index=x, columns='n_simu', values=y, aggfunc='last').sort_index()
    table = table.interpolate(method='index', limit_area='inside')
    curves[name] = (table.index.to_numpy(dtype=float), table.to_numpy(dtype=float))
  return _draw(curves, x, y, ax, error_representation, level, n_boot, show, savefig_fname,
               linestyles)


def plot_smoothed_curves(data, x, y, smoothing_bandwidth=None, ax=None, error_representation='ci',
                         n_boot=2500, level=0.9, show=True, savefig_fname=None, linestyles=False):
  """Like `plot_synchronized_curves`, each fit first smoothed with a Gaussian kernel on a
  common grid of `x` (its width `smoothing_bandwidth`, see `plot_writer_data`).

  Returns:
    The matplotlib axes.
  """
  _check_representation(error_representation)
  curves = {}
  for name, rows in data.groupby('name', sort=False):
    rows = rows.dropna(subset=[x, y])
    grid = np.linspace(rows[x].min(), rows[x].max(), _GRID_POINTS)
    fits = [(group[x].to_numpy(dtype=float), group[y].to_numpy(dtype=float))
            for _, group in rows.groupby('n_simu')]
    bandwidth = _bandwidth(fits, grid, smoothing_bandwidth)
    curves[name] = (grid, np.stack([_kernel_smooth(xs, ys, grid, bandwidth)
                                    for xs, ys in fits], axis=1))
  return _draw(curves, x, y, ax, error_representation, level, n_boot, show, savefig_fname,
               linestyles)


def _kernel_smooth(xs, ys, grid, bandwidth):
  """Nadaraya-Watson: at each grid point, the Gaussian-weighted mean of the ys."""
  weights = np.exp(-0.5 * ((grid[:, None] - xs[None, :]) / bandwidth) ** 2)
  total = weights.sum(axis=1)
  with np.errstate(invalid='ignore', divide='ignore'):
    return np.where(total > 1e-12, weights @ ys / total, np.nan)


def _bandwidth(fits, grid, given):
  """The given width, or the candidate with the least leave-one-out squared error."""
  if given is not None and np.ndim(given) == 0:
    return float(given)
  span = float(grid[-1] - grid[0]) or 1.0
  candidates = np.asarray(given, dtype=float) if given is not None \
      else np.geomspace(span / 200, span / 5, 20)

  def loo_error(bandwidth):
    error = 0.0
    for xs, ys in fits:
      weights = np.exp(-0.5 * ((xs[:, None] - xs[None, :]) / bandwidth) ** 2)
      np.fill_diagonal(weights, 0.0)
      total = weights.sum(axis=1)
      fitted = np.where(total > 1e-12, weights @ ys / np.maximum(total, 1e-12), ys)
      error += float(np.mean((fitted - ys) ** 2))
    return error

  return float(min(candidates, key=loo_error))


def _band(values, error_representation, level, n_boot, rng):
  """(mean, low, high) over the columns (fits) of `values`."""
  count = np.sum(np.isfinite(values), axis=1)
  with np.errstate(invalid='ignore', divide='ignore'):
    mean = np.nanmean(values, axis=1) if values.size else np.array([])
    std = np.nanstd(values, axis=1, ddof=1) if values.shape[1] > 1 else np.zeros(len(values))
    z = scipy.stats.norm.ppf(0.5 + level / 2)
    if error_representation == 'pi':
      half = z * std
    elif error_representation == 'ci':
      half = z * std / np.sqrt(count)
    else:  # 'cb': a simultaneous band from the bootstrap of the largest deviation.
      sem = std / np.sqrt(count)
      picks = rng.integers(values.shape[1], size=(n_boot, values.shape[1]))
      deviations = [np.nanmax(np.abs(np.nanmean(values[:, pick], axis=1) - mean) / sem)
                    for pick in picks]
      half = np.nanquantile(deviations, level) * sem if np.isfinite(deviations).any() \
          else np.zeros(len(mean))
  half = np.nan_to_num(half)
  return mean, mean - half, mean + half


def _draw(curves, x, y, ax, error_representation, level, n_boot, show, savefig_fname,
          linestyles):
  import matplotlib.pyplot as plt
  if ax is None:
    _, ax = plt.subplots(1, 1)
  rng = np.random.default_rng(0)
  for number, (name, (xs, values)) in enumerate(curves.items()):
    style = _LINESTYLES[number % len(_LINESTYLES)] if linestyles else '-'
    color = f'C{number % 10}'
    if error_representation == 'raw_curves':
      for column in range(values.shape[1]):
        ax.plot(xs, values[:, column], color=color, linestyle=style, alpha=0.5,
                label=name if column == 0 else None)
      continue
    mean, low, high = _band(values, error_representation, level, n_boot, rng)
    ax.plot(xs, mean, color=color, linestyle=style, label=name)
    if values.shape[1] > 1:
      ax.fill_between(xs, low, high, color=color, alpha=0.25, linewidth=0)
  ax.set_xlabel(x)
  ax.set_ylabel(y)
  if curves:
    ax.legend(loc='best')
  if savefig_fname is not None:
    ax.figure.savefig(savefig_fname)
  if show:
    plt.show()
  return ax

