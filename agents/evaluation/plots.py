"""Figures of an evaluation: the TWR50 distribution, a comparison, a gallery of flights.

matplotlib (the `viz` extra) is imported lazily with the Agg backend.
"""

import os

import numpy as np

from agents.evaluation import policies as policies_lib
from agents.evaluation import statistics


def available():
  """Whether matplotlib (the `viz` extra) can be imported."""
  try:
    import matplotlib  # noqa: F401
  except ImportError:
    return False
  return True


def _figure(width, height):
  import matplotlib
  matplotlib.use('Agg', force=False)
  import matplotlib.figure
  return matplotlib.figure.Figure(figsize=(width, height), dpi=90)


def distribution(results, path, title):
  """A histogram and an ECDF of the per-seed TWR50 (strict) and BLE's TWR50."""
  figure = _figure(10, 4)
  histogram, ecdf = figure.subplots(1, 2)
  strict = np.array([result.twr50 for result in results])
  ble = np.array([result.time_within_radius for result in results])
  bins = np.linspace(0.0, 1.0, 21)
  histogram.hist(strict, bins=bins, color='tab:blue', alpha=0.8, label='TWR50 (/ 960)')
  histogram.set(xlabel='TWR50', ylabel='seeds', title=f'{title}: {len(results)} seeds')
  for values, label, style in ((strict, 'TWR50 (/ episode length)', '-'),
                               (ble, "BLE's TWR50 (/ steps flown)", '--')):
    ordered = np.sort(values)
    ecdf.step(ordered, np.arange(1, len(ordered) + 1) / len(ordered), style, where='post',
              label=label)
  ecdf.set(xlabel='TWR50', ylabel='fraction of seeds ≤ x', xlim=(0, 1), title='ECDF')
  ecdf.legend(loc='lower right', fontsize=8)
  figure.tight_layout()
  figure.savefig(path)
  return path


def comparison(results_by_agent, path, metric='twr50'):
  """ECDFs of every agent and their mean / IQM with 95 % intervals, in one figure."""
  figure = _figure(11, 4)
  ecdf, intervals = figure.subplots(1, 2, gridspec_kw={'width_ratios': [3, 2]})
  labels = []
  for position, (name, results) in enumerate(results_by_agent.items()):
    values = np.array([getattr(result, metric) for result in results])
    ordered = np.sort(values)
    ecdf.step(ordered, np.arange(1, len(ordered) + 1) / len(ordered), where='post', label=name)
    stats = statistics.describe_metric(values)
    for offset, key, marker in ((-0.12, 'mean', 'o'), (0.12, 'iqm', 's')):
      low, high = stats[f'{key}_ci95']
      intervals.errorbar([stats[key]], [position + offset],
                         xerr=[[stats[key] - low], [high - stats[key]]], fmt=marker,
                         color=f'C{position}', capsize=3,
                         label=key.upper() if position == 0 else None)
    labels.append(name)
  ecdf.set(xlabel=metric, ylabel='fraction of seeds ≤ x', xlim=(0, 1), title='ECDF over seeds')
  ecdf.legend(loc='lower right', fontsize=8)
  intervals.set_yticks(range(len(labels)), labels, fontsize=8)
  intervals.set(xlabel=f'{metric} (95 % bootstrap CI)', title='mean (o) and IQM (s)')
  intervals.legend(fontsize=8)
  figure.tight_layout()
  figure.savefig(path)
  return path


def gallery_seeds(results):
  """(label, result) of the best, median and worst flights by TWR50 (then reward)."""
  ranked = sorted(results, key=lambda r: (r.twr50, r.cumulative_reward, -r.seed))
  picks = [('best', ranked[-1]), ('median', ranked[len(ranked) // 2]), ('worst', ranked[0])]
  seen, unique = set(), []
  for label, result in picks:
    if result.seed not in seen:
      seen.add(result.seed)
      unique.append((label, result))
  return unique


def gallery(agent, suite, results, output_dir, checkpoint=None):
  """Re-flies the best, median and worst seeds and draws each with the environment's renderer.

  Writes `gallery-<label>-seed<seed>.png` files; returns their paths.
  """
  from agents.env.balloon.env import BalloonVectorEnv
  from agents.env.balloon.renderer import FlightRenderer
  picks = gallery_seeds(results)
  count = len(picks)
  env = BalloonVectorEnv(count, max_episode_steps=suite.episode_length, wind=suite.wind)
  policy = policies_lib.make_policy(agent, count, suite.episode_length, checkpoint)
  seeds = [result.seed for _, result in picks]
  observ, _ = env.reset(seed=suite.episode_seeds(seeds))
  rows = np.arange(count)
  policies_lib.begin_episode(policy, rows, seeds)
  renderers = [FlightRenderer(env.simulator, row) for row in rows]
  active = np.ones(count, bool)
  feedback = getattr(policy, 'feedback', None)
  while active.any():
    actions = policies_lib.check_actions(policy(observ), count, agent)
    observ, reward, terminated, truncated, _ = env.step(actions)
    if feedback is not None:
      feedback(reward, terminated & active, truncated & active)
    for row in np.flatnonzero(active):
      renderers[row].record()
    active &= ~(terminated | truncated)
  paths = []
  for (label, result), renderer in zip(picks, renderers):
    figure = _figure(12, 4)
    renderer.draw(figure)
    figure.suptitle(f'{agent}, {suite.name}: {label} flight, seed {result.seed}, '
                    f'TWR50 {result.twr50:.3f}', fontsize=10)
    figure.tight_layout()
    path = os.path.join(output_dir, f'gallery-{label}-seed{result.seed}.png')
    figure.savefig(path)
    paths.append(path)
  env.close()
  return paths
