"""Tests of agents/tools/interrupts.py: first signal requests a stop, second aborts."""

import signal
import threading
import unittest

from agents import tensorflow_start
from agents.tools import interrupts


def _previous_handler(signum, frame):
  del signum, frame


class StopRequestTest(unittest.TestCase):

  def setUp(self):
    self._saved = {signum: signal.getsignal(signum) for signum in interrupts.STOP_SIGNALS}
    self.addCleanup(self._restore)

  def _restore(self):
    for signum, handler in self._saved.items():
      signal.signal(signum, handler)

  def test_first_signal_requests_a_stop(self):
    for signum in interrupts.STOP_SIGNALS:
      with interrupts.StopRequest(notice=False) as stop:
        self.assertFalse(stop.requested)
        signal.raise_signal(signum)
        self.assertTrue(stop.requested)
        self.assertEqual(stop.signum, signum)
        self.assertEqual(stop.signal_name, signal.Signals(signum).name)

  def test_second_signal_aborts(self):
    with interrupts.StopRequest(notice=False) as stop:
      signal.raise_signal(signal.SIGTERM)
      with self.assertRaises(interrupts.Aborted) as raised:
        signal.raise_signal(signal.SIGINT)
    self.assertEqual(stop.signum, signal.SIGTERM)
    self.assertEqual(raised.exception.signum, signal.SIGINT)
    self.assertIsInstance(raised.exception, KeyboardInterrupt)
    self.assertEqual(str(raised.exception), 'SIGINT received twice; aborted without saving.')

  def test_an_abort_waits_for_the_end_of_a_deferred_block(self):
    steps = []
    with interrupts.StopRequest(notice=False):
      signal.raise_signal(signal.SIGINT)
      with self.assertRaises(interrupts.Aborted) as raised:
        with interrupts.deferred_abort():
          with interrupts.deferred_abort():
            signal.raise_signal(signal.SIGTERM)
            steps.append('inner')
          steps.append('outer')
      steps.append('after')
    self.assertEqual(steps, ['inner', 'outer', 'after'])
    self.assertEqual(raised.exception.signum, signal.SIGTERM)
    # Nothing is left pending: a later block ends quietly.
    with interrupts.deferred_abort():
      pass

  def test_previous_handlers_come_back(self):
    signal.signal(signal.SIGTERM, _previous_handler)
    with self.assertRaises(interrupts.Aborted):
      with interrupts.StopRequest(notice=False):
        self.assertIsNot(signal.getsignal(signal.SIGTERM), _previous_handler)
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)
    self.assertIs(signal.getsignal(signal.SIGTERM), _previous_handler)
    self.assertIs(signal.getsignal(signal.SIGINT), self._saved[signal.SIGINT])

  def test_notice_is_written_once(self):
    # The notice goes to file descriptor 2 with os.write; capture it there.
    with tensorflow_start.captured_stderr_descriptor() as captured:
      with interrupts.StopRequest() as stop:
        signal.raise_signal(signal.SIGTERM)
    text = captured[0]
    self.assertTrue(stop.requested)
    self.assertEqual(text.strip(), 'SIGTERM: stopping at the next report with a checkpoint; '
                                   'SIGTERM again aborts without saving.')

  def test_install_and_uninstall_without_with(self):
    stop = interrupts.StopRequest(notice=False).install()
    try:
      stop.install()  # a second install keeps the handlers found by the first
      signal.raise_signal(signal.SIGTERM)
      self.assertTrue(stop.requested)
    finally:
      stop.uninstall()
    self.assertIs(signal.getsignal(signal.SIGTERM), self._saved[signal.SIGTERM])

  def test_outside_the_main_thread_nothing_is_installed(self):
    results = []

    def enter():
      with interrupts.StopRequest(notice=False) as stop:
        results.append((stop.requested, signal.getsignal(signal.SIGTERM)))

    thread = threading.Thread(target=enter)
    thread.start()
    thread.join()
    self.assertEqual(results, [(False, self._saved[signal.SIGTERM])])

  def test_exit_codes_and_lines(self):
    self.assertEqual(interrupts.exit_code(interrupts.Aborted(signal.SIGTERM)), 143)
    self.assertEqual(interrupts.exit_code(KeyboardInterrupt()), 130)
    stop = interrupts.StopRequest()
    stop.signum = signal.SIGTERM
    self.assertEqual(interrupts.exit_code(stop), 143)
    self.assertEqual(interrupts.exit_code('SIGTERM'), 143)
    self.assertEqual(interrupts.exit_code(signal.SIGINT), 130)
    self.assertEqual(interrupts.describe(interrupts.Aborted(signal.SIGINT)),
                     'SIGINT received twice; aborted without saving.')
    self.assertIn('nothing was saved', interrupts.describe(KeyboardInterrupt()))


if __name__ == '__main__':
  unittest.main()
