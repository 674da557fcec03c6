"""Tests of `tools.AttrDict`."""

import pickle
import unittest

from agents import tools


class AttrDictTest(unittest.TestCase):

  def test_reads_keys_as_attributes_and_missing_ones_as_none(self):
    config = tools.AttrDict(learning_rate=1e-4)
    self.assertEqual(config.learning_rate, 1e-4)
    self.assertIsNone(config.missing)

  def test_writes_only_when_unlocked(self):
    config = tools.AttrDict(a=1)
    with self.assertRaisesRegex(RuntimeError, "Cannot set attribute 'b'"):
      config.b = 2
    with config.unlocked:
      config.b = 2
    self.assertEqual(config, {'a': 1, 'b': 2})
    with self.assertRaises(RuntimeError):
      config.c = 3

  def test_copy_and_pickle_keep_the_type_and_lock(self):
    config = tools.AttrDict(a=1)
    for copied in (config.copy(), pickle.loads(pickle.dumps(config))):
      self.assertIsInstance(copied, tools.AttrDict)
      self.assertEqual(copied.a, 1)
      with self.assertRaises(RuntimeError):
        copied.a = 2

  def test_magic_attributes_are_not_keys(self):
    self.assertFalse(hasattr(tools.AttrDict(), '__missing_protocol__'))


if __name__ == '__main__':
  unittest.main()
