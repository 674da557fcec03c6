"""Tests of agents/algorithms/ppo/memory.py."""

import unittest

import numpy as np
import tensorflow as tf

from agents.algorithms.ppo import memory


def _template():
  return {'x': tf.TensorSpec([2], tf.float32), 'terminated': tf.TensorSpec([], tf.bool),
          'truncated': tf.TensorSpec([], tf.bool)}


def _step(values, terminated=None, truncated=None):
  count = len(values)
  return {'x': tf.constant(values, tf.float32),
          'terminated': tf.constant(terminated or [False] * count),
          'truncated': tf.constant(truncated or [False] * count)}


class SegmentMemoryTest(unittest.TestCase):

  def test_rows_fill_independently_and_overflow_is_ignored(self):
    store = memory.SegmentMemory(_template(), batch_size=3, capacity=2)
    store.append(tf.constant([0, 2]), _step([[1, 1], [3, 3]]))
    self.assertFalse(bool(store.is_full()))
    store.append(tf.constant([0, 1, 2]), _step([[4, 4], [5, 5], [6, 6]]))
    store.append(tf.constant([1, 0]), _step([[7, 7], [8, 8]]))  # Row 0 is full: ignored.
    self.assertTrue(bool(store.is_full()))
    np.testing.assert_array_equal(store.length.numpy(), [2, 2, 2])
    np.testing.assert_array_equal(store.data()['x'].numpy()[:, :, 0],
                                  [[1, 4], [5, 7], [3, 6]])
    store.clear()
    np.testing.assert_array_equal(store.length.numpy(), [0, 0, 0])

  def test_truncate_last_marks_unfinished_steps_only(self):
    store = memory.SegmentMemory(_template(), batch_size=3, capacity=4)
    store.append(tf.constant([0, 1]), _step([[0, 0], [0, 0]], terminated=[False, True]))
    store.truncate_last(tf.constant([0, 1, 2]))  # Row 2 is empty: nothing to mark.
    data = store.data()
    np.testing.assert_array_equal(data['truncated'].numpy()[:, 0], [True, False, False])
    np.testing.assert_array_equal(data['terminated'].numpy()[:, 0], [False, True, False])


if __name__ == '__main__':
  unittest.main()
