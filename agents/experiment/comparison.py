"""Statistical comparison of experiments: pairwise tests and rliable's interval estimates.

Every fit of an experiment gives one score (by default its last training
`mean_score`); fits are independent runs, so the scores of two experiments are
two independent samples. `compare` returns, for every pair, the difference of
means with a confidence interval and an adjusted p-value from one of:

- 'permutation': `scipy.stats.permutation_test` on the difference of means,
  with a bootstrap interval;
- 'welch': Welch's t-test (`scipy.stats.ttest_ind(equal_var=False)`) and its
  t interval;
- 'tukey': Tukey's HSD over all experiments (`scipy.stats.tukey_hsd`), whose
  p-values and intervals are already adjusted for the pairs;
- 'adastop': AdaStop's permutation test (`adastop.MultipleAgentsComparator`
  with one interim), which decides larger / smaller / equal at level alpha.

P-values of 'permutation' and 'welch' are adjusted over the pairs with
Benjamini-Hochberg (`scipy.stats.false_discovery_control`). Each pair also gets
rliable's probability of improvement, and each experiment its interquartile
mean (IQM), both with stratified-bootstrap 95 % percentile intervals (each
experiment resampled on its own). The bootstrap, the IQM and the probability of
improvement are the evaluation's (`agents.evaluation.statistics`), imported at
first use: every fit's worker process imports this package and needs no evaluation.
"""

import collections
import itertools

import numpy as np
import pandas as pd
import scipy.stats

METHODS = ('permutation', 'welch', 'tukey', 'adastop')



class ComparisonError(ValueError):
  """Experiments cannot be compared as asked (method, names, too few scores)."""


Comparison = collections.namedtuple('Comparison', ['pairs', 'experiments'])


def scores_of(managers, tag='mean_score', phase='train'):
  """Each manager's final score per fit: {name: array}, NaNs (fits with no score) dropped.

  Raises:
    ComparisonError: two managers share a name, or one has fewer than 2 scores.
  """
  scores = {}
  for manager in managers:
    if manager.name in scores:
      raise ComparisonError(f'Two experiments are named {manager.name!r}; names must differ.')
    values = np.asarray(manager.final_scores(tag, phase), dtype=float)
    scores[manager.name] = values[np.isfinite(values)]
  return scores


def compare(managers, method='permutation', tag='mean_score', phase='train', alpha=0.05,
            n_resamples=10_000, reps=2_000, seed=0):
  """Compares experiments pairwise; see `compare_scores`.

  Args:
    managers: two or more `ExperimentManager`s with finished fits.
    method, alpha, n_resamples, reps, seed: as in `compare_scores`.
    tag, phase: the logged value whose last value per fit is the score.

  Returns:
    A `Comparison` of two DataFrames.
  """
  return compare_scores(scores_of(managers, tag, phase), method=method, alpha=alpha,
                        n_resamples=n_resamples, reps=reps, seed=seed)


