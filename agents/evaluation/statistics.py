"""Statistics of per-seed results, from scipy and rliable, not by hand.

- `summarize(results, environment)`: per agent and suite, for the environment's headline
  metric (the balloon: TWR50; any other: the return) and the others it describes (the
  balloon: BLE's TWR50), and always the return: the mean with a 95 % bootstrap interval
  (`scipy.stats.bootstrap`, percentile), the interquartile mean
  (`rliable.metrics.aggregate_iqm`, Agarwal et al. 2021) with its bootstrap interval
  over seeds (rliable's stratified bootstrap, which with one task is this bootstrap over
  runs), the median; and the counts of the flags it names (the balloon's failures).
- `compare_paired(x, y, metric)`: two agents on the same seeds, X minus Y, on any
  per-seed metric: the mean difference with a paired bootstrap interval, the Wilcoxon
  signed-rank p-value (`scipy.stats.wilcoxon`), wins / ties / losses, and the
  probability of improvement P(X > Y) (`rliable.metrics.probability_of_improvement`)
  with a paired bootstrap interval.

(rliable's `library.get_interval_estimates` is not used: it imports `arch`, whose
release in the shared environment fails to import with pandas 3; its metrics are.)
"""

import numpy as np
import scipy.stats
from rliable import metrics as rliable_metrics

from agents.evaluation import environments
from agents.evaluation.errors import EvaluationError

CONFIDENCE = 0.95
RESAMPLES = 2000
POI_RESAMPLES = 500


def _random_state(seed):
  return np.random.default_rng(seed)


def bootstrap_interval(values, statistic, seed=0, resamples=RESAMPLES):
  """A 95 % percentile bootstrap interval [low, high] of a vectorised statistic."""
  return samples_interval((values,), statistic, seed, resamples)


def _iqm(values, axis=-1):
  return scipy.stats.trim_mean(values, 0.25, axis=axis)


def describe_metric(values, seed=0, resamples=RESAMPLES):
  """Mean (with CI), IQM (with CI), median and std of one metric over seeds."""
  values = np.asarray(values, np.float64)
  return {
      'mean': float(values.mean()),
      'mean_ci95': bootstrap_interval(values, np.mean, seed, resamples),
      'iqm': float(rliable_metrics.aggregate_iqm(values[:, None])),
      'iqm_ci95': bootstrap_interval(values, _iqm, seed, resamples),
      'median': float(np.median(values)),
      'std': float(values.std(ddof=1)) if len(values) > 1 else 0.0,
  }


def summarize(results, seed=0, environment=None):
  """The statistics of one agent's results on one suite (see the module docstring).

  Args:
    results: list of SeedResult.
    seed: seed of the bootstrap resampling.
    environment: the `environments.EnvironmentEvaluation` of the results (None: the
      default environment's).

  Returns:
    a JSON-ready dict: num_seeds, metric (the headline one), one entry per described
    metric, final_timestep, the flag counts and metric_notes.
  """
  if not results:
    raise EvaluationError('no results to summarize.')
  environment = environment or environments.get(environments.default_env_id())
  summary = {'num_seeds': len(results), 'metric': environment.metric}
  for name in environment.described_metrics:
    summary[name] = describe_metric([result.value(name) for result in results], seed)
  summary['final_timestep'] = {'mean': float(np.mean([r.final_timestep for r in results]))}
  for group, flags in environment.counted_flags.items():
    counts = {name: int(sum(bool(result.value(name)) for result in results)) for name in flags}
    counts['any'] = int(sum(any(result.value(name) for name in flags) for result in results))
    summary[group] = counts
  summary['metric_notes'] = {name: note for name, note in environment.metric_notes.items()
                             if name in environment.described_metrics}
  return summary


