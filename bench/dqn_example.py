"""The worked example's DQN on the balloon: a fixed training budget, then small_eval. Prints JSON.

    python -m bench.dqn_example [--iterations=100] [--suite=small_eval] [--seed=0]
    python -m bench.dqn_example --quick      # 2 iterations of 48 steps, 5 seeds of 48 steps

`examples/dqn_agent.py`'s `DQNAgent` (default hyperparameters) is trained BLE's way,
one balloon, by `run_training_loop` for `--iterations` episodes of 960 steps, in a fresh
run directory; then `eval_agent` flies it greedily on the suite. The random agent and
the station seeker fly the same seeds (the project's evaluation), for scale. Reported:
the training steps, wall time and steps per second, and per agent the mean TWR50 and
return with the suite's seeds, and the DQN's paired TWR50 difference to random.
"""

import argparse
import json
import sys
import tempfile
import time

import numpy as np


def evaluate_baseline(name, suite):
  """Per-seed TWR50 and returns of a baseline on the suite (the project's evaluation)."""
  from agents.evaluation import runner
  results = {result.seed: result for result in runner.fly(name, suite, suite.seeds,
                                                          workers=0)}
  return ([results[seed].twr50 for seed in suite.seeds],
          [results[seed].cumulative_reward for seed in suite.seeds])


def summary(twr50, returns):
  return {'twr50_mean': round(float(np.mean(twr50)), 4),
          'return_mean': round(float(np.mean(returns)), 2)}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--iterations', type=int, default=100,
                      help='training episodes of one balloon (960 steps each)')
  parser.add_argument('--episode_length', type=int, default=960)
  parser.add_argument('--suite', default='small_eval')
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--quick', action='store_true',
                      help='2 iterations of 48 steps; 5 seeds of the suite, 48 steps each')
  args = parser.parse_args(argv)

  import gymnasium

  from agents.env.balloon import constants
  from agents.python_agents import eval_lib, train_lib
  from examples.dqn_agent import DQNAgent

  suite = eval_lib.get_eval_suite(args.suite)
  iterations, episode_length = args.iterations, args.episode_length
  hyperparameters = {'seed': args.seed}
  if args.quick:
    iterations, episode_length = 2, 48
    suite = eval_lib.EvaluationSuite(suite.seeds[:5], 48, name=f'{args.suite}[:5]')
    hyperparameters.update(min_replay=32, epsilon_decay_steps=96)

  env = gymnasium.make(constants.BALLOON_ENV_ID)
  agent = DQNAgent(3, (1099,), **hyperparameters)
  run_dir = tempfile.mkdtemp(prefix='bench-dqn-example-')
  start = time.time()
  train_lib.run_training_loop(run_dir, env, agent, iterations,
                              max_episode_length=episode_length, seed=args.seed,
                              progress=False)
  train_seconds = time.time() - start
  steps = int(agent._training_steps.numpy())

  start = time.time()
  results = eval_lib.eval_agent(agent, env, suite, calculate_flight_path=False)
  eval_seconds = time.time() - start
  dqn_twr50 = [result.twr50 for result in results]
  agents = {'dqn': summary(dqn_twr50, [result.cumulative_reward for result in results])}
  random_twr50 = None
  for name in ('random', 'station_seeker'):
    twr50, returns = evaluate_baseline(name, suite)
    agents[name] = summary(twr50, returns)
    random_twr50 = twr50 if name == 'random' else random_twr50
  difference = np.asarray(dqn_twr50) - np.asarray(random_twr50)
  report = {
      'benchmark': 'dqn_example', 'quick': args.quick, 'seed': args.seed,
      'train': {'iterations': iterations, 'episode_length': episode_length,
                'steps': steps, 'seconds': round(train_seconds, 1),
                'steps_per_second': round(steps / train_seconds, 1)},
      'suite': {'name': suite.name, 'seeds': len(suite.seeds),
                'episode_length': suite.max_episode_length},
      'eval_seconds': round(eval_seconds, 1), 'agents': agents,
      'dqn_minus_random_twr50': {'mean': round(float(difference.mean()), 4),
                                 'wins': int((difference > 0).sum()),
                                 'ties': int((difference == 0).sum()),
                                 'losses': int((difference < 0).sum())},
      'run_dir': run_dir,
  }
  json.dump(report, sys.stdout, indent=2)
  print()
  return 0


if __name__ == '__main__':
  sys.exit(main())
