"""Starting a worker is not cut in the middle by a second stop signal."""

import multiprocessing
import signal
import unittest

from agents.tools import interrupts
from agents.tools.transport import launch


class _Context:
  """A multiprocessing context whose process receives a second stop signal mid-start."""

  def __init__(self):
    self._real = multiprocessing.get_context('spawn')
    self.pipes = []
    self.started = False

  def Pipe(self, duplex):  # noqa: N802 - multiprocessing's name.
    pipe = self._real.Pipe(duplex=duplex)
    self.pipes.extend(pipe)
    return pipe

  def Process(self, **kwargs):  # noqa: N802 - multiprocessing's name.
    del kwargs
    context = self

    class _Process:
      def start(self):
        signal.raise_signal(signal.SIGINT)  # The user presses Ctrl-C again, mid-start.
        context.started = True

    return _Process()


class StartWorkerTest(unittest.TestCase):

  def setUp(self):
    saved = {signum: signal.getsignal(signum) for signum in interrupts.STOP_SIGNALS}
    self.addCleanup(lambda: [signal.signal(signum, handler) for signum, handler in saved.items()])

  def test_a_second_signal_aborts_only_once_the_start_is_done(self):
    context = _Context()
    self.addCleanup(lambda: [connection.close() for connection in context.pipes])
    with interrupts.StopRequest(notice=False):
      signal.raise_signal(signal.SIGINT)
      with self.assertRaises(interrupts.Aborted):
        launch.start_worker(context, b'', [], name='worker')
    self.assertTrue(context.started)


if __name__ == '__main__':
  unittest.main()
