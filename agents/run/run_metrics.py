"""Where a run's metric rows go: metrics.jsonl and TensorBoard always, trackers when asked.

`RunMetrics` is the one writer the loop, the training's update rows and an evaluation
suite's rows all write to (`loop.metrics.write(row)`). A row is a flat mapping such as
`{"step": 4000, "phase": "train", "mean_score": 12.5, ...}`, and every back-end takes
it through the same method, `write(row)`:

- `metrics_writer.MetricsWriter`: `metrics.jsonl`, one JSON line per row;
- `TensorBoardRows`: the rows of the loop's phases as scalars in `<logdir>/<phase>/`
  (the same event files the algorithm's own summaries go to);
- the experiment trackers of `loop.track` (`agents.run.tracking`): MLflow, W&B.

The local logs come first and their errors propagate (a full disk is the run's
problem); a tracker's error drops that tracker after one warning line, and the run
and its local logs go on.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import tensorflow as tf

from agents.run import metrics_writer, tracking


class TensorBoardRows:
  """Writes the rows of the loop's phases as TensorBoard scalars, one folder per phase."""

  def __init__(self, logdir: str) -> None:
    self._logdir = logdir
    self._writers: dict[Any, Any] = {}  # phase name -> tf.summary writer

  def writer(self, phase: str) -> Any:
    """The summary writer of `phase` (`<logdir>/<phase>/`), created at the first call.

    Rows of a phase that has no writer (an algorithm's update rows, an evaluation
    suite's rows, which write their own summaries) are not written here.
    """
    if phase not in self._writers:
      self._writers[phase] = tf.summary.create_file_writer(os.path.join(self._logdir, phase))
    return self._writers[phase]

  def write(self, row: Mapping[str, Any]) -> None:
    """Writes the row's measured numbers at its step, then flushes."""
    writer = self._writers.get(row.get('phase'))
    if writer is None:
      return
    with writer.as_default(step=row['step']):
      for key, value in row.items():
        if key not in tracking.BOOKKEEPING and isinstance(value, numbers.Real) and \
            not isinstance(value, bool):
          tf.summary.scalar(key, value)
    writer.flush()

  def flush(self) -> None:
    """Flushes every phase's writer."""
    for writer in self._writers.values():
      writer.flush()


class RunMetrics:
  """Every metric row of a run to every back-end: metrics.jsonl, TensorBoard, trackers.

  Attributes:
    jsonl: the `MetricsWriter` of `<logdir>/metrics.jsonl`.
    tensorboard: the `TensorBoardRows` of the loop's phases.
    trackers: the started trackers (see `attach`).
  """

  def __init__(self, logdir: str) -> None:
    self.jsonl = metrics_writer.MetricsWriter(os.path.join(logdir, 'metrics.jsonl'))
    self.tensorboard = TensorBoardRows(logdir)
    self.trackers: list[tracking.Tracker] = []

  @property
  def path(self) -> str:
    """The path of metrics.jsonl."""
    return self.jsonl.path

  def attach(self, trackers: Sequence[tracking.Tracker]) -> None:
    """Adds started trackers (`tracking.start`); every later row goes to them too."""
    self.trackers.extend(trackers)

  def write(self, row: Mapping[str, Any]) -> None:
    """Writes one row to metrics.jsonl, TensorBoard and every tracker, in this order.

    Raises:
      TypeError: a value cannot be written as JSON (see `MetricsWriter.write`).
    """
    self.jsonl.write(row)
    self.tensorboard.write(row)
    for tracker in list(self.trackers):
      try:
        tracker.write(row)
      except Exception as error:  # noqa: BLE001 - a tracker never stops the run
        self._drop(tracker, 'failed to log a row', error)

  def truncate_after(self, step: int) -> None:
    """Removes the rows of metrics.jsonl logged after `step` (a resumed run)."""
    self.jsonl.truncate_after(step)

  def finish(self, status: str, artifacts: Iterable[str] = ()) -> None:
    """Sends `artifacts` (paths) to every tracker and closes it; flushes TensorBoard.

    Args:
      status: `tracking.FINISHED`, `INTERRUPTED` or `FAILED`.
      artifacts: files and folders that exist (the exported policy, config.yaml).
    """
    self.tensorboard.flush()
    for tracker in list(self.trackers):
      try:
        for path in artifacts:
          tracker.log_artifact(path)
        tracker.finish(status)
      except Exception as error:  # noqa: BLE001 - a tracker never stops the run
        self._drop(tracker, 'failed to finish', error)
    self.trackers = []

  def _drop(self, tracker: tracking.Tracker, what: str, error: BaseException) -> None:
    self.trackers.remove(tracker)
    tracking.warn(tracker.name, what, error)
