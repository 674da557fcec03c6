"""Tests of agents/run/directory_lock.py: one writer per directory."""

import os
import signal
import subprocess
import sys
import tempfile
import unittest

from agents.run import directory_lock

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_HOLDER = '''
import sys, time
from agents.run import directory_lock
with directory_lock.hold(sys.argv[1], 'training run'):
  print('held', flush=True)
  time.sleep(60)
'''


class DirectoryLockTest(unittest.TestCase):

  def setUp(self):
    self.directory = os.path.join(tempfile.mkdtemp(), 'run')

  def start_holder(self):
    holder = subprocess.Popen([sys.executable, '-c', _HOLDER, self.directory],
                              stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=_ROOT))
    self.addCleanup(holder.wait)
    self.addCleanup(holder.kill)
    self.assertEqual(holder.stdout.readline().strip(), 'held')
    return holder

  def test_a_second_holder_is_refused_with_the_first_ones_pid(self):
    holder = self.start_holder()
    with self.assertRaisesRegex(directory_lock.DirectoryBusyError,
                                rf'Training run {self.directory} is in use by another '
                                rf'process \(pid {holder.pid}: '):
      with directory_lock.hold(self.directory, 'training run'):
        self.fail('the lock was granted twice')

  def test_a_killed_holder_leaves_no_stale_lock(self):
    holder = self.start_holder()
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with directory_lock.hold(self.directory):
      pass

  def test_the_lock_is_released_at_the_end_of_the_block_and_creates_the_directory(self):
    with directory_lock.hold(self.directory):
      self.assertTrue(os.path.isdir(self.directory))
    with directory_lock.hold(self.directory):
      pass

  def test_holds_nest_within_one_process_and_release_at_the_outermost_end(self):
    with directory_lock.hold(self.directory):
      with directory_lock.hold(os.path.join(self.directory, '.')):
        pass
      holder = subprocess.run([sys.executable, '-c', _HOLDER.replace('time.sleep(60)', ''),
                               self.directory], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=_ROOT))
      self.assertIn('DirectoryBusyError', holder.stderr)
    holder = subprocess.run([sys.executable, '-c', _HOLDER.replace('time.sleep(60)', ''),
                             self.directory], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=_ROOT))
    self.assertEqual(holder.stdout.strip(), 'held')


if __name__ == '__main__':
  unittest.main()
