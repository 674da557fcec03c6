"""Tests of `tools.nested`."""

import collections
import unittest

from agents.tools import nested

Pair = collections.namedtuple('Pair', 'left, right')


class NestedTest(unittest.TestCase):

  def test_map_keeps_the_nesting_and_types(self):
    structure = {'a': (1, [2, 3]), 'b': Pair(4, 5)}
    self.assertEqual(nested.map(lambda x: 10 * x, structure),
                     {'a': (10, [20, 30]), 'b': Pair(40, 50)})

  def test_map_of_several_structures(self):
    self.assertEqual(nested.map(lambda x, y: x + y, (1, {'k': 2}), (10, {'k': 20})),
                     (11, {'k': 22}))

  def test_mismatched_structures_raise(self):
    with self.assertRaisesRegex(ValueError, 'different lengths'):
      nested.map(lambda x, y: x, (1, 2), (1,))
    with self.assertRaisesRegex(ValueError, 'different keys'):
      nested.map(lambda x, y: x, {'a': 1}, {'b': 1})

  def test_zip_pairs_the_leaves(self):
    self.assertEqual(nested.zip([1, 2], [3, 4]), [(1, 3), (2, 4)])
    self.assertEqual(nested.zip({'a': 1}, {'a': 2}), {'a': (1, 2)})

  def test_flatten_orders_dict_values_by_key(self):
    self.assertEqual(nested.flatten({'b': [1, 2], 'a': (3, {'z': 4, 'y': 5})}),
                     (3, 5, 4, 1, 2))
    self.assertEqual(nested.flatten(7), (7,))
    self.assertEqual(nested.map(lambda x: x, {'b': 1, 'a': 2}, flatten=True), (2, 1))

  def test_filter_drops_leaves_and_empty_containers(self):
    self.assertEqual(nested.filter(lambda x: x > 1, (1, 2, [3, 0], [0])), (2, [3]))
    self.assertEqual(nested.filter(lambda x: x > 1, {'a': 1, 'b': {'c': 5}}), {'b': {'c': 5}})
    self.assertEqual(nested.filter(lambda x: x > 1, Pair(1, 2)), Pair(None, 2))
    self.assertEqual(nested.filter(lambda x, y: x < y, (1, 5), (2, 3)), ((1, 2),))
    self.assertEqual(nested.filter(lambda x: x > 1, (1, [2, 3]), flatten=True), (2, 3))


if __name__ == '__main__':
  unittest.main()
