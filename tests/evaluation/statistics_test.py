"""Tests for agents/evaluation/statistics.py."""

import unittest

import numpy as np
import scipy.stats

from agents.evaluation import environments, statistics
from agents.evaluation.errors import EvaluationError
from agents.evaluation.results import SeedResult
from tests.helpers.fake_results import balloon_result


def make_results(twr, failed=()):
  return [balloon_result(seed, 10.0 * value, value, value, seed in failed)
          for seed, value in enumerate(twr)]


class SummarizeTest(unittest.TestCase):

  def test_point_estimates_intervals_and_failures(self):
    twr = np.random.default_rng(0).uniform(0, 1, 200)
    summary = statistics.summarize(make_results(twr, failed=(3, 7)))
    stats = summary['twr50']
    self.assertAlmostEqual(stats['mean'], twr.mean())
    self.assertAlmostEqual(stats['iqm'], scipy.stats.trim_mean(twr, 0.25))
    self.assertAlmostEqual(stats['median'], np.median(twr))
    for key in ('mean', 'iqm'):
      low, high = stats[f'{key}_ci95']
      self.assertLess(low, stats[key])
      self.assertGreater(high, stats[key])
    # About ±1.96 standard errors.
    stderr = twr.std(ddof=1) / np.sqrt(len(twr))
    self.assertAlmostEqual(stats['mean_ci95'][1] - stats['mean_ci95'][0], 3.92 * stderr,
                           delta=0.6 * stderr)
    self.assertEqual(summary['failures'], {'out_of_power': 2, 'envelope_burst': 0,
                                           'zeropressure': 0, 'any': 2})
    self.assertEqual(statistics.summarize(make_results(twr)), statistics.summarize(
        make_results(twr)))

  def test_one_seed_has_a_degenerate_interval(self):
    stats = statistics.summarize(make_results([0.25]))['twr50']
    self.assertEqual(stats['mean_ci95'], [0.25, 0.25])

  def test_any_environment_summarizes_its_return(self):
    returns = np.arange(1.0, 21.0)
    results = [SeedResult(seed, value, 100) for seed, value in enumerate(returns)]
    summary = statistics.summarize(results, environment=environments.get('CartPole-v1'))
    self.assertEqual((summary['metric'], summary['num_seeds']), ('cumulative_reward', 20))
    stats = summary['cumulative_reward']
    self.assertAlmostEqual(stats['mean'], 10.5)
    self.assertTrue(stats['mean_ci95'][0] < 10.5 < stats['mean_ci95'][1])
    self.assertNotIn('failures', summary)
    pair = statistics.compare_paired(results, results[::-1], 'final_timestep')
    self.assertEqual(pair['ties'], 20)

  def test_nothing_to_summarize(self):
    with self.assertRaises(EvaluationError):
      statistics.summarize([])


class ComparePairedTest(unittest.TestCase):

  def test_paired_statistics(self):
    rng = np.random.default_rng(1)
    y = rng.uniform(0, 0.8, 100)
    x = y + 0.1 + 0.05 * rng.standard_normal(100)
    x[:5] = y[:5]  # ties
    pair = statistics.compare_paired(make_results(x), make_results(y), names=('new', 'old'))
    difference = x - y
    self.assertAlmostEqual(pair['mean_difference'], difference.mean())
    low, high = pair['mean_difference_ci95']
    self.assertTrue(low < difference.mean() < high)
    self.assertAlmostEqual(pair['wilcoxon_p'], scipy.stats.wilcoxon(x, y).pvalue)
    self.assertLess(pair['wilcoxon_p'], 1e-6)
    self.assertEqual((pair['wins'], pair['ties'], pair['losses']),
                     (int((difference > 0).sum()), 5, int((difference < 0).sum())))
    self.assertGreater(pair['probability_of_improvement'], 0.5)
    poi_low, poi_high = pair['probability_of_improvement_ci95']
    self.assertTrue(poi_low <= pair['probability_of_improvement'] <= poi_high)

  def test_identical_agents(self):
    twr = [0.1, 0.5, 0.9]
    pair = statistics.compare_paired(make_results(twr), make_results(twr))
    self.assertEqual((pair['wilcoxon_p'], pair['ties'], pair['probability_of_improvement']),
                     (1.0, 3, 0.5))

  def test_different_seeds_are_refused(self):
    with self.assertRaisesRegex(EvaluationError, r'1 only in Y \[2\]'):
      statistics.compare_paired(make_results([0.1, 0.2]), make_results([0.1, 0.2, 0.3]))



class IndependentSamplesTest(unittest.TestCase):
  """The bootstrap and the probability of improvement of independent samples (the
  experiment's comparison of fits uses them)."""

  def test_each_sample_is_resampled_on_its_own(self):
    rng = np.random.default_rng(1)
    x, y = rng.normal(1.0, 1.0, 12), rng.normal(0.0, 1.0, 7)  # Different sizes: unpaired.

    def difference(a, b, axis=-1):
      return np.mean(a, axis=axis) - np.mean(b, axis=axis)
    low, high = statistics.samples_interval((x, y), difference, seed=3, resamples=1000)
    self.assertLess(low, x.mean() - y.mean())
    self.assertGreater(high, x.mean() - y.mean())
    self.assertEqual(statistics.samples_interval((x, y), difference, seed=3, resamples=1000),
                     [low, high])

  def test_samples_that_cannot_vary_give_a_point(self):
    self.assertEqual(statistics.samples_interval(([2.0, 2.0], [1.0]), lambda a, b, axis:
                                                 np.mean(a, axis) - np.mean(b, axis)),
                     [1.0, 1.0])

  def test_probability_of_improvement(self):
    value, interval = statistics.probability_of_improvement([3.0, 4.0, 5.0], [0.0, 1.0])
    self.assertEqual((value, interval), (1.0, [1.0, 1.0]))
    x, y = [0.2, 0.6, 0.4, 0.9], [0.3, 0.5, 0.1]
    value, (low, high) = statistics.probability_of_improvement(x, y, resamples=200)
    self.assertAlmostEqual(value, np.mean([[a > b] for a in x for b in y]))
    self.assertTrue(low <= value <= high)


if __name__ == '__main__':
  unittest.main()
