"""Several fits flown as one agent: their action probabilities averaged, then the mode.

A diagnostic for the spread between fits of one config: if a policy that averages its
fits' action probabilities flies better than each fit, the fits' differences are partly
variance that one policy could shed (a larger batch, distillation of the ensemble); if it
flies as they do, they differ in ways averaging does not repair. The ensemble is not a fit
and is not reported as one.

    python -m agents.scripts.evaluate ensemble --run=EXP/fit00-NAME --run=EXP/fit01-NAME \
        [--suite=small_eval] [--output_dir=eval/ensemble]

Every run must be feed-forward (no recurrent state), with Discrete actions, and of one
environment and observation. With an output directory the per-seed results are written as
`evaluate` writes them, so `evaluate compare` and `evaluate groups` pair them with others.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.evaluation import environments as environments_lib
from agents.evaluation import policies, runner, statistics, suites
from agents.evaluation import results as results_lib
from agents.evaluation.errors import EvaluationError


class EnsemblePolicy:
  """The batched deterministic policy of averaged action probabilities (Discrete actions)."""

  def __init__(self, algorithms: Sequence[Any]) -> None:
    self._algorithms = algorithms

  def begin_episode(self, indices: Any, seeds: Sequence[int] | None = None) -> None:
    del indices, seeds  # Feed-forward: nothing kept per row.

  def __call__(self, observations: np.ndarray) -> np.ndarray:
    import tensorflow as tf
    observations = tf.convert_to_tensor(np.asarray(observations, np.float32))
    batch = int(observations.shape[0])
    probabilities = 0.0
    for algorithm in self._algorithms:
      network = algorithm.network
      logits, _ = network.policy(algorithm.normalize_observ(observations),
                                 network.initial_state(batch))
      probabilities += tf.nn.softmax(logits).numpy()
    return np.argmax(probabilities, -1)


def restore_fits(
    run_dirs: Sequence[str],
) -> tuple[environments_lib.EnvironmentEvaluation, dict[str, Any], list[Any]]:
  """(environment, observation options, [algorithm]) of runs that can fly as one agent.

  Raises:
    EvaluationError: a run that does not restore, or is of another environment or
      observation than the first, recurrent, or without Discrete actions (named).
  """
  import gymnasium

  from agents import configs
  from agents.training import builders

  first = f'run:{run_dirs[0]}'
  environment = environments_lib.get(policies.resolve_env_id(first))
  observation_kwargs = policies.observation_kwargs(first, environment)
  algorithms = []
  for run_dir in run_dirs:
    spec = f'run:{run_dir}'
    if (policies.resolve_env_id(spec) != environment.env_id
        or policies.observation_kwargs(spec, environment) != observation_kwargs):
      raise EvaluationError(f'{run_dir}: its environment or observation differs from '
                            f'{run_dirs[0]}\'s.')
    try:
      _, algorithm, _, action_space = builders.restore_algorithm(run_dir, is_training=False)
    except (configs.ConfigError, OSError, ValueError) as error:
      raise EvaluationError(f'{run_dir}: {error}') from None
    if algorithm.network.recurrent:
      raise EvaluationError(f'{run_dir}: a recurrent policy; the ensemble takes feed-forward '
                            'ones.')
    if not isinstance(action_space, gymnasium.spaces.Discrete):
      raise EvaluationError(f'{run_dir}: actions {action_space}; the ensemble averages the '
                            'probabilities of Discrete actions.')
    algorithms.append(algorithm)
  return environment, observation_kwargs, algorithms


def fly_ensemble(run_dirs: Sequence[str], suite: str = 'small_eval',
                 output_dir: str | None = None,
                 slab_size: int = runner.DEFAULT_SLAB_SIZE) -> dict[str, Any]:
  """Flies the runs' ensemble on a suite in this process; returns its headline statistics.

  Returns:
    {'agent', 'suite', 'seeds', 'metric', 'mean', 'mean_ci95'}; with `output_dir`, the
    per-seed results are also written there (`results.json`).

  Raises:
    EvaluationError: a run that cannot join the ensemble, or an unknown suite (named).
  """
  environment, observation_kwargs, algorithms = restore_fits(run_dirs)
  flown = suites.get_suite(suite, environment.env_id)
  agent = f'ensemble of {len(run_dirs)} fits'
  results = sorted(runner.fly(agent, flown, flown.seeds, workers=0, slab_size=slab_size,
                              policy=EnsemblePolicy(algorithms), env_id=environment.env_id,
                              observation_kwargs=observation_kwargs),
                   key=lambda result: result.seed)
  values = np.array([result.value(environment.metric) for result in results])
  if output_dir:
    os.makedirs(output_dir, exist_ok=True)
    header = results_lib.header(agent, flown, 1, 0, agent_info={'runs': list(run_dirs)},
                                env_id=environment.env_id)
    results_lib.write_shard(output_dir, header, results, True)
    results_lib.combine(output_dir)
  return {'agent': agent, 'suite': flown.name, 'seeds': len(values),
          'metric': environment.metric, 'mean': float(values.mean()),
          'mean_ci95': statistics.bootstrap_interval(values, np.mean)}
