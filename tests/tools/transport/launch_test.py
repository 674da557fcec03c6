"""Starting a worker is not cut in the middle by a second stop signal."""

import multiprocessing
import signal
import unittest

from agents.tools import interrupts
from agents.tools.transport import launch


class _Process:
  """A stand-in process whose start receives a second stop signal half-way."""

  started = False

  def __init__(self, **kwargs):
    del kwargs

  def start(self):
    signal.raise_signal(signal.SIGINT)  # The user presses Ctrl-C again, mid-start.
    type(self).started = True


class _Context:
  """A multiprocessing context whose processes are `_Process`es."""

  def __init__(self):
    self._real = multiprocessing.get_context('spawn')

  def Pipe(self, duplex):  # noqa: N802 - multiprocessing's name.
    return self._real.Pipe(duplex=duplex)

  Process = _Process


class StartWorkerTest(unittest.TestCase):

  def setUp(self):
    saved = {signum: signal.getsignal(signum) for signum in interrupts.STOP_SIGNALS}
    self.addCleanup(lambda: [signal.signal(signum, handler) for signum, handler in saved.items()])

  def test_a_second_signal_aborts_only_once_the_start_is_done(self):
    with interrupts.StopRequest(notice=False):
      signal.raise_signal(signal.SIGINT)
      with self.assertRaises(interrupts.Aborted):
        launch.start_worker(_Context(), b'', [], name='worker')
    self.assertTrue(_Process.started)


if __name__ == '__main__':
  unittest.main()
