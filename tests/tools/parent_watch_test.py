"""Tests of agents/tools/parent_watch.py: the watcher of a parent's death."""

import os
import subprocess
import sys
import threading
import unittest

from agents.tools import parent_watch

# Generous: the watch reacts at once; this only bounds a broken test.
_WAIT_SECONDS = 30


class ParentWatchTest(unittest.TestCase):

  def _watch(self, pid, **kwargs):
    died = threading.Event()
    watch = parent_watch.ParentWatch(pid, died.set, **kwargs)
    watch.start()
    return watch, died

  def test_the_death_of_the_watched_process_calls_on_death(self):
    process = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])
    self.addCleanup(process.wait)
    _, died = self._watch(process.pid)
    self.assertFalse(died.is_set())
    process.kill()
    self.assertTrue(died.wait(_WAIT_SECONDS))

  def test_a_process_already_gone_calls_on_death(self):
    process = subprocess.Popen([sys.executable, '-c', 'pass'])
    process.wait()
    self.assertFalse(parent_watch.pid_alive(process.pid))
    _, died = self._watch(process.pid)
    self.assertTrue(died.wait(_WAIT_SECONDS))

  def test_a_hung_up_pipe_counts_as_the_parents_death(self):
    reader, writer = os.pipe()
    self.addCleanup(os.close, reader)
    _, died = self._watch(os.getpid(), hangup_fd=reader)  # This process lives on.
    os.close(writer)  # What the kernel does to the parent's end when the parent dies.
    self.assertTrue(died.wait(_WAIT_SECONDS))

  def test_a_stopped_watch_calls_nothing(self):
    reader, writer = os.pipe()
    self.addCleanup(os.close, reader)
    watch, died = self._watch(os.getpid(), hangup_fd=reader)
    watch.stop()
    os.close(writer)
    self.assertTrue(watch.join(_WAIT_SECONDS))  # It ends at the hang-up, calling nothing.
    self.assertFalse(died.is_set())


if __name__ == '__main__':
  unittest.main()