def align(results_x, results_y, names=('X', 'Y')):
  """Scores of two agents on the same seeds, as arrays in seed order.

  Raises:
    EvaluationError: the seeds differ (names the seeds only one agent flew).
  """
  x = {result.seed: result for result in results_x}
  y = {result.seed: result for result in results_y}
  only_x, only_y = sorted(set(x) - set(y)), sorted(set(y) - set(x))
  if only_x or only_y:
    raise EvaluationError(
        f'a paired comparison needs the same seeds: {len(only_x)} only in {names[0]} '
        f'{only_x[:10]}, {len(only_y)} only in {names[1]} {only_y[:10]}.')
  seeds = sorted(x)
  return seeds, [x[seed] for seed in seeds], [y[seed] for seed in seeds]


def _probability_of_improvement(x, y):
  return float(rliable_metrics.probability_of_improvement(x[:, None], y[:, None]))


def compare_paired(results_x, results_y, metric=None, names=('X', 'Y'), seed=0):
  """Paired statistics of X minus Y on the same seeds (see the module docstring).

  `metric` is any per-seed field; None is the default environment's headline metric.
  """
  metric = metric or environments.get(environments.default_env_id()).metric
  seeds, rx, ry = align(results_x, results_y, names)
  x = np.array([result.value(metric) for result in rx], np.float64)
  y = np.array([result.value(metric) for result in ry], np.float64)
  difference = x - y
  if np.all(difference == 0):
    p_value = 1.0
  else:
    p_value = float(scipy.stats.wilcoxon(x, y).pvalue)
  probability, poi_interval = probability_of_improvement(x, y, seed, paired=True)
  return {
      'x': names[0], 'y': names[1], 'metric': metric, 'num_seeds': len(seeds),
      'mean_x': float(x.mean()), 'mean_y': float(y.mean()),
      'mean_difference': float(difference.mean()),
      'mean_difference_ci95': bootstrap_interval(difference, np.mean, seed),
      'wilcoxon_p': p_value,
      'wins': int((difference > 0).sum()), 'ties': int((difference == 0).sum()),
      'losses': int((difference < 0).sum()),
      'probability_of_improvement': probability,
      'probability_of_improvement_ci95': poi_interval,
  }


def samples_interval(samples, statistic, seed=0, resamples=RESAMPLES, confidence=CONFIDENCE,
                     paired=False, vectorized=True):
  """A percentile bootstrap interval [low, high] of a statistic of one or more samples.

  Independent samples are resampled each on its own (rliable's stratified bootstrap,
  one stratum per sample, e.g. the fits of two experiments); paired ones together
  (e.g. two agents on the same seeds). Samples that cannot vary (fewer than 2 values,
  or all equal) give the statistic's value as both ends.

  Args:
    samples: a sequence of 1-D arrays.
    statistic: `statistic(*samples, axis=-1)` when `vectorized`, else
      `statistic(*samples)`, returning a number.
    seed: seed of the resampling.
    resamples: bootstrap resamples.
    confidence: the interval's confidence level.
    paired: resample the samples together (same length), not each on its own.
    vectorized: whether `statistic` takes `axis`.
  """
  samples = tuple(np.asarray(sample, np.float64) for sample in samples)
  if all(len(sample) < 2 or np.all(sample == sample[0]) for sample in samples):
    point = float(statistic(*samples, axis=-1) if vectorized else statistic(*samples))
    return [point, point]
  result = scipy.stats.bootstrap(samples, statistic, n_resamples=resamples,
                                 confidence_level=confidence, method='percentile',
                                 paired=paired, vectorized=vectorized,
                                 random_state=_random_state(seed))
  return [float(result.confidence_interval.low), float(result.confidence_interval.high)]


def probability_of_improvement(x, y, seed=0, resamples=POI_RESAMPLES, paired=False):
  """P(X > Y) of two samples of scores (rliable) and its percentile bootstrap interval.

  Args:
    x, y: 1-D arrays of scores, e.g. the final scores of two experiments' fits
      (independent), or two agents' scores on the same seeds (`paired=True`).
    seed, resamples, paired: as in `samples_interval`.

  Returns:
    (probability, [low, high]).
  """
  x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
  interval = samples_interval((x, y), _probability_of_improvement, seed, resamples,
                              paired=paired, vectorized=False)
  return _probability_of_improvement(x, y), interval
