"""Process helpers shared by the tests of workers and batches."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pid_exists(pid):
  """Whether a process with this pid exists (a zombie counts)."""
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  return True
