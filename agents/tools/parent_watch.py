"""Notices that a parent process died: the one watcher of every process that must not
outlive the process that started it (environment workers, experiment fits).

A daemon thread sleeps in one `poll` on a pidfd of the parent (Linux: readable once the
parent exits) and, if given, on a pipe whose other end the parent holds (it hangs up
when the parent dies, since the kernel then closes the parent's descriptors). Without
pidfd it checks the parent's pid every `poll_seconds`. It costs nothing while the
parent lives; what a death means (exit at once, or stop cleanly) is the caller's
`on_death`.
"""

import os
import select
import threading


def pid_alive(pid):
  """Whether a process `pid` exists (a zombie not yet reaped counts as alive)."""
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:
    return True  # It exists, under another user.
  return True


class ParentWatch:
  """Calls `on_death()` once, from a daemon thread, when the process `parent_pid` exits.

      watch = ParentWatch(os.getppid(), lambda: os.kill(os.getpid(), signal.SIGINT))
      watch.start()
      ...
      watch.stop()  # Leaving on our own: a death from now on calls nothing.
  """

  def __init__(self, parent_pid, on_death, hangup_fd=None, poll_seconds=0.5,
               name='parent-watch'):
    """Prepares the watch; `start` starts it.

    Args:
      parent_pid: the process id to watch.
      on_death: function of no argument called when that process has exited.
      hangup_fd: optional file descriptor of a pipe whose other end the parent holds;
        its hang-up counts as the parent's death, and its closing by this process
        (invalid descriptor) ends the watch quietly.
      poll_seconds: how often the pid is checked where pidfd is missing.
      name: the thread's name.
    """
    self._parent_pid = parent_pid
    self._on_death = on_death
    self._hangup_fd = hangup_fd
    self._poll_milliseconds = int(poll_seconds * 1000)
    self._stopped = False
    self._thread = threading.Thread(target=self._watch, name=name, daemon=True)

  def start(self):
    """Starts the watching thread."""
    self._thread.start()

  def stop(self):
    """Disarms the watch: this process is leaving on its own."""
    self._stopped = True

  def join(self, timeout=None):
    """Waits up to `timeout` seconds for the thread to end; returns whether it has.

    The thread ends after calling `on_death`, or at the first event after `stop`.
    """
    self._thread.join(timeout)
    return not self._thread.is_alive()

  def _watch(self):
    poller = select.poll()
    if self._hangup_fd is not None:
      poller.register(self._hangup_fd, 0)  # POLLHUP and POLLERR are always reported.
    timeout, pidfd = self._poll_milliseconds, None
    try:
      pidfd = os.pidfd_open(self._parent_pid)
      poller.register(pidfd, select.POLLIN)
      timeout = None
    except ProcessLookupError:
      self._died()
      return
    except (AttributeError, OSError):
      pass  # No pidfd here: fall back to checking the pid.
    try:
      while True:
        events = poller.poll(timeout)
        if self._stopped:
          return
        if any(fd != self._hangup_fd or event & (select.POLLHUP | select.POLLERR)
               for fd, event in events):
          self._died()
          return
        if events and all(event & select.POLLNVAL for _, event in events):
          return  # This process closed the pipe: it is leaving on its own.
        if timeout is not None and not pid_alive(self._parent_pid):
          self._died()
          return
    finally:
      if pidfd is not None:
        os.close(pidfd)

  def _died(self):
    if not self._stopped:
      self._on_death()
