"""`DefaultWriter`: what an agent logs through `self.writer`, kept as rows (rlberry's writer).

    writer = DefaultWriter('my_agent')
    writer.add_scalar('episode_rewards', 21.0, global_step=100)
    writer.read_tag_value('episode_rewards')   # a pandas Series of the tag's values
    writer.data                                # name, tag, value, dw_time_elapsed, global_step

An agent (`agents.experiment.Agent`) gets one as `writer`; `ExperimentManager`
gathers every fit's rows into `get_writer_data()` and saves them in the fit's run
directory as `writer_data.csv`. With `tensorboard_kwargs=dict(log_dir=...)` the
scalars also go to TensorBoard (through `tf.summary`). Methods of TensorBoard's writer
that this class does not keep (`add_text`, `add_histogram`, ...) are accepted and
do nothing without TensorBoard.
"""

from __future__ import annotations

import collections
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
  import pandas as pd

COLUMNS = ('name', 'tag', 'value', 'dw_time_elapsed', 'global_step')
STYLES = ('multi_line', 'one_line', 'progressbar')

_LOG = logging.getLogger(__name__)


class DefaultWriter:
  """Keeps the scalars an agent logs, logs them now and then, and mirrors them to TensorBoard."""

  def __init__(self, name: str, print_log: bool = True, style_log: str = 'multi_line',
               log_interval: float = 3, tensorboard_kwargs: Mapping[str, Any] | None = None,
               execution_metadata: Mapping[str, Any] | None = None, maxlen: int | None = None,
               maxlen_by_tag: Mapping[str, int] | None = None) -> None:
    """Creates an empty writer.

    Args:
      name: the writer's name, written in every row (the agent's name).
      print_log: log the last values (at INFO, logger `agents.experiment.writer`; printed
        to stderr when logging does not show INFO) at most every `log_interval` seconds.
      style_log: 'multi_line' (a table), 'one_line' or 'progressbar' (one line with
        each tag's recent trend).
      log_interval: seconds between two logs.
      tensorboard_kwargs: None, or `dict(log_dir=...)` to write the scalars to TensorBoard.
      execution_metadata: optional mapping shown in the logs (e.g. `{'fit': 0}`).
      maxlen: keep at most this many rows per tag (None: all).
      maxlen_by_tag: optional {tag: maxlen} overriding `maxlen` for some tags.

    Raises:
      ValueError: an unknown `style_log`.
    """
    if style_log not in STYLES:
      raise ValueError(f'style_log must be one of {STYLES}, got {style_log!r}.')
    self._name = name
    self._print_log = print_log
    self._style_log = style_log
    self._log_interval = log_interval
    self._execution_metadata = execution_metadata
    self._maxlen = maxlen
    self._maxlen_by_tag = dict(maxlen_by_tag or {})
    self._tensorboard_kwargs = dict(tensorboard_kwargs) if tensorboard_kwargs else None
    self._summary_writer: Any = None

    self.reset()

  @property
  def name(self) -> str:
    """The name written in every row."""
    return self._name

  @property
  def style_log(self) -> str:
    """How the logs look: 'multi_line', 'one_line' or 'progressbar'."""
    return self._style_log

  def reset(self) -> None:
    """Forgets every row and restarts the clock of `dw_time_elapsed`."""
    self._data: dict[str, dict[str, collections.deque[Any]]] = {}
    self._initial_time = time.monotonic()
    self._time_last_log = self._initial_time

  @property
  def summary_writer(self) -> Any:
    """The `tf.summary` writer, or None without `tensorboard_kwargs`."""
    if self._tensorboard_kwargs and self._summary_writer is None:
      os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')  # No C++ INFO lines on import.
      import tensorflow as tf
      log_dir = os.fspath(self._tensorboard_kwargs['log_dir'])
      self._summary_writer = tf.summary.create_file_writer(log_dir)
    return self._summary_writer

  @property
  def data(self) -> pd.DataFrame:
    """Every row, as a DataFrame with columns `name, tag, value, dw_time_elapsed, global_step`."""
    import pandas as pd
    frames = [pd.DataFrame({key: list(column) for key, column in columns.items()})
              for columns in self._data.values()]
    if not frames:
      return pd.DataFrame(columns=list(COLUMNS))
    return pd.concat(frames, ignore_index=True)

  def _columns(self, tag: str) -> dict[str, collections.deque[Any]]:
    if tag not in self._data:
      maxlen = self._maxlen_by_tag.get(tag, self._maxlen)
      self._data[tag] = {key: collections.deque(maxlen=maxlen) for key in COLUMNS}
    return self._data[tag]

  def add_scalar(self, tag: str, scalar_value: float, global_step: int | None = None,
                 walltime: float | None = None, new_style: bool = False) -> None:
    """Keeps one value of `tag` at `global_step` (None: NaN), as TensorBoard's `add_scalar`.

    Args:
      tag: the value's name.
      scalar_value: a number.
      global_step: the step it belongs to, or None.
      walltime: accepted for TensorBoard's signature (unused).
      new_style: accepted for TensorBoard's signature (unused).
    """
    del walltime, new_style
    if self.summary_writer is not None:
      with self.summary_writer.as_default():
        import tensorflow as tf
        tf.summary.scalar(tag, float(scalar_value), step=int(global_step or 0))
    columns = self._columns(tag)
    columns['name'].append(self._name)
    columns['tag'].append(tag)
    columns['value'].append(scalar_value)
    columns['dw_time_elapsed'].append(time.monotonic() - self._initial_time)
    columns['global_step'].append(np.nan if global_step is None else global_step)
    if self._print_log:
      self._maybe_log()

  def add_scalars(self, main_tag: str = '', tag_scalar_dict: Mapping[str, float] | None = None,
                  global_step: int | None = None, walltime: float | None = None) -> None:
    """`add_scalar` of each `{tag: value}`, named `<main_tag>_<tag>` when `main_tag` is given."""
    for tag, value in (tag_scalar_dict or {}).items():
      self.add_scalar(_full_tag(tag, main_tag), value, global_step, walltime)

  def read_tag_value(self, tag: str, main_tag: str = '') -> pd.Series:
    """Every value of a tag (`<main_tag>_<tag>` when `main_tag` is given), a pandas Series.

    Raises:
      KeyError: the tag was never written.
    """
    import pandas as pd
    return pd.Series(list(self._data[_full_tag(tag, main_tag)]['value']), name='value')

  def read_first_tag_value(self, tag: str, main_tag: str = '') -> Any:
    """The first value of a tag."""
    return self._data[_full_tag(tag, main_tag)]['value'][0]

  def read_last_tag_value(self, tag: str, main_tag: str = '') -> Any:
    """The last value of a tag."""
    return self._data[_full_tag(tag, main_tag)]['value'][-1]

  def set_max_global_step(self, max_global_step: int) -> None:
    """The step the fit ends at (shown by the 'progressbar' style)."""
    self._max_global_step = max_global_step

  def flush(self) -> None:
    """Flushes TensorBoard's events to disk."""
    if self._summary_writer is not None:
      self._summary_writer.flush()

  def close(self) -> None:
    """Closes the TensorBoard writer (the rows stay)."""
    if self._summary_writer is not None:
      self._summary_writer.close()
      self._summary_writer = None

  def _maybe_log(self) -> None:
    now = time.monotonic()
    if now - self._time_last_log < self._log_interval:
      return
    self._time_last_log = now
    last = {tag: columns['value'][-1] for tag, columns in self._data.items()}
    steps = [columns['global_step'][-1] for columns in self._data.values()]
    step = max((s for s in steps if not _is_nan(s)), default=0)
    header = self._name + (f' {self._execution_metadata}' if self._execution_metadata else '')
    if self._style_log == 'progressbar':
      trends = {tag: _trend(columns['value']) for tag, columns in self._data.items()}
      text = ' | '.join(f'{tag} = {last[tag]:.4g} (trend {trends[tag]:+.3g})' for tag in last)
    elif self._style_log == 'one_line':
      text = ' | '.join(f'{tag} = {value:.4g}' for tag, value in last.items())
    else:
      text = '\n'.join(f'  {tag:<24} {value:.4g}' for tag, value in last.items())
    separator = '\n' if self._style_log == 'multi_line' else ' | '
    message = f'[{header}] max_global_step = {step}{separator}{text}'
    if _LOG.isEnabledFor(logging.INFO):
      _LOG.info('%s', message)
    else:  # Logging is not set up to show INFO: print it, as rlberry's writer does.
      print(message, file=sys.stderr)

  # TensorBoard's other methods (add_text, add_histogram, ...): kept when TensorBoard is
  # on only as far as `tf.summary` has them, otherwise accepted and ignored.
  def __getattr__(self, attribute: str) -> Callable[..., None]:
    if attribute.startswith('__') or attribute.startswith('_'):
      raise AttributeError(attribute)

    def ignored(*args: Any, **kwargs: Any) -> None:
      del args, kwargs
    return ignored

  def __getstate__(self) -> dict[str, Any]:
    state = dict(self.__dict__)
    state['_summary_writer'] = None  # Opened again on the next scalar.
    return state

  def __setstate__(self, state: Mapping[str, Any]) -> None:
    self.__dict__.update(state)


def _full_tag(tag: str, main_tag: str) -> str:
  return f'{main_tag}_{tag}' if str(main_tag) else str(tag)


def _is_nan(value: Any) -> bool:
  return isinstance(value, float) and math.isnan(value)


def _trend(values: Iterable[float]) -> float:
  """Mean of the last 5 % of values minus that of the 5 % before (NaN under 20 values)."""
  array = np.asarray(values, dtype=float)
  if len(array) < 20:
    return float('nan')
  lag = len(array) // 20
  return float(array[-lag:].mean() - array[-2 * lag:-lag].mean())


class NullWriter:
  """The writer of an agent whose writer the manager disabled (`set_writer(idx, None)`):
  it takes every call of a writer and keeps nothing, so `self.writer.add_scalar(...)` in
  an agent's `fit` still runs."""

  def __bool__(self) -> bool:
    return False  # `if self.writer:` reads as no writer.

  def __getattr__(self, attribute: str) -> Callable[..., None]:
    if attribute.startswith('_'):
      raise AttributeError(attribute)

    def ignored(*args: Any, **kwargs: Any) -> None:
      del args, kwargs
    return ignored
