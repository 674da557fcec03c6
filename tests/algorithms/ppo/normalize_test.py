"""Tests of agents/algorithms/ppo/normalize.py against numpy."""

import unittest

import numpy as np

from agents.algorithms.ppo import normalize


class StreamingNormalizeTest(unittest.TestCase):

  def test_statistics_match_numpy_over_uneven_batches(self):
    rng = np.random.default_rng(1)
    data = rng.normal(3.0, 2.0, size=(103, 4)).astype(np.float32)
    normalizer = normalize.StreamingNormalize([4], clip=None)
    for start, stop in ((0, 1), (1, 40), (40, 41), (41, 103)):
      normalizer.update(data[start:stop])
    np.testing.assert_allclose(normalizer.mean.numpy(), data.mean(0), rtol=1e-5)
    np.testing.assert_allclose(normalizer.variance().numpy(), data.var(0), rtol=1e-4)
    self.assertEqual(float(normalizer.count.numpy()), 103.0)
    expected = (data - data.mean(0)) / np.sqrt(data.var(0) + 1e-8)
    np.testing.assert_allclose(normalizer.transform(data).numpy(), expected, rtol=1e-4,
                               atol=1e-5)

  def test_clip_and_scale_only(self):
    normalizer = normalize.StreamingNormalize([], center=False, scale=True, clip=1.5)
    normalizer.update(np.array([-2.0, 2.0], np.float32))  # Mean 0, std 2.
    np.testing.assert_allclose(normalizer.transform([1.0, 4.0, -8.0]).numpy(),
                               [0.5, 1.5, -1.5], rtol=1e-6)

  def test_identity_before_data(self):
    normalizer = normalize.StreamingNormalize([2])
    np.testing.assert_allclose(normalizer.transform([[1.0, -2.0]]).numpy(), [[1.0, -2.0]],
                               rtol=1e-6)


class RewardScaleTest(unittest.TestCase):

  def test_scales_by_std_of_discounted_return(self):
    scale = normalize.RewardScale(batch_size=2, discount=0.5, clip=None)
    rewards = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]], np.float32)
    done = np.array([[False, False], [False, True], [False, False]])
    returns = []
    running = np.zeros(2)
    for reward, ended in zip(rewards, done):
      running = running * 0.5 + reward
      returns.append(running.copy())
      running = np.where(ended, 0.0, running)
      scale.update(np.array([0, 1], np.int32), reward, ended)
    returns = np.concatenate(returns)
    np.testing.assert_allclose(scale.normalize.variance().numpy(), returns.var(), rtol=1e-5)
    np.testing.assert_allclose(scale.transform([3.0]).numpy(),
                               [3.0 / np.sqrt(returns.var() + 1e-8)], rtol=1e-5)


if __name__ == '__main__':
  unittest.main()
