"""Runs a command's `main(argv)` in this process and signals this process while it runs.

For the tests of a run stopped by SIGTERM whose point is the run's handling of the
signal, not a separate process (that costs a TensorFlow start-up): a watcher thread
polls a condition (a metrics row, say), optionally does something while the run goes on
(start a second writer, say), then sends the signal to this process. Python runs the
run's handler in the main thread, where `main` runs, as it would in `python -m ...`.
"""

import os
import signal
import tempfile
import threading
import time

from tests.helpers import commands


def _start_helper_processes():
  """Starts multiprocessing's resource tracker and the workers' forkserver, unless they
  run: started while the file descriptor 2 is captured, they (and every worker forked
  later) would keep the capture file as their stderr for the rest of this process."""
  from multiprocessing import forkserver, resource_tracker

  from agents.tools.transport import launch
  resource_tracker.ensure_running()
  if launch.default_context() == 'forkserver':
    launch.get_context('forkserver')  # Sets the workers' preload.
    with launch.main_module_hidden():
      forkserver.ensure_running()


def run_and_signal(test, main, argv, ready, signum=signal.SIGTERM, meanwhile=None,
                   timeout=180, stdout=None):
  """Runs `main(argv)` here; once `ready()` is true, `meanwhile()`, then `signum` to us.

  Args:
    test: the running TestCase (see `commands.run_main`).
    main: the command's main.
    argv: its arguments.
    ready: polled (every 20 ms) in the watcher thread while `main` runs.
    signum: the signal sent once `ready()` is true (and `meanwhile` returned).
    meanwhile: called in the watcher thread before the signal, while `main` runs.
    timeout: seconds to wait for `ready()`; then the signal is sent anyway and the test
      fails.
    stdout: a `StringIO` for what the command prints, if wanted.

  Returns:
    (exit code, stderr, what `meanwhile` returned). The stderr includes what was written
    to the file descriptor 2 directly (a signal handler's notice, say).
  """
  done = threading.Event()
  outcome = {}

  def watch():
    deadline = time.monotonic() + timeout
    try:
      while not ready():
        if done.is_set():
          return
        if time.monotonic() > deadline:
          raise AssertionError(f'ready() stayed false for {timeout} s')
        time.sleep(0.02)
      if meanwhile is not None:
        outcome['value'] = meanwhile()
    except BaseException as error:  # Reported in the test's thread.
      outcome['error'] = error
    finally:
      if not done.is_set():
        os.kill(os.getpid(), signum)

  _start_helper_processes()
  # A signal that arrives after `main` put back the handlers it found must not end the
  # test process: the handler it finds ignores it.
  previous = signal.signal(signum, lambda *_: None)
  test.addCleanup(signal.signal, signum, previous)
  watcher = threading.Thread(target=watch, daemon=True)
  with tempfile.TemporaryFile() as descriptor_2:
    saved = os.dup(2)
    os.dup2(descriptor_2.fileno(), 2)
    try:
      watcher.start()
      try:
        code, stderr = commands.run_main(test, main, argv, stdout)
      finally:
        done.set()
        watcher.join(timeout)
    finally:
      os.dup2(saved, 2)
      os.close(saved)
    descriptor_2.seek(0)
    written = descriptor_2.read().decode(errors='replace')
  if 'error' in outcome:
    raise outcome['error']
  return code, written + stderr, outcome.get('value')
