"""Figures of an evaluation: the distribution over seeds, a comparison, a gallery of flights.

The distribution and the comparison plot the environment's per-seed metrics (the
balloon: TWR50 strict and BLE's; any other: the return per seed). The gallery re-flies
the best, median and worst seeds and draws them with the environment's flight renderer,
for environments whose evaluation plug-in has one (the balloon).

matplotlib (the `viz` extra) is imported lazily with the Agg backend.
"""

import os

import numpy as np

from agents.evaluation import policies as policies_lib
from agents.evaluation import statistics


def available():
  """Whether matplotlib (the `viz` extra) can be imported."""
  try:
    import matplotlib  # noqa: F401  pylint: disable=unused-import
  except ImportError:
    return False
  return True


def _figure(width, height):
  import matplotlib
  matplotlib.use('Agg', force=False)
  import matplotlib.figure
  return matplotlib.figure.Figure(figsize=(width, height), dpi=90)


def distribution(results, path, title, environment):
  """A histogram of the headline metric and the ECDFs of the plug-in's distribution metrics.

  Args:
    results: the per-seed results.
    path: the PNG to write.
    title: the figure's title.
    environment: the `environments.EnvironmentEvaluation` of the results.
  """
  figure = _figure(10, 4)
  histogram, ecdf = figure.subplots(1, 2)
  curves = [(np.array([result.value(name) for result in results], np.float64), label)
            for name, label in environment.distribution]
  bounds = environment.metric_range
  bins = np.linspace(*bounds, 21) if bounds else 20
  histogram.hist(curves[0][0], bins=bins, color='tab:blue', alpha=0.8, label=curves[0][1])
  histogram.set(xlabel=environment.metric_label, ylabel='seeds',
                title=f'{title}: {len(results)} seeds')
  for (values, label), style in zip(curves, ('-', '--', ':', '-.')):
    ordered = np.sort(values)
    ecdf.step(ordered, np.arange(1, len(ordered) + 1) / len(ordered), style, where='post',
              label=label)
  ecdf.set(xlabel=environment.metric_label, ylabel='fraction of seeds ≤ x', title='ECDF')
  if bounds:
    ecdf.set_xlim(*bounds)
  ecdf.legend(loc='lower right', fontsize=8)
  figure.tight_layout()
  figure.savefig(path)
  return path


def comparison(results_by_agent, path, metric, metric_range=None):
  """ECDFs of every agent and their mean / IQM with 95 % intervals, in one figure.

  `metric_range` (low, high) bounds the ECDF's axis when the metric has bounds.
  """
  figure = _figure(11, 4)
  ecdf, intervals = figure.subplots(1, 2, gridspec_kw={'width_ratios': [3, 2]})
  labels = []
  for position, (name, results) in enumerate(results_by_agent.items()):
    values = np.array([result.value(metric) for result in results], np.float64)
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
  ecdf.set(xlabel=metric, ylabel='fraction of seeds ≤ x', title='ECDF over seeds')
  if metric_range:
    ecdf.set_xlim(*metric_range)
  ecdf.legend(loc='lower right', fontsize=8)
  intervals.set_yticks(range(len(labels)), labels, fontsize=8)
  intervals.set(xlabel=f'{metric} (95 % bootstrap CI)', title='mean (o) and IQM (s)')
  intervals.legend(fontsize=8)
  figure.tight_layout()
  figure.savefig(path)
  return path


def gallery_seeds(results, metric):
  """(label, result) of the best, median and worst episodes by `metric` (then return)."""
  ranked = sorted(results, key=lambda r: (r.value(metric), r.cumulative_reward, -r.seed))
  picks = [('best', ranked[-1]), ('median', ranked[len(ranked) // 2]), ('worst', ranked[0])]
  seen, unique = set(), []
  for label, result in picks:
    if result.seed not in seen:
      seen.add(result.seed)
      unique.append((label, result))
  return unique


def gallery(agent, suite, results, output_dir, environment, checkpoint=None):
  """Re-flies the best, median and worst seeds and draws each with the environment's renderer.

  Args:
    agent: the agent spec.
    suite: the (completed) `Suite` of the results.
    results: the per-seed results.
    output_dir: where the pictures go.
    environment: the `environments.EnvironmentEvaluation`; it must have a flight renderer.
    checkpoint: for a `run:` agent, the checkpoint flown.

  Writes `gallery-<label>-seed<seed>.png` files; returns their paths.
  """
  picks = gallery_seeds(results, environment.metric)
  count = len(picks)
  env = environment.slab_constructor(
      count, suite.episode_length, suite.options, agent=agent,
      observation_kwargs=policies_lib.observation_kwargs(agent, environment))()
  policy = policies_lib.make_policy(agent, count, suite.episode_length, checkpoint,
                                    environment.env_id)
  seeds = [result.seed for _, result in picks]
  observ, _ = env.reset(seed=environment.episode_seeds(seeds))
  rows = np.arange(count)
  policies_lib.begin_episode(policy, rows, seeds)
  renderers = [environment.flight_renderer(env, row) for row in rows]
  active = np.ones(count, bool)
  feedback = getattr(policy, 'feedback', None)
  try:
    while active.any():
      actions = policies_lib.check_actions(policy(observ), count, agent,
                                           env.single_action_space)
      observ, reward, terminated, truncated, _ = env.step(actions)
      if feedback is not None:
        feedback(reward, terminated & active, truncated & active)
      for row in np.flatnonzero(active):
        renderers[row].record()
      active &= ~(terminated | truncated)
    # The renderers read the slab's simulator (the wind) while drawing: close it after.
    return [_draw_flight(renderer, agent, suite, label, result, output_dir, environment)
            for (label, result), renderer in zip(picks, renderers)]
  finally:
    env.close()


def _draw_flight(renderer, agent, suite, label, result, output_dir, environment):
  """Draws one flight of the gallery; returns the PNG's path."""
  figure = _figure(12, 4)
  renderer.draw(figure)
  figure.suptitle(f'{agent}, {suite.name}: {label} flight, seed {result.seed}, '
                  f'{environment.metric_label} {result.value(environment.metric):.3f}',
                  fontsize=10)
  figure.tight_layout()
  path = os.path.join(output_dir, f'gallery-{label}-seed{result.seed}.png')
  figure.savefig(path)
  return path
