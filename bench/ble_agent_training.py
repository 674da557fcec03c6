"""A BLE-style agent trained by `run_training_loop` on a batch of balloons, then flown. JSON.

    python -m bench.ble_agent_training [--agent=dqn_example] [--iterations=15] [--batch=64] \
        [--suite=small_eval] [--seed=0] [--set NAME=VALUE ...]
    python -m bench.ble_agent_training --agent=quantile --iterations=80 [--gin_bindings=...]
    python -m bench.ble_agent_training --agent=finetune_perciatelli --iterations=33
    python -m bench.ble_agent_training --quick    # 2 iterations of 48 steps on 8 balloons, 5 seeds

The agent (`--agent`):
- `dqn_example` (default): `examples/dqn_agent.py`'s `BatchedDQNAgent` (the learner of
  `DQNAgent`, acting for a batch), its hyperparameters from `--set NAME=<literal>`;
- `quantile`: BLE's `quantile` agent as a user builds it, `run_helpers.bind_gin_variables(
  'quantile', gin_bindings=...)` then `create_agent('quantile', 3, (1099,),
  num_envs=--batch)`: the project's QR-DQN with the `balloon_qrdqn` config's column network.
  The gin file is written for one balloon (a gradient step of 32 every 4 steps); for a
  batch the bench binds `balloon_qrdqn`'s replay ratio first (`BATCH_BINDINGS`: a step of
  256 every batch step, 100,000 transitions, learning from 25,600), which
  `--gin_bindings` may override;
- `finetune_perciatelli`: `create_agent('finetune_perciatelli', 3, (1099,),
  num_envs=--batch)`, QR-DQN started from Perciatelli44's released weights with the
  `balloon_finetune_perciatelli` config's hyperparameters (the weights must be fetched:
  `python -m agents.env.balloon.controllers.perciatelli44 fetch`); Perciatelli44 as
  released flies the suite too, as a third baseline.

It is trained by `run_training_loop` on `--batch` balloons stepped in worker processes
(`make_batch_env`), for `--iterations` iterations of one 960-step episode per balloon, in
a fresh run directory, on the `balloon` config's shaped reward (`--progress_reward`, 0.2
per km gained toward the station; 0 is BLE's reward). Then `eval_agent` flies it greedily
on the suite with BLE's reward, and the random agent and the station seeker fly the same
seeds (the project's evaluation).

Reported: the training steps, wall time and steps per second; per agent the TWR50 mean
with its 95 % bootstrap interval, IQM and median, and the mean return; and
`agents.evaluation.statistics.compare_paired` of the agent against random and against the
station seeker on the same seeds (mean difference with its paired 95 % bootstrap interval,
Wilcoxon p, wins / ties / losses, probability of improvement).
"""

import argparse
import ast
import json
import sys
import tempfile
import time

