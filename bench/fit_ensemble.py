"""Several fits flown as one agent: their action probabilities averaged, then the mode.

A diagnostic for the spread between fits of one config: if a policy that averages its
fits' action probabilities flies better than each fit, the fits' differences are partly
variance that one policy could shed (a larger batch, distillation of the ensemble); if it
flies as they do, they differ in ways averaging does not repair. The ensemble is not a fit
and is not reported as one.

    python -m bench.fit_ensemble --run=EXP/fit00-NAME --run=EXP/fit01-NAME ... \
        [--suite=small_eval] [--output_dir=eval/ensemble]

Every run must be feed-forward (no recurrent state) and of one environment and
observation. With `--output_dir` the per-seed results are written as `evaluate` writes
them, so `evaluate compare` and `bench.paired_fit_means` pair them with other agents.
"""

import argparse
import json
import os

import gymnasium
import numpy as np
import tensorflow as tf


class EnsemblePolicy:
  """The batched deterministic policy of averaged action probabilities (Discrete actions)."""

  def __init__(self, algorithms):
    self._algorithms = algorithms

  def begin_episode(self, indices, seeds=None):
    del indices, seeds  # Feed-forward: nothing kept per row.

  def __call__(self, observations):
    observations = tf.convert_to_tensor(np.asarray(observations, np.float32))
    batch = int(observations.shape[0])
    probabilities = 0.0
    for algorithm in self._algorithms:
      network = algorithm.network
      logits, _ = network.policy(algorithm.normalize_observ(observations),
                                 network.initial_state(batch))
      probabilities += tf.nn.softmax(logits).numpy()
    return np.argmax(probabilities, -1)


def restore_fits(run_dirs):
  """(environment, observation options, [algorithm]) of runs that can fly as one agent.

  Raises:
    ValueError: a run that does not restore, or is of another environment or observation
      than the first, recurrent, or without Discrete actions (named).
  """
  from agents.evaluation import environments, policies
  from agents.training import builders

  first = f'run:{run_dirs[0]}'
  environment = environments.get(policies.resolve_env_id(first))
  observation_kwargs = policies.observation_kwargs(first, environment)
  algorithms = []
  for run_dir in run_dirs:
    spec = f'run:{run_dir}'
    if (policies.resolve_env_id(spec) != environment.env_id
        or policies.observation_kwargs(spec, environment) != observation_kwargs):
      raise ValueError(f'{run_dir}: its environment or observation differs from '
                       f'{run_dirs[0]}\'s.')
    _, algorithm, _, action_space = builders.restore_algorithm(run_dir, is_training=False)
    if getattr(algorithm.network, 'recurrent', False):
      raise ValueError(f'{run_dir}: a recurrent policy; the ensemble takes feed-forward ones.')
    if not isinstance(action_space, gymnasium.spaces.Discrete):
      raise ValueError(f'{run_dir}: actions {action_space}; the ensemble averages the '
                       'probabilities of Discrete actions.')
    algorithms.append(algorithm)
  return environment, observation_kwargs, algorithms


def main(argv=None):
  from agents.evaluation import results as results_lib
  from agents.evaluation import runner, statistics, suites

  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--run', action='append', required=True, help='a run directory (repeat)')
  parser.add_argument('--suite', default='small_eval')
  parser.add_argument('--output_dir', default=None)
  parser.add_argument('--slab_size', type=int, default=runner.DEFAULT_SLAB_SIZE)
  args = parser.parse_args(argv)
  try:
    environment, observation_kwargs, algorithms = restore_fits(args.run)
    suite = suites.get_suite(args.suite, environment.env_id)
  except (ValueError, FileNotFoundError) as error:  # ConfigError, EvaluationError
    parser.error(str(error))
  agent = f'ensemble of {len(args.run)} fits'
  results = sorted(runner.fly(agent, suite, suite.seeds, workers=0, slab_size=args.slab_size,
                              policy=EnsemblePolicy(algorithms), env_id=environment.env_id,
                              observation_kwargs=observation_kwargs),
                   key=lambda result: result.seed)
  values = np.array([result.value(environment.metric) for result in results])
  low, high = statistics.bootstrap_interval(values, np.mean)
  if args.output_dir:
    os.makedirs(args.output_dir, exist_ok=True)
    header = results_lib.header(agent, suite, 1, 0, agent_info={'runs': args.run},
                                env_id=environment.env_id)
    results_lib.write_shard(args.output_dir, header, results, True)
    results_lib.combine(args.output_dir)
  print(json.dumps({'agent': agent, 'suite': suite.name, 'seeds': len(values),
                    'metric': environment.metric, 'mean': round(float(values.mean()), 4),
                    'ci95': [round(float(low), 4), round(float(high), 4)]}))


if __name__ == '__main__':
  main()
