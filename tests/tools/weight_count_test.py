"""Tests of `tools.count_weights`."""

import unittest

import tensorflow as tf

from agents import tools


class CountWeightsTest(unittest.TestCase):

  def test_counts_trainable_variables_of_a_module(self):
    module = tf.Module()
    module.kernel = tf.Variable(tf.zeros([3, 4]), name='policy/kernel')
    module.bias = tf.Variable(tf.zeros([4]), name='value/bias')
    module.step = tf.Variable(0, trainable=False, name='step')
    self.assertEqual(tools.count_weights(module), 16)
    self.assertEqual(tools.count_weights(module, scope='policy'), 12)
    self.assertEqual(tools.count_weights(module, exclude=r'.*bias'), 12)

  def test_counts_a_list_of_variables(self):
    self.assertEqual(tools.count_weights([tf.Variable(tf.zeros([2, 5]))]), 10)

  def test_refuses_other_objects(self):
    with self.assertRaisesRegex(TypeError, 'got int'):
      tools.count_weights(3)


if __name__ == '__main__':
  unittest.main()
