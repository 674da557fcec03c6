"""Tests of agents/tools/space_spec.py."""

import unittest

import gymnasium
import numpy as np
import tensorflow as tf

from agents.tools import space_spec


class SpaceSpecTest(unittest.TestCase):

  def test_array_spaces_give_their_shape_and_dtype(self):
    spec = space_spec.space_spec(gymnasium.spaces.Box(-1, 1, (3, 2), np.float32), 'observation')
    self.assertEqual(spec, tf.TensorSpec([3, 2], tf.float32))
    self.assertEqual(space_spec.space_spec(gymnasium.spaces.Discrete(4), 'action').shape, [])

  def test_a_dict_space_is_refused_with_its_role(self):
    space = gymnasium.spaces.Dict({'a': gymnasium.spaces.Discrete(2)})
    with self.assertRaisesRegex(TypeError, 'observation space'):
      space_spec.space_spec(space, 'observation space')


class WarnUnexposedInfosTest(unittest.TestCase):

  def test_one_line_names_the_new_keys_and_each_key_is_named_once(self):
    warned = set()
    with self.assertLogs(space_spec.__name__, 'WARNING') as logs:
      space_spec.warn_unexposed_infos({'b': 1, 'a': 2, '_a': True, 'kept': 0}, {'kept'}, warned)
      space_spec.warn_unexposed_infos({'a': 1, 'c': 3}, {'kept'}, warned)
    self.assertEqual(len(logs.records), 2)
    self.assertIn("'a', 'b'", logs.output[0])
    self.assertNotIn("'a'", logs.output[1])
    self.assertIn("'c'", logs.output[1])
    self.assertEqual(warned, {'a', 'b', 'c'})


if __name__ == '__main__':
  unittest.main()