def compare_scores(scores, method='permutation', alpha=0.05, n_resamples=10_000, reps=2_000,
                   seed=0):
  """Pairwise comparison of score samples.

  Args:
    scores: mapping of experiment name to a 1-D array of per-fit scores.
    method: 'permutation', 'welch', 'tukey' or 'adastop'.
    alpha: the level: intervals are (1 - alpha), decisions at alpha.
    n_resamples: permutations and bootstrap resamples of the tests.
    reps: bootstrap repetitions of rliable's intervals.
    seed: seed of every resampling.

  Returns:
    `Comparison(pairs, experiments)`: `pairs` has one row per pair (a, b):
    means, `difference` (a - b), `ci_low`, `ci_high`, `p_value`,
    `p_adjusted`, `decision` ('larger', 'smaller' or 'equal' for a against b
    at level alpha) and `prob_improvement` of a over b with its interval;
    `experiments` has one row per experiment: fits, mean, std, IQM and its
    interval.

  Raises:
    ComparisonError: an unknown method, fewer than two experiments, or an
      experiment with fewer than 2 scores (named).
  """
  if method not in METHODS:
    raise ComparisonError(f'method must be one of {METHODS}, got {method!r}.')
  scores = {name: np.asarray(values, dtype=float).ravel() for name, values in scores.items()}
  if len(scores) < 2:
    raise ComparisonError(f'Comparing needs at least two experiments, got {list(scores)}.')
  for name, values in scores.items():
    if len(values) < 2:
      raise ComparisonError(f'Experiment {name!r} has {len(values)} score(s); comparing needs at '
                       'least 2 finished fits per experiment.')
  names = list(scores)
  pairs = list(itertools.combinations(range(len(names)), 2))
  rng = np.random.default_rng(seed)
  rows = []
  if method == 'tukey':
    result = scipy.stats.tukey_hsd(*(scores[name] for name in names))
    interval = result.confidence_interval(1 - alpha)
    for i, j in pairs:
      rows.append(dict(p_value=result.pvalue[i, j], p_adjusted=result.pvalue[i, j],
                       ci_low=interval.low[i, j], ci_high=interval.high[i, j]))
  elif method == 'adastop':
    rows = _adastop(scores, names, pairs, alpha, n_resamples, seed)
  else:
    for i, j in pairs:
      a, b = scores[names[i]], scores[names[j]]
      if method == 'welch':
        result = scipy.stats.ttest_ind(a, b, equal_var=False)
        interval = result.confidence_interval(1 - alpha)
        rows.append(dict(p_value=result.pvalue, ci_low=interval.low, ci_high=interval.high))
      else:
        rows.append(_permutation(a, b, alpha, n_resamples, rng, seed))
    p_values = np.array([row['p_value'] for row in rows])
    adjusted = scipy.stats.false_discovery_control(p_values) if len(rows) > 1 else p_values
    for row, value in zip(rows, adjusted):
      row['p_adjusted'] = float(value)
  table = []
  for (i, j), row in zip(pairs, rows):
    a, b = scores[names[i]], scores[names[j]]
    difference = float(a.mean() - b.mean())
    decision = row.pop('decision', None)
    if decision is None:
      decision = 'equal' if row['p_adjusted'] >= alpha else (
          'larger' if difference > 0 else 'smaller')
    table.append(dict(a=names[i], b=names[j], mean_a=float(a.mean()), mean_b=float(b.mean()),
                      difference=difference, method=method, decision=decision,
                      **{key: (None if value is None else float(value))
                         for key, value in row.items()}))
  pairs_frame = pd.DataFrame(table)
  poi = _probability_of_improvement(scores, names, pairs, reps, seed)
  pairs_frame = pairs_frame.assign(**poi)
  columns = ['a', 'b', 'mean_a', 'mean_b', 'difference', 'ci_low', 'ci_high', 'p_value',
             'p_adjusted', 'decision', 'method', 'prob_improvement', 'poi_low', 'poi_high']
  return Comparison(pairs_frame[columns], _experiments(scores, names, reps, seed))


def _permutation(a, b, alpha, n_resamples, rng, seed):
  from agents.evaluation import statistics

  def difference(x, y, axis=-1):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)
  test = scipy.stats.permutation_test((a, b), difference, permutation_type='independent',
                                      n_resamples=n_resamples, vectorized=True,
                                      alternative='two-sided', random_state=rng)
  low, high = statistics.samples_interval((a, b), difference, seed, n_resamples,
                                          confidence=1 - alpha)
  return dict(p_value=test.pvalue, ci_low=low, ci_high=high)


def _adastop(scores, names, pairs, alpha, n_resamples, seed):
  import adastop
  n = [len(scores[name]) for name in names]
  comparator = adastop.MultipleAgentsComparator(n=n, K=1, B=n_resamples, alpha=alpha,
                                                seed=seed)
  comparator.partial_compare({name: scores[name] for name in names}, verbose=False)
  decisions = {}
  for _, result in comparator.get_results().iterrows():
    decisions[result['Agent1 vs Agent2']] = result['decisions']
  rows = []
  for i, j in pairs:
    key = f'{names[i]} vs {names[j]}'
    if key in decisions:
      decision = decisions[key]
    else:  # AdaStop orders the pair the other way round.
      flipped = decisions[f'{names[j]} vs {names[i]}']
      decision = {'larger': 'smaller', 'smaller': 'larger'}.get(flipped, flipped)
    rows.append(dict(p_value=None, p_adjusted=None, ci_low=None, ci_high=None,
                     decision=decision))
  return rows


def _probability_of_improvement(scores, names, pairs, reps, seed):
  from agents.evaluation import statistics
  points, lows, highs = [], [], []
  for i, j in pairs:
    point, (low, high) = statistics.probability_of_improvement(
        scores[names[i]], scores[names[j]], seed=seed, resamples=reps)
    points.append(point)
    lows.append(low)
    highs.append(high)
  return dict(prob_improvement=points, poi_low=lows, poi_high=highs)


def _experiments(scores, names, reps, seed):
  from agents.evaluation import statistics
  rows = []
  for name in names:
    described = statistics.describe_metric(scores[name], seed=seed, resamples=reps)
    rows.append(dict(name=name, fits=len(scores[name]), mean=described['mean'],
                     std=described['std'], iqm=described['iqm'],
                     iqm_low=described['iqm_ci95'][0], iqm_high=described['iqm_ci95'][1]))
  return pd.DataFrame(rows)
