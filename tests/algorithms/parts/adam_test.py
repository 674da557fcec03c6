"""Tests of agents/algorithms/parts/adam.py against Adam's formulas in numpy."""

import unittest

import numpy as np
import tensorflow as tf

from agents.algorithms.parts import adam


class AdamTest(unittest.TestCase):

  def test_two_steps_match_numpy(self):
    variable = tf.Variable([1.0, -2.0])
    optimizer = adam.Adam([variable], learning_rate=0.1, max_grad_norm=None, epsilon=1e-8)
    expected = np.array([1.0, -2.0])
    first = second = np.zeros(2)
    for step, gradient in enumerate(([0.5, -1.0], [0.1, 0.3]), 1):
      optimizer.apply([tf.constant(gradient)])
      gradient = np.array(gradient)
      first = 0.9 * first + 0.1 * gradient
      second = 0.999 * second + 0.001 * gradient ** 2
      corrected = first / (1 - 0.9 ** step) / (np.sqrt(second / (1 - 0.999 ** step)) + 1e-8)
      expected = expected - 0.1 * corrected
    np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-4)

  def test_global_norm_is_reported_and_gradients_clipped(self):
    variables = [tf.Variable([0.0]), tf.Variable([0.0])]
    optimizer = adam.Adam(variables, learning_rate=1.0, max_grad_norm=1.0)
    norm = optimizer.apply([tf.constant([3.0]), tf.constant([4.0])])
    self.assertAlmostEqual(float(norm), 5.0, places=5)
    # Clipped gradient is [0.6, 0.8]; the first Adam moment after one step is 0.1 * g.
    np.testing.assert_allclose([m.numpy()[0] for m in optimizer.first_moments], [0.06, 0.08],
                               rtol=1e-5)


if __name__ == '__main__':
  unittest.main()
