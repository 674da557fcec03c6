"""Appends scalar rows to a plain `metrics.jsonl` that anything can read without TensorFlow.

Each line is one JSON object, e.g. `{"step": 4000, "phase": "train",
"mean_score": 12.5, ...}`; `pandas.read_json(path, lines=True)` or
`read_metrics(path)` loads the file. Missing values are written as `null`,
never as `NaN`, which is not JSON. A line cut off by a killed process is
skipped when reading, and removed when a resumed run truncates the file back
to its checkpoint's step.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any


class MetricsWriter:
  """Writes metric rows to a JSON-lines file, one flushed line per row."""

  def __init__(self, path: str) -> None:
    """Opens nothing yet; rows are appended on `write`.

    Args:
      path: file to append to; its folder is created when missing.
    """
    self.path = path

  def write(self, row: Mapping[str, Any]) -> None:
    """Appends one row and flushes it to the operating system.

    Args:
      row: mapping from names to JSON-compatible values; non-finite floats
        become `null`.

    Raises:
      TypeError: a value cannot be written as JSON (the message names it).
    """
    clean = {key: _finite_or_none(value) for key, value in row.items()}
    try:
      line = json.dumps(clean, allow_nan=False, sort_keys=False)
    except (TypeError, ValueError) as error:
      raise TypeError(f'Metrics row {clean!r} is not JSON-compatible: {error}') from error
    os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
    with open(self.path, 'a', encoding='utf-8') as file:
      file.write(line + '\n')

  def truncate_after(self, step: int) -> None:
    """Removes rows logged after `step` (and any cut-off line), atomically.

    A run resumed from a checkpoint at `step` logs the following steps again;
    without this the file would hold two rows for them.

    Args:
      step: the global step restored from the checkpoint.
    """
    if not os.path.exists(self.path):
      return
    kept = [row for row in read_metrics(self.path) if row.get('step', 0) <= step]
    temporary = self.path + '.tmp'
    with open(temporary, 'w', encoding='utf-8') as file:
      for row in kept:
        file.write(json.dumps(row) + '\n')
      file.flush()
      os.fsync(file.fileno())
    os.replace(temporary, self.path)


def final_score(path: str, phase: str = 'train', tag: str = 'mean_score') -> float | None:
  """A run's score: the last non-null `tag` of its `phase` rows in metrics.jsonl, or None.

  The one definition of a run's final score: training returns it, and the experiment
  manager's tables, comparisons and plots read the same rows.
  """
  if not os.path.exists(path):
    return None
  values = [row[tag] for row in read_metrics(path)
            if row.get('phase') == phase and row.get(tag) is not None]
  return values[-1] if values else None


def read_metrics(path: str) -> list[dict[str, Any]]:
  """Reads all complete rows of a metrics file.

  Args:
    path: a `metrics.jsonl` file.

  Returns:
    List of dicts, in file order; lines that are not complete JSON objects
    (a write cut off by a killed process) are skipped.
  """
  with open(path, encoding='utf-8') as file:
    return parse_rows(file)


def parse_rows(lines: Iterable[str]) -> list[dict[str, Any]]:
  """The rows of `lines` (str or bytes) that are complete JSON objects, in order."""
  rows = []
  for line in lines:
    try:
      row = json.loads(line)
    except json.JSONDecodeError:
      continue
    if isinstance(row, dict):
      rows.append(row)
  return rows


def _finite_or_none(value: Any) -> Any:
  if isinstance(value, float) and not math.isfinite(value):
    return None
  if hasattr(value, 'item') and not isinstance(value, (list, dict, str)):
    value = value.item()  # NumPy scalars.
    if isinstance(value, float) and not math.isfinite(value):
      return None
  return value
