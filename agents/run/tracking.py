"""Experiment trackers: back-ends that receive a run's rows beside metrics.jsonl and TensorBoard.

Every row a run logs (the loop's train and eval rows, the algorithm's update rows, an
evaluation suite's rows) goes to `metrics.jsonl` and TensorBoard, always, and to each
tracker that the config's `loop.track` names (`agents.run.run_metrics` fans it out):

    loop.track: [mlflow, wandb]        # python -m agents.scripts.train --track=mlflow,wandb

A tracker is a `Tracker`. `start` opens its run, or reopens the one it opened before
when the run is resumed, with the resolved config as the run's parameters; `write`
takes every row as it is logged (the row's `step` as the step); `log_artifact` takes
the exported policy folder and `config.yaml` at the end; `finish` closes the run as
finished, interrupted or failed. The names resolve through `agents.plugins.TRACKERS`
('mlflow' and 'wandb' are the framework's own), so a package can register its own.

A tracker that cannot start (its package is not installed, its server refuses the
connection) costs one warning line at start-up, and the run goes on without it; one that
fails later is dropped after one line. Neither stops the run, and neither touches the
local logs.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
import urllib.parse
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from agents import plugins

_LOG = logging.getLogger(__name__)

FINISHED = 'finished'
INTERRUPTED = 'interrupted'
FAILED = 'failed'

# Row fields that say where a row belongs rather than what was measured.
BOOKKEEPING = ('step', 'phase', 'phase_step', 'wall_time')

# Seconds to wait for a tracking server to accept a connection before giving up on it
# (the clients' own retries would hold the start of the run for minutes).
CONNECT_TIMEOUT = 5.0


class TrackerUnavailableError(RuntimeError):
  """A tracker cannot run: its package is missing, or its server cannot be reached."""


@dataclasses.dataclass(frozen=True)
class TrackedRun:
  """What a tracker is told about the run it tracks.

  Attributes:
    name: the run's name in the tracker (a fit's is '<experiment>-fit<k>').
    group: the experiment that groups runs (MLflow's experiment, W&B's group), or
      None for the tracker's default.
    run_dir: the run directory.
    config: the resolved config (nested mapping).
    params: the same config as {dotted key: value}, the run's parameters.
  """
  name: str
  group: str | None
  run_dir: str
  config: dict
  params: dict


class Tracker:
  """The interface of an experiment tracker; subclasses are built with no argument."""

  name = 'tracker'

  def start(self, run: TrackedRun,
            previous: Mapping[str, Any] | None = None) -> Mapping[str, Any] | None:
    """Opens the tracker's run, or reopens `previous` (a resumed run).

    Args:
      run: the `TrackedRun`.
      previous: what `start` returned when the run started before (kept in the run's
        `run.yaml`), or None.

    Returns:
      A plain mapping that identifies the tracker's run (kept in `run.yaml` so that a
      resumed run reopens it), or None.

    Raises:
      TrackerUnavailableError: or any other error; the run goes on without the tracker.
    """
    raise NotImplementedError

  def write(self, row: Mapping[str, Any]) -> None:
    """Takes one metrics row, as written to metrics.jsonl."""
    raise NotImplementedError

  def log_artifact(self, path: str) -> None:
    """Uploads a file or a folder (the exported policy, config.yaml) to the run."""

  def finish(self, status: str) -> None:
    """Closes the run; `status` is FINISHED, INTERRUPTED or FAILED."""


def parse_names(text: str) -> list[str]:
  """The tracker names of a `--track=mlflow,wandb` flag, as a list ('' gives none)."""
  return [name.strip() for name in text.split(',') if name.strip()]


def check_names(names: Sequence[str]) -> None:
  """Checks that every name of `loop.track` is a registered tracker.

  Raises:
    ConfigError: naming 'loop.track', the unknown name and the registered ones.
  """
  for name in names:
    plugins.TRACKERS.get(name)


def start(
    names: Sequence[str], run: TrackedRun,
    previous: Mapping[str, Mapping[str, Any] | None] | None = None,
) -> tuple[list[Tracker], dict[str, Mapping[str, Any]]]:
  """Starts the named trackers; one that cannot start is a warning line, then left out.

  Args:
    names: the config's `loop.track`.
    run: the `TrackedRun`.
    previous: {name: what its `start` returned before} for a resumed run.

  Returns:
    (trackers, states): the started trackers, and {name: state to keep}.
  """
  previous = previous or {}
  trackers, states = [], {}
  for name in names:
    tracker = plugins.TRACKERS.get(name)()
    tracker.name = name
    try:
      states[name] = tracker.start(run, previous.get(name))
    except Exception as error:  # noqa: BLE001 - any failure leaves the tracker out, said once
      warn(name, 'cannot start', error)
      continue
    trackers.append(tracker)
  return trackers, states


def warn(name: str, what: str, error: BaseException) -> None:
  """Logs the one line that says a tracker is off, and that the local logs are not."""
  _LOG.warning('Tracker %r %s (%s); it is off for this run, metrics.jsonl and TensorBoard '
               'are written as usual.', name, what, reason(error))


def reason(error: BaseException) -> str:
  """The first line of an error's message, or its type's name."""
  lines = [line.strip() for line in str(error).splitlines() if line.strip()]
  return lines[0] if lines else type(error).__name__


def import_client(module: str, extra: str) -> ModuleType:
  """Imports a tracker's client package.

  Raises:
    TrackerUnavailableError: it is not installed; the message names the extra to install.
  """
  import importlib
  try:
    return importlib.import_module(module)
  except ImportError as error:
    raise TrackerUnavailableError(
        f"{module} is not installed: pip install 'batchppo-agents[{extra}]' ({error})") from None


def check_reachable(url: str, what: str) -> None:
  """Raises unless the host of an http(s) `url` accepts a connection (other URLs pass).

  Raises:
    TrackerUnavailableError: naming `what`, the URL and the reason (refused, no route,
      unknown host, timed out).
  """
  parsed = urllib.parse.urlparse(url)
  if parsed.scheme not in ('http', 'https') or not parsed.hostname:
    return
  port = parsed.port or (443 if parsed.scheme == 'https' else 80)
  try:
    with socket.create_connection((parsed.hostname, port), timeout=CONNECT_TIMEOUT):
      pass
  except OSError as error:
    cause = error.strerror or type(error).__name__
    raise TrackerUnavailableError(f'cannot reach {what} at {url}: {cause}') from None


def measurements(row: Mapping[str, Any]) -> dict[str, float]:
  """{'<phase>/<name>': float} of a row's measured numbers (None and text left out)."""
  phase = row.get('phase', 'train')
  values = {}
  for key, value in row.items():
    if key in BOOKKEEPING or isinstance(value, bool) or value is None:
      continue
    if hasattr(value, 'item'):
      value = value.item()  # NumPy scalars.
    if isinstance(value, (int, float)):
      values[f'{phase}/{key}'] = float(value)
  return values
