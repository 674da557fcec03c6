"""One writer per directory: a run, an evaluation's output or an experiment at a time.

    with directory_lock.hold(run_dir, 'training run'):
      ...   # a second process that tries the same directory gets DirectoryBusyError

The lock is an advisory `flock` on the directory itself, so taking it writes nothing,
and the kernel releases it when the holder exits, however it exits (SIGKILL
included): a crashed run never leaves a stale lock behind. The error names the
holder's pid and command line (read from /proc/locks on Linux). Holds nest within one
process (the train command holds its run, and so does `training.train` inside it).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

_held: dict[str, int] = {}  # real path -> how many nested holds of this process


class DirectoryBusyError(RuntimeError):
  """Another process holds the directory; the message names the directory and holder."""


@contextlib.contextmanager
def hold(directory: str, what: str = 'directory') -> Iterator[None]:
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
  descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
  try:
    try:
      fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
      raise DirectoryBusyError(
          f'{what.capitalize()} {directory} is in use by another process '
          f'({_holder(os.fstat(descriptor).st_ino)}); wait for it to end or pick another '
          'directory.') from None
    _held[key] = 1
    try:
      yield
    finally:
      del _held[key]
  finally:
    os.close(descriptor)  # Closing releases the lock.


def _holder(inode: int) -> str:
  """'pid N: command line' of the process holding a flock on `inode`, if the system says."""
  try:
    with open('/proc/locks', encoding='utf-8') as locks:
      for line in locks:  # '1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF'
        fields = line.split()
        if 'FLOCK' not in fields or '->' in fields:
          continue
        position = fields.index('FLOCK')
        pid, where = fields[position + 3:position + 5]
        if where.rsplit(':', 1)[-1] == str(inode):
          return f'pid {pid}: {_command_line(pid)}'
  except OSError:
    pass
  return 'holder unknown'


def _command_line(pid: int | str) -> str:
  try:
    with open(f'/proc/{pid}/cmdline', 'rb') as file:
      return ' '.join(file.read().replace(b'\0', b' ').decode(errors='replace').split())[:400]
  except OSError:
    return 'command line unknown'
