"""Tests of agents/algorithms/ppo/distributions.py against closed forms."""

import unittest

import numpy as np
import tensorflow as tf
from scipy import stats

from agents.algorithms.ppo import distributions


class DiagonalGaussianTest(unittest.TestCase):

  def setUp(self):
    self.mean_p = np.array([[0.0, 1.0], [0.5, -1.0]], np.float32)
    self.log_std_p = np.array([[0.0, 0.5], [-0.3, 0.1]], np.float32)
    self.mean_q = np.array([[1.0, 0.0], [0.0, 0.0]], np.float32)
    self.log_std_q = np.array([[0.2, -0.1], [0.0, 0.4]], np.float32)

  def test_kl_matches_closed_form(self):
    p = distributions.DiagonalGaussian(self.mean_p, self.log_std_p)
    q = distributions.DiagonalGaussian(self.mean_q, self.log_std_q)
    sp, sq = np.exp(self.log_std_p), np.exp(self.log_std_q)
    expected = np.sum(np.log(sq / sp) + (sp ** 2 + (self.mean_p - self.mean_q) ** 2)
                      / (2 * sq ** 2) - 0.5, -1)
    np.testing.assert_allclose(p.kl(q).numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(p.kl(p).numpy(), [0.0, 0.0], atol=1e-6)

  def test_log_prob_and_entropy_match_scipy(self):
    p = distributions.DiagonalGaussian(self.mean_p, self.log_std_p)
    value = np.array([[0.3, -0.2], [1.0, 2.0]], np.float32)
    scale = np.exp(self.log_std_p)
    expected = stats.norm.logpdf(value, self.mean_p, scale).sum(-1)
    np.testing.assert_allclose(p.log_prob(value).numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(p.entropy().numpy(),
                               stats.norm.entropy(self.mean_p, scale).sum(-1), rtol=1e-5)

  def test_params_round_trip_and_sample_statistics(self):
    p = distributions.DiagonalGaussian([[1.0, -2.0]], [[np.log(0.5), 0.0]])
    q = distributions.DiagonalGaussian.from_params(p.params)
    np.testing.assert_allclose(q.mean.numpy(), p.mean.numpy())
    generator = tf.random.Generator.from_seed(0)
    log_std = tf.constant([np.log(0.5), 0.0], tf.float32)
    samples = distributions.DiagonalGaussian(tf.fill([20000, 2], 1.0), log_std).sample(generator)
    np.testing.assert_allclose(samples.numpy().mean(0), [1.0, 1.0], atol=0.03)
    np.testing.assert_allclose(samples.numpy().std(0), [0.5, 1.0], atol=0.03)


class CategoricalTest(unittest.TestCase):

  def test_kl_entropy_log_prob_match_closed_form(self):
    logits_p = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, -1.0]], np.float32)
    logits_q = np.array([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0]], np.float32)
    prob_p = np.exp(logits_p) / np.exp(logits_p).sum(-1, keepdims=True)
    prob_q = np.exp(logits_q) / np.exp(logits_q).sum(-1, keepdims=True)
    p = distributions.Categorical(logits_p)
    q = distributions.Categorical(logits_q)
    np.testing.assert_allclose(p.kl(q).numpy(), np.sum(prob_p * np.log(prob_p / prob_q), -1),
                               rtol=1e-5)
    np.testing.assert_allclose(p.entropy().numpy(), -np.sum(prob_p * np.log(prob_p), -1),
                               rtol=1e-5)
    np.testing.assert_allclose(p.log_prob([2, 0]).numpy(),
                               np.log([prob_p[0, 2], prob_p[1, 0]]), rtol=1e-5)
    np.testing.assert_array_equal(p.mode().numpy(), [2, 0])

  def test_sample_frequencies(self):
    probs = np.array([0.2, 0.5, 0.3], np.float32)
    p = distributions.Categorical(np.tile(np.log(probs), (30000, 1)))
    samples = p.sample(tf.random.Generator.from_seed(3)).numpy()
    np.testing.assert_allclose(np.bincount(samples, minlength=3) / len(samples), probs,
                               atol=0.01)


if __name__ == '__main__':
  unittest.main()
