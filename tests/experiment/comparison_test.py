"""Tests of agents/experiment/comparison.py on fixed score samples."""

import unittest

import numpy as np
import scipy.stats

from agents.experiment import comparison

_SCORES = {
    'kl_penalty': np.array([-150.0, -160.0, -145.0, -155.0]),
    'clipped': np.array([-210.0, -190.0, -205.0, -200.0]),
    'same': np.array([-151.0, -159.0, -146.0, -154.0]),
}


class CompareTest(unittest.TestCase):

  def test_every_method_finds_the_clear_difference(self):
    for method in comparison.METHODS:
      with self.subTest(method=method):
        result = comparison.compare_scores(_SCORES, method, n_resamples=500, reps=200)
        pairs = result.pairs.set_index(['a', 'b'])
        self.assertEqual(len(pairs), 3)
        self.assertEqual(pairs.loc[('kl_penalty', 'clipped'), 'decision'], 'larger')
        self.assertEqual(pairs.loc[('clipped', 'same'), 'decision'], 'smaller')
        self.assertEqual(pairs.loc[('kl_penalty', 'same'), 'decision'], 'equal')
        self.assertAlmostEqual(pairs.loc[('kl_penalty', 'clipped'), 'difference'], 48.75)
        self.assertEqual(pairs.loc[('kl_penalty', 'clipped'), 'prob_improvement'], 1.0)
        if method != 'adastop':
          low, high = pairs.loc[('kl_penalty', 'clipped'), ['ci_low', 'ci_high']]
          self.assertLess(low, 48.75)
          self.assertGreater(high, 48.75)

  def test_welch_matches_scipy_and_adjusts(self):
    result = comparison.compare_scores(_SCORES, 'welch', reps=200)
    raw = scipy.stats.ttest_ind(_SCORES['kl_penalty'], _SCORES['clipped'], equal_var=False)
    row = result.pairs.iloc[0]
    self.assertAlmostEqual(row['p_value'], raw.pvalue)
    adjusted = scipy.stats.false_discovery_control(result.pairs['p_value'].to_numpy())
    np.testing.assert_allclose(result.pairs['p_adjusted'], adjusted)

  def test_iqm_with_interval(self):
    result = comparison.compare_scores(_SCORES, 'tukey', reps=200)
    row = result.experiments.set_index('name').loc['kl_penalty']
    self.assertEqual(row['fits'], 4)
    self.assertAlmostEqual(row['iqm'], -152.5)  # The middle two of four.
    self.assertLessEqual(row['iqm_low'], row['iqm'])
    self.assertGreaterEqual(row['iqm_high'], row['iqm'])

  def test_bad_input(self):
    with self.assertRaisesRegex(ValueError, 'method must be one of'):
      comparison.compare_scores(_SCORES, 'bayes')
    with self.assertRaisesRegex(ValueError, 'at least two experiments'):
      comparison.compare_scores({'a': [1.0, 2.0]})
    with self.assertRaisesRegex(ValueError, "Experiment 'b' has 1 score"):
      comparison.compare_scores({'a': [1.0, 2.0], 'b': [1.0]})

  def test_deterministic(self):
    first = comparison.compare_scores(_SCORES, 'permutation', n_resamples=500, reps=200)
    second = comparison.compare_scores(_SCORES, 'permutation', n_resamples=500, reps=200)
    self.assertTrue(first.pairs.equals(second.pairs))
    self.assertTrue(first.experiments.equals(second.experiments))


if __name__ == '__main__':
  unittest.main()
