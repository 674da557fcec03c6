"""Tests of agents/run/checkpoints.py: damaged checkpoints, leftovers and the state file."""

import os
import tempfile
import unittest

import tensorflow as tf

from agents.run import checkpoints


def _saved(directory, steps):
  """Saves one checkpoint per step of a variable holding that step; returns the manager."""
  variable = tf.Variable(0, dtype=tf.int64)
  checkpoint = tf.train.Checkpoint(variable=variable)
  manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=10,
                                       checkpoint_name='ckpt')
  for step in steps:
    variable.assign(step)
    manager.save(checkpoint_number=step)
  return manager


def _restored_value(directory):
  """Restores into a fresh variable; returns (path, value)."""
  variable = tf.Variable(-1, dtype=tf.int64)
  path = checkpoints.restore_newest(tf.train.Checkpoint(variable=variable), directory)
  return path, int(variable.numpy())


def _data_file(path):
  return f'{path}.data-00000-of-00001'


class RestoreNewestTest(unittest.TestCase):

  def setUp(self):
    self.directory = tempfile.mkdtemp()

  def test_restores_the_latest(self):
    _saved(self.directory, [10, 20, 30])
    path, value = _restored_value(self.directory)
    self.assertEqual((os.path.basename(path), value), ('ckpt-30', 30))

  def test_empty_folder_restores_nothing(self):
    self.assertEqual(checkpoints.restore_newest(tf.train.Checkpoint(), self.directory), None)
    missing = os.path.join(self.directory, 'missing')
    self.assertEqual(checkpoints.restore_newest(tf.train.Checkpoint(), missing), None)

  def test_damaged_checkpoints_are_skipped_with_a_warning_each(self):
    _saved(self.directory, [10, 20, 30])
    os.truncate(_data_file(os.path.join(self.directory, 'ckpt-30')), 10)
    os.truncate(os.path.join(self.directory, 'ckpt-20.index'), 5)
    with self.assertLogs(checkpoints._LOG, 'WARNING') as logs:
      path, value = _restored_value(self.directory)
    self.assertEqual((os.path.basename(path), value), ('ckpt-10', 10))
    self.assertEqual(len(logs.records), 2)
    self.assertIn('ckpt-30: it does not restore (IndexError: Read less bytes', logs.output[0])
    self.assertIn('ckpt-20: it does not restore (', logs.output[1])

  def test_corrupted_bytes_and_missing_files_are_damage(self):
    _saved(self.directory, [10, 20])
    data = _data_file(os.path.join(self.directory, 'ckpt-20'))
    with open(data, 'r+b') as file:
      content = bytearray(file.read())
      content[0] ^= 0xff
      file.seek(0)
      file.write(content)
    self.assertIn('Checksum does not match',
                  checkpoints.find_damage(os.path.join(self.directory, 'ckpt-20')))
    os.remove(data)
    self.assertIn('No such file',
                  checkpoints.find_damage(os.path.join(self.directory, 'ckpt-20')))
    self.assertIsNone(checkpoints.find_damage(os.path.join(self.directory, 'ckpt-10')))

  def test_all_damaged_is_an_error_naming_each(self):
    _saved(self.directory, [10, 20])
    for step in (10, 20):
      os.truncate(_data_file(os.path.join(self.directory, f'ckpt-{step}')), 0)
    with self.assertNoLogs(checkpoints._LOG, 'WARNING'):
      with self.assertRaisesRegex(checkpoints.CheckpointError,
                                  r'No checkpoint in .* restores: ckpt-20 \(.*\); ckpt-10 \('):
        _restored_value(self.directory)

  def test_mismatch_is_not_damage(self):
    _saved(self.directory, [10])
    other = tf.train.Checkpoint(other=tf.Variable(0.0))
    with self.assertRaises(AssertionError):
      checkpoints.restore_newest(other, self.directory,
                                 expect=lambda status: status.assert_existing_objects_matched())

  def test_save_order_wins_over_step_order(self):
    # After a fallback from a damaged ckpt-30 to ckpt-10, the run saves ckpt-20:
    # ckpt-20 is the newest although 30 is the highest number.
    _saved(self.directory, [10, 30, 20])
    self.assertEqual([os.path.basename(path) for path in checkpoints.candidates(self.directory)],
                     ['ckpt-20', 'ckpt-30', 'ckpt-10'])


