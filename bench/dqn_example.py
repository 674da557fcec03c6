"""The worked example's DQN on the balloon: a fixed training budget, then small_eval. Prints JSON.

    python -m bench.dqn_example [--iterations=15] [--batch=64] [--suite=small_eval] [--seed=0]
    python -m bench.dqn_example --quick      # 2 iterations of 48 steps on 8 balloons, 5 seeds

`examples/dqn_agent.py`'s `BatchedDQNAgent` (the learner of `DQNAgent`, acting for a
batch) is trained by `run_training_loop` on `--batch` balloons stepped in worker
processes (`make_batch_env`), for `--iterations` iterations of one 960-step episode per
balloon, in a fresh run directory. It trains on the `balloon` config's shaped reward
(`--progress_reward`, 0.2 per km gained toward the station; 0 is BLE's reward). Then
`eval_agent` flies it greedily on the suite with BLE's reward, and the random agent
and the station seeker fly the same seeds (the project's evaluation).

Reported: the training steps, gradient steps, wall time and steps per second; per
agent the TWR50 mean with its 95 % bootstrap interval, IQM and median, and the mean
return; and `agents.evaluation.statistics.compare_paired` of the DQN against random and
against the station seeker on the same seeds (mean difference with its paired 95 %
bootstrap interval, Wilcoxon p, wins / ties / losses, probability of improvement).
"""

import argparse
import ast
import json
import sys
import tempfile
import time


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--iterations', type=int, default=15,
                      help='iterations of one episode per balloon')
  parser.add_argument('--batch', type=int, default=64, help='balloons trained side by side')
  parser.add_argument('--episode_length', type=int, default=960)
  parser.add_argument('--progress_reward', type=float, default=0.2,
                      help="the training reward's shaping (0: BLE's reward)")
  parser.add_argument('--suite', default='small_eval')
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--set', action='append', default=[], metavar='NAME=VALUE',
                      help='a hyperparameter of the agent (a Python literal), repeatable')
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
  from agents.evaluation.results import EvaluationResult
  from agents.python_agents import eval_lib, train_lib
  from examples.dqn_agent import BatchedDQNAgent

  suite = eval_lib.get_eval_suite(args.suite)
  iterations, episode_length, batch_size = args.iterations, args.episode_length, args.batch
  if args.quick:
    iterations, episode_length, batch_size = 2, 48, 8
    suite = eval_lib.EvaluationSuite(suite.seeds[:5], 48, name=f'{args.suite}[:5]')
    hyperparameters.update(min_replay=64, epsilon_decay_steps=400)

  try:
    dqn = BatchedDQNAgent(3, (constants.OBSERVATION_SIZE,), batch_size, **hyperparameters)
    env = train_lib.make_batch_env(constants.BALLOON_ENV_ID, batch_size,
                                   progress_reward=args.progress_reward)
  except (TypeError, ValueError) as error:
    parser.error(str(error))
  run_dir = tempfile.mkdtemp(prefix='bench-dqn-example-')
  start = time.time()
  try:
    train_lib.run_training_loop(run_dir, env, dqn, iterations,
                                max_episode_length=episode_length, seed=args.seed,
                                episodes_per_iteration=None,  # one round of the batch
                                progress=False)
  finally:
    env.close()
  train_seconds = time.time() - start

  start = time.time()
  flown = eval_lib.eval_agent(dqn, None, suite, calculate_flight_path=False)
  eval_seconds = time.time() - start
  results = {'dqn': [EvaluationResult(result.seed, result.cumulative_reward,
                                      result.final_timestep, result.metrics)
                     for result in flown]}
  for name in ('random', 'station_seeker'):
    results[name] = runner.fly(name, suite, suite.seeds, workers=0)
  agents = {}
  for name, per_seed in results.items():
    twr50 = statistics.describe_metric([result.twr50 for result in per_seed])
    agents[name] = {'twr50': {key: _rounded(twr50[key])
                              for key in ('mean', 'mean_ci95', 'iqm', 'median')},
                    'return_mean': round(sum(result.cumulative_reward for result in per_seed)
                                         / len(per_seed), 2)}
  paired = {}
  for baseline in ('random', 'station_seeker'):
    comparison = statistics.compare_paired(results['dqn'], results[baseline], 'twr50',
                                           names=('dqn', baseline))
    paired[f'dqn_minus_{baseline}'] = {
        key: _rounded(comparison[key]) for key in (
            'mean_difference', 'mean_difference_ci95', 'wilcoxon_p', 'wins', 'ties',
            'losses', 'probability_of_improvement')}
  steps = dqn.training_steps
  report = {
      'benchmark': 'dqn_example', 'quick': args.quick, 'seed': args.seed,
      'hyperparameters': hyperparameters,
      'train': {'iterations': iterations, 'balloons': batch_size,
                'episode_length': episode_length, 'progress_reward': args.progress_reward,
                'steps': steps, 'gradient_steps': dqn.learner.updates,
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


def _rounded(value):
  if isinstance(value, float):
    return float(f'{value:.4g}')
  if isinstance(value, list):
    return [_rounded(item) for item in value]
  return value


if __name__ == '__main__':
  sys.exit(main())
