"""Turns SIGINT and SIGTERM into a request to stop at the next safe point; a second one aborts.

Ctrl-C (SIGINT) and SIGTERM, which schedulers, `kill` and `docker stop` send,
mean the same here: finish the current step, save a checkpoint, exit. Inside
`with StopRequest() as stop:` the first of them only sets `stop.requested`
(and writes one line on stderr saying so); the training loop polls it between
fused calls. A second one raises `Aborted` at once, wherever the main thread is:
nothing is saved. `Aborted` is a `KeyboardInterrupt`, so `except Exception`
does not swallow it and `finally` blocks still close the workers; a command
line catches it and prints one line instead of a traceback:

    try:
      with interrupts.StopRequest() as stop:
        ...   # between steps: if stop.requested: save and return
    except KeyboardInterrupt as error:   # Aborted, or Ctrl-C before the handlers
      print(interrupts.describe(error), file=sys.stderr)
      return interrupts.exit_code(error)

Leaving the block restores the handlers that were there before. Python runs
signal handlers in the main thread only, between bytecodes, so a signal that
arrives during a long TensorFlow call takes effect when the call returns.

A few steps must not be cut in the middle: starting a worker hands file
descriptors to the forkserver, which prints a traceback of its own when the
parent stops half-way. Inside `with interrupts.deferred_abort():` a second
signal's `Aborted` waits for the end of the block.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterable, Iterator
from types import FrameType
from typing import Any, Literal

# Depth of nested `deferred_abort` blocks and the abort they hold back (main thread only,
# where Python runs signal handlers).
_deferral: dict[str, Any] = {'depth': 0, 'pending': None}

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Aborted(KeyboardInterrupt):
  """A second stop signal: stop at once, without saving.

  Attributes:
    signum: the number of the signal that aborted.
  """

  def __init__(self, signum: int) -> None:
    self.signum = signum
    super().__init__(f'{signal.Signals(signum).name} received twice; aborted without saving.')


class StopRequest:
  """Context manager: the first SIGINT or SIGTERM requests a stop, the second aborts.

  Attributes:
    signum: the number of the first signal received, or None.
  """

  def __init__(self, signals: Iterable[int] = STOP_SIGNALS, notice: bool = True) -> None:
    """Prepares the handlers; they are installed by `with`.

    Args:
      signals: the signals to handle.
      notice: write one line on stderr at the first signal, saying what happens
        next.
    """
    self.signum: int | None = None
    self._signals = tuple(signals)
    self._notice = notice
    self._previous: dict[int, Any] = {}

  @property
  def requested(self) -> bool:
    """Whether a stop signal arrived."""
    return self.signum is not None

  @property
  def signal_name(self) -> str | None:
    """Name of the first signal received ('SIGINT', 'SIGTERM'), or None."""
    return None if self.signum is None else signal.Signals(self.signum).name

  def install(self) -> StopRequest:
    """Installs the handlers (what `with` does on entry); returns self.

    Outside the main thread, where `signal.signal` cannot be called, nothing
    is installed and the process keeps its handlers.
    """
    if not self._previous and threading.current_thread() is threading.main_thread():
      for signum in self._signals:
        self._previous[signum] = signal.signal(signum, self._handle)
    return self

  def uninstall(self) -> None:
    """Puts back the handlers found by `install` (what `with` does on exit)."""
    for signum, handler in self._previous.items():
      # None: the previous handler was not installed from Python.
      signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    self._previous = {}

  def __enter__(self) -> StopRequest:
    return self.install()

  def __exit__(self, *exc_info: object) -> Literal[False]:
    self.uninstall()
    return False

  def _handle(self, signum: int, frame: FrameType | None) -> None:
    del frame
    if self.signum is not None:
      if _deferral['depth']:
        _deferral['pending'] = _deferral['pending'] or Aborted(signum)
        return
      raise Aborted(signum)
    self.signum = signum
    if self._notice:
      again = 'Ctrl-C' if signum == signal.SIGINT else signal.Signals(signum).name
      # os.write, not print: the signal may have interrupted a write to sys.stderr.
      os.write(2, (f'\n{signal.Signals(signum).name}: stopping at the next report with a '
                   f'checkpoint; {again} again aborts without saving.\n').encode())


@contextlib.contextmanager
def deferred_abort() -> Iterator[None]:
  """Holds back a second stop signal's `Aborted` until the block ends, then raises it.

  For short steps that must not be cut in the middle (a worker's start). The first
  signal's stop request is not affected: it only sets a flag.
  """
  _deferral['depth'] += 1
  try:
    yield
  finally:
    _deferral['depth'] -= 1
  if not _deferral['depth'] and _deferral['pending'] is not None:
    pending, _deferral['pending'] = _deferral['pending'], None
    raise pending  # pylint: disable=raising-bad-type


def exit_code(stopped_by: int | str | StopRequest | BaseException) -> int:
  """The shell's exit code for a run stopped by a signal: 128 + its number.

  Args:
    stopped_by: a signal number or name, a `StopRequest` that was requested,
      an `Aborted`, or a plain `KeyboardInterrupt` (SIGINT).

  Returns:
    130 for SIGINT, 143 for SIGTERM.
  """
  if isinstance(stopped_by, str):
    return 128 + signal.Signals[stopped_by]
  if isinstance(stopped_by, int):
    return 128 + stopped_by
  return 128 + int(getattr(stopped_by, 'signum', None) or signal.SIGINT)


def describe(error: BaseException) -> str:
  """One line for the user about a `KeyboardInterrupt` (or `Aborted`) that ended the run."""
  if isinstance(error, Aborted):
    return str(error)
  return 'interrupted by SIGINT during start-up; nothing was saved.'
