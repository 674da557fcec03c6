"""One writer per directory: a run, an evaluation's output or an experiment at a time.

    with directory_lock.hold(run_dir, 'training run'):
      ...   # a second process that tries the same directory gets DirectoryBusyError

The lock is an advisory `flock` on `<directory>/.lock`, which records the holder's pid
and command line for the error message. The kernel releases it when the holder exits,
however it exits (SIGKILL included), so a crashed run never leaves a stale lock behind.
A refused process has written nothing: the lock is taken before anything else.
Holds nest within one process (the train command holds its run, and so does
`training.train` inside it).
"""

import contextlib
import fcntl
import os
import sys

LOCK_NAME = '.lock'

_held = {}  # real path -> how many nested holds of this process


class DirectoryBusyError(RuntimeError):
  """Another process holds the directory; the message names the directory and holder."""


@contextlib.contextmanager
def hold(directory, what='directory'):
  """Holds `directory` (created when missing) for this process until the block ends.

  Args:
    directory: the directory to hold.
    what: what the directory is, for the error message ('training run', ...).

  Raises:
    DirectoryBusyError: another process holds it.
  """
  os.makedirs(directory, exist_ok=True)
  key = os.path.realpath(directory)
  if key in _held:
    _held[key] += 1
    try:
      yield
    finally:
      _held[key] -= 1
    return
  path = os.path.join(directory, LOCK_NAME)
  descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
  try:
    try:
      fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
      holder = os.pread(descriptor, 4096, 0).decode(errors='replace').strip()
      raise DirectoryBusyError(
          f'{what.capitalize()} {directory} is in use by another process '
          f'({holder or "unknown"}); wait for it to end or pick another directory.') from None
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, f'pid {os.getpid()}: {" ".join(sys.argv)[:400]}'.encode(), 0)
    _held[key] = 1
    try:
      yield
    finally:
      del _held[key]
  finally:
    os.close(descriptor)  # Closing releases the lock.