AGENTS = ('dqn_example', 'quantile', 'finetune_perciatelli')
# `quantile` on a batch of balloons: balloon_qrdqn's replay ratio (4 samples per transition
# for 64 balloons) in place of the gin file's single-balloon one.
BATCH_BINDINGS = ('QuantileAgent.batch_size = 256', 'QuantileAgent.update_every = 1',
                  'QuantileAgent.replay_capacity = 100000',
                  'QuantileAgent.learning_starts = 25600')


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--agent', choices=AGENTS, default='dqn_example')
  parser.add_argument('--gin_bindings', action='append', default=[],
                      help="`quantile`: a gin binding, e.g. 'QuantileAgent.learning_rate = "
                           "3e-4' (repeatable)")
  parser.add_argument('--iterations', type=int, default=15,
                      help='iterations of one episode per balloon')
  parser.add_argument('--batch', type=int, default=64, help='balloons trained side by side')
  parser.add_argument('--episode_length', type=int, default=960)
  parser.add_argument('--progress_reward', type=float, default=0.2,
                      help="the training reward's shaping (0: BLE's reward)")
  parser.add_argument('--suite', default='small_eval')
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--set', action='append', default=[], metavar='NAME=VALUE',
                      help='`dqn_example`: a hyperparameter (a Python literal), repeatable')
  parser.add_argument('--quick', action='store_true',
                      help='2 iterations of 48 steps on 8 balloons; 5 seeds of 48 steps')
  args = parser.parse_args(argv)
  for name in ('iterations', 'batch', 'episode_length'):
    if getattr(args, name) < 1:
      parser.error(f'--{name} must be a positive int, got {getattr(args, name)}.')
  hyperparameters = {'seed': args.seed}
  for item in args.set:
    name, _, value = item.partition('=')
    try:
      hyperparameters[name] = ast.literal_eval(value)
    except (ValueError, SyntaxError):
      parser.error(f'--set {item!r}: expected NAME=<Python literal>.')

  from agents.env.balloon import constants
  from agents.evaluation import runner, statistics
  from agents.evaluation.results import SeedResult
  from agents.python_agents import eval_lib, train_lib

  suite = eval_lib.get_eval_suite(args.suite)
  iterations, episode_length, batch_size = args.iterations, args.episode_length, args.batch
  if args.quick:
    iterations, episode_length, batch_size = 2, 48, 8
    suite = eval_lib.EvaluationSuite(suite.seeds[:5], 48, name=f'{args.suite}[:5]')
  if args.agent != 'dqn_example' and args.set:
    parser.error(f'--set is for dqn_example, not {args.agent}.')
  if args.agent != 'quantile' and args.gin_bindings:
    parser.error(f'--gin_bindings is for quantile, not {args.agent}.')
  try:
    agent, hyperparameters = _make_agent(args, batch_size, hyperparameters)
    env = train_lib.make_batch_env(constants.BALLOON_ENV_ID, batch_size,
                                   progress_reward=args.progress_reward)
  except (TypeError, ValueError) as error:
    parser.error(str(error))
  run_dir = tempfile.mkdtemp(prefix='bench-ble-agent-')
  start = time.time()
  try:
    train_lib.run_training_loop(run_dir, env, agent, iterations,
                                max_episode_length=episode_length, seed=args.seed,
                                episodes_per_iteration=None,  # one round of the batch
                                progress=False)
  finally:
    env.close()
  train_seconds = time.time() - start

  start = time.time()
  flown = eval_lib.eval_agent(agent, None, suite, calculate_flight_path=False)
  eval_seconds = time.time() - start
  results = {args.agent: [SeedResult(result.seed, result.cumulative_reward,
                                      result.final_timestep, result.metrics)
                     for result in flown]}
  baselines = ('random', 'station_seeker') + (
      ('perciatelli44',) if args.agent == 'finetune_perciatelli' else ())
  for name in baselines:
    results[name] = runner.fly(name, suite, suite.seeds, workers=0)
  agents = {}
  for name, per_seed in results.items():
    twr50 = statistics.describe_metric([result.twr50 for result in per_seed])
    agents[name] = {'twr50': {key: _rounded(twr50[key])
                              for key in ('mean', 'mean_ci95', 'iqm', 'median')},
                    'return_mean': round(sum(result.cumulative_reward for result in per_seed)
                                         / len(per_seed), 2)}
  paired = {}
  for baseline in baselines:
    comparison = statistics.compare_paired(results[args.agent], results[baseline], 'twr50',
                                           names=(args.agent, baseline))
    paired[f'{args.agent}_minus_{baseline}'] = {
        key: _rounded(comparison[key]) for key in (
            'mean_difference', 'mean_difference_ci95', 'wilcoxon_p', 'wins', 'ties',
            'losses', 'probability_of_improvement')}
  steps, updates = _counts(agent)
  report = {
      'benchmark': 'ble_agent_training', 'agent': args.agent, 'quick': args.quick,
      'seed': args.seed, 'hyperparameters': hyperparameters,
      'train': {'iterations': iterations, 'balloons': batch_size,
                'episode_length': episode_length, 'progress_reward': args.progress_reward,
                'steps': steps, 'gradient_steps': updates,
                'seconds': round(train_seconds, 1),
                'steps_per_second': round(steps / train_seconds, 1)},
      'suite': {'name': suite.name, 'seeds': len(suite.seeds),
                'episode_length': suite.max_episode_length},
      'eval_seconds': round(eval_seconds, 1), 'agents': agents, 'paired': paired,
      'run_dir': run_dir,
  }
  json.dump(report, sys.stdout, indent=2)
  print()
  return 0


def _make_agent(args, batch_size, hyperparameters):
  """(the agent for a batch of `batch_size`, the hyperparameters or bindings it got)."""
  from agents.env.balloon import constants
  if args.agent == 'dqn_example':
    from examples.dqn_agent import BatchedDQNAgent
    if args.quick:
      hyperparameters.update(min_replay=64, epsilon_decay_steps=400)
    return BatchedDQNAgent(3, (constants.OBSERVATION_SIZE,), batch_size,
                           **hyperparameters), hyperparameters
  from agents.python_agents import run_helpers
  if args.agent == 'finetune_perciatelli':
    quick = {'learning_starts': 64, 'epsilon_decay_steps': 400} if args.quick else {}
    agent = run_helpers.create_agent('finetune_perciatelli', 3, (constants.OBSERVATION_SIZE,),
                                     num_envs=batch_size, seed=args.seed, **quick)
    return agent, quick
  bindings = list(BATCH_BINDINGS) + args.gin_bindings
  if args.quick:
    bindings += ['QuantileAgent.learning_starts = 64',
                 'QuantileAgent.epsilon_decay_steps = 400']
  run_helpers.bind_gin_variables('quantile', gin_bindings=bindings)
  agent = run_helpers.create_agent('quantile', 3, (constants.OBSERVATION_SIZE,),
                                   num_envs=batch_size, seed=args.seed)
  return agent, {'gin_bindings': bindings}


def _counts(agent):
  """(training steps, gradient steps) of the agent."""
  if hasattr(agent, 'learner'):  # the example's BatchedDQNAgent
    return int(agent.training_steps), int(agent.learner.updates)
  qrdqn = agent.batched_agent.qrdqn
  return int(qrdqn.env_steps.numpy()), int(qrdqn.num_updates.numpy())


def _rounded(value):
  if isinstance(value, float):
    return float(f'{value:.4g}')
  if isinstance(value, list):
    return [_rounded(item) for item in value]
  return value


if __name__ == '__main__':
  sys.exit(main())