class LeftoversTest(unittest.TestCase):

  def test_temporary_folders_and_state_files_are_removed(self):
    directory = tempfile.mkdtemp()
    _saved(directory, [10])
    leftovers = [os.path.join(directory, 'ckpt-20_temp'),
                 os.path.join(directory, 'ckpt-30_temp_0123abcd')]
    for folder in leftovers:
      os.makedirs(folder)
      open(os.path.join(folder, 'part-00000-of-00001.index'), 'w').close()
    state_tmp = os.path.join(directory, 'checkpoint.tmp' + 'a' * 32)
    open(state_tmp, 'w').close()
    kept = os.path.join(directory, 'notes_temp')
    os.makedirs(kept)
    with self.assertLogs(checkpoints._LOG, 'INFO') as logs:
      removed = checkpoints.remove_leftovers(directory)
    self.assertEqual(removed, sorted(leftovers + [state_tmp]))
    self.assertEqual(sorted(os.listdir(directory)),
                     ['checkpoint', 'ckpt-10.data-00000-of-00001', 'ckpt-10.index', 'notes_temp'])
    self.assertEqual(len(logs.records), 1)
    self.assertEqual(checkpoints.remove_leftovers(os.path.join(directory, 'missing')), [])


class RepairStateTest(unittest.TestCase):

  def test_unreadable_state_file_is_rebuilt_from_the_files(self):
    # Text that does not parse makes TensorFlow forget every checkpoint; bytes
    # that are not UTF-8 make it raise UnicodeDecodeError.
    for content in (b'garbage {', b'\x00\xff\xfe'):
      directory = tempfile.mkdtemp()
      _saved(directory, [10, 20])
      with open(os.path.join(directory, 'checkpoint'), 'wb') as file:
        file.write(content)
      with self.assertLogs(checkpoints._LOG, 'WARNING'):
        self.assertTrue(checkpoints.repair_state(directory))
      self.assertEqual(tf.train.latest_checkpoint(directory),
                       os.path.join(directory, 'ckpt-20'))
      self.assertFalse(checkpoints.repair_state(directory))
      path, value = _restored_value(directory)
      self.assertEqual((os.path.basename(path), value), ('ckpt-20', 20))

  def test_missing_state_file_with_checkpoints_is_rebuilt(self):
    directory = tempfile.mkdtemp()
    _saved(directory, [10, 20])
    os.remove(os.path.join(directory, 'checkpoint'))
    self.assertEqual([os.path.basename(path) for path in checkpoints.candidates(directory)],
                     ['ckpt-20', 'ckpt-10'])
    with self.assertLogs(checkpoints._LOG, 'WARNING'):
      self.assertTrue(checkpoints.repair_state(directory))
    self.assertFalse(checkpoints.repair_state(tempfile.mkdtemp()))



class RelativeFolderTest(unittest.TestCase):

  def test_a_relative_checkpoint_folder_lists_paths_that_exist(self):
    root = tempfile.mkdtemp()
    directory = os.path.join(root, 'runs', 't1', 'checkpoints')
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1.0)), directory, 3)
    manager.save(checkpoint_number=100)
    previous = os.getcwd()
    os.chdir(root)
    self.addCleanup(os.chdir, previous)
    found = checkpoints.candidates(os.path.join('runs', 't1', 'checkpoints'))
    self.assertEqual(found, [os.path.join(directory, 'ckpt-100')])
    self.assertEqual(checkpoints.newest_readable(os.path.join('runs', 't1', 'checkpoints')),
                     os.path.join(directory, 'ckpt-100'))


if __name__ == '__main__':
  unittest.main()
