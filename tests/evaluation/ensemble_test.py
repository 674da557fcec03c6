"""Tests of agents.evaluation.ensemble: the fits' action probabilities averaged, then the mode."""

import contextlib
import io
import types
import unittest

import numpy as np
import tensorflow as tf

from agents.evaluation import ensemble
from agents.scripts import evaluate


def fake_fit(logits):
  """An algorithm whose network gives the same logits to every row."""
  logits = tf.constant([logits], tf.float32)

  def policy(observ, state):
    return tf.repeat(logits, tf.shape(observ)[0], axis=0), state

  network = types.SimpleNamespace(policy=policy, initial_state=lambda n: tf.zeros([n, 1]))
  return types.SimpleNamespace(network=network, normalize_observ=lambda observ: observ)


class EnsemblePolicyTest(unittest.TestCase):

  def test_one_fit_takes_its_own_mode(self):
    policy = ensemble.EnsemblePolicy([fake_fit([0.0, 2.0, 1.0])])
    np.testing.assert_array_equal(policy(np.zeros([3, 4])), [1, 1, 1])

  def test_probabilities_are_averaged_not_votes(self):
    # Two fits lean to action 0 a little, one is sure of action 2: the mean probability
    # of action 2 is the largest, though most fits' modes are action 0.
    fits = [fake_fit([0.1, 0.0, 0.0]), fake_fit([0.1, 0.0, 0.0]), fake_fit([0.0, 0.0, 9.0])]
    policy = ensemble.EnsemblePolicy(fits)
    np.testing.assert_array_equal(policy(np.zeros([2, 4])), [2, 2])

  def test_probabilities_are_averaged_not_logits(self):
    # Mean probabilities about (0.19, 0.44, 0.37): action 1. Mean logits (0, -9, -9.5)
    # would pick action 0.
    fits = [fake_fit([0.0, 2.0, -20.0]), fake_fit([0.0, -20.0, 1.0])]
    policy = ensemble.EnsemblePolicy(fits)
    np.testing.assert_array_equal(policy(np.zeros([2, 4])), [1, 1])


class EnsembleCommandTest(unittest.TestCase):

  def test_a_missing_run_is_named_in_one_line(self):
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
      code = evaluate.main(['ensemble', '--run=/no/such/run'])
    self.assertEqual(code, 2)
    self.assertIn('/no/such/run', errors.getvalue())
    self.assertEqual(len(errors.getvalue().strip().splitlines()), 1)


if __name__ == '__main__':
  unittest.main()
