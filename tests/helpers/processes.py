"""Process helpers shared by the tests of workers and batches."""

import contextlib
import os
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pid_exists(pid):
  """Whether a process with this pid exists (a zombie counts)."""
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  return True


@contextlib.contextmanager
def captured_fd2():
  """Captures what is written to file descriptor 2 (signal handlers write there with
  `os.write`, below `sys.stderr`) inside the block; yields a list that then holds the text."""
  captured = []
  with tempfile.TemporaryFile() as capture:
    saved = os.dup(2)
    os.dup2(capture.fileno(), 2)
    try:
      yield captured
    finally:
      os.dup2(saved, 2)
      os.close(saved)
      capture.seek(0)
      captured.append(capture.read().decode(errors='replace'))
