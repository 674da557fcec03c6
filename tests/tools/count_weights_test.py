"""Tests of agents/tools/count_weights.py."""

import unittest

import tensorflow as tf

from agents.tools.count_weights import count_weights


class CountWeightsTest(unittest.TestCase):

  def test_counts_trainable_weights_of_a_keras_model(self):
    model = tf.keras.Sequential([
        tf.keras.Input((3,)),
        tf.keras.layers.Dense(4, name='policy'),
        tf.keras.layers.Dense(1, name='value')])
    self.assertEqual(count_weights(model), 3 * 4 + 4 + 4 * 1 + 1)

  def test_filters_by_variable_name(self):
    module = tf.Module()
    with tf.name_scope('policy'):
      module.policy = tf.Variable(tf.zeros((5, 2)), name='kernel')
    with tf.name_scope('value'):
      module.value = tf.Variable(tf.zeros((7,)), name='kernel')
    module.frozen = tf.Variable(tf.zeros((100,)), trainable=False)
    self.assertEqual(count_weights(module), 17)
    self.assertEqual(count_weights(module, include=r'^policy/'), 10)
    self.assertEqual(count_weights(module, exclude=r'^policy/'), 7)


if __name__ == '__main__':
  unittest.main()
