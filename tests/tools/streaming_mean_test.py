"""Tests of agents/tools/streaming_mean.py."""

import unittest

import numpy as np
import tensorflow as tf

from agents.tools.streaming_mean import StreamingMean


class StreamingMeanTest(unittest.TestCase):

  def test_mean_over_batches_and_clear(self):
    mean = StreamingMean()
    np.testing.assert_allclose(mean.value, 0.0)
    mean.submit([1.0, 2.0])
    mean.submit([6.0])
    self.assertEqual(int(mean.count), 3)
    np.testing.assert_allclose(mean.clear(), 3.0)
    self.assertEqual(int(mean.count), 0)
    np.testing.assert_allclose(mean.value, 0.0)

  def test_vector_values_inside_tf_function(self):
    mean = StreamingMean(shape=(2,))

    @tf.function
    def submit(values):
      mean.submit(values)
      return mean.value

    submit(tf.constant([[1.0, 10.0], [3.0, 30.0]]))
    np.testing.assert_allclose(submit(tf.constant([[5.0, 50.0]])), [3.0, 30.0])

  def test_rejects_unbatched_values(self):
    with self.assertRaises((ValueError, tf.errors.InvalidArgumentError)):
      StreamingMean(shape=(2,)).submit([1.0, 2.0])


if __name__ == '__main__':
  unittest.main()
