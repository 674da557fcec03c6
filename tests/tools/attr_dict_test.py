"""Tests of agents/tools/attr_dict.py."""

import pickle
import unittest

from agents.tools.attr_dict import AttrDict, LockedError


class AttrDictTest(unittest.TestCase):

  def test_attribute_access_and_locked_by_default(self):
    config = AttrDict(learning_rate=0.1, steps=10)
    self.assertEqual(config.learning_rate, 0.1)
    self.assertEqual(config['steps'], 10)
    self.assertTrue(config.locked)
    with self.assertRaises(LockedError):
      config.learnig_rate = 1e-4
    with self.assertRaises(LockedError):
      config['steps'] = 3
    with self.assertRaises(LockedError):
      config.update(steps=3)
    with self.assertRaises(AttributeError) as context:
      config.missing  # noqa: B018 - the access itself is the test.
    self.assertIn('learning_rate', str(context.exception))

  def test_unlocked_block_restores_the_lock(self):
    config = AttrDict(a=1)
    with config.unlocked():
      config.a = 2
      config.b = 3
    self.assertEqual((config.a, config.b), (2, 3))
    self.assertTrue(config.locked)

  def test_copy_with_overrides_and_pickle_keep_the_lock(self):
    config = AttrDict(a=1, b=2)
    changed = config.copy(b=5)
    self.assertEqual((changed.a, changed.b, config.b), (1, 5, 2))
    self.assertTrue(changed.locked)
    restored = pickle.loads(pickle.dumps(config))
    self.assertEqual(restored, config)
    self.assertTrue(restored.locked)


if __name__ == '__main__':
  unittest.main()
