"""QR-DQN on CartPole: training steps and wall time to a mean evaluation return >= 475. Prints JSON.

    python -m bench.qrdqn_cartpole [--seeds=0,1,2] [--steps=N] [--set key=value ...]

For every seed it trains `cartpole_qrdqn` in a fresh run directory (environments
in this process) and reads the evaluation rows of its metrics.jsonl: the loop
runs a greedy evaluation phase of `loop.eval_steps` (8 environments x 1,000
steps, at least 16 whole episodes) after every `loop.eval_every` training
steps. A seed solves CartPole when an evaluation phase's mean return over its
episodes (at least the last 10) reaches 475; reported are the training steps
(environment steps summed over the batch, evaluation excluded) before that
phase, the wall time until its row was written, and the whole run's wall time.
"""

import argparse
import json
import os
import sys
import tempfile
import time

TARGET = 475.0
MIN_EPISODES = 10


def solved_at(rows, config):
  """(training steps, wall time) of the first evaluation phase with mean return >= TARGET."""
  loop = config['loop']
  cycle = loop['eval_every'] + loop['eval_steps']
  for row in rows:
    if (row['phase'] == 'eval' and row['episodes'] >= MIN_EPISODES
        and row['mean_score'] is not None and row['mean_score'] >= TARGET):
      # Evaluation phases end on a cycle boundary: train steps are eval_every per cycle.
      return (row['step'] // cycle) * loop['eval_every'], row['wall_time']
  return None, None


def run_one(seed, steps, overrides):
  from agents import configs
  from agents.training import trainer
  config_overrides = dict(overrides, seed=seed, **{'environment.processes': False})
  if steps:
    config_overrides['loop.steps'] = steps
  config = configs.resolve('cartpole_qrdqn', config_overrides)
  run_dir = tempfile.mkdtemp(prefix=f'bench-qrdqn-{seed}-')
  start = time.time()
  result = trainer.train(config, run_dir, quiet=True, export_policy=False)
  wall = time.time() - start
  with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
    rows = [json.loads(line) for line in file]
  train_steps, solved_time = solved_at(rows, config)
  evals = [round(row['mean_score'], 1) for row in rows
           if row['phase'] == 'eval' and row['mean_score'] is not None]
  return {'seed': seed, 'global_step': result['step'], 'solved': train_steps is not None,
          'train_steps_to_475': train_steps,
          'wall_seconds_to_475': round(solved_time - start, 1) if solved_time else None,
          'wall_seconds': round(wall, 1), 'eval_returns': evals, 'run_dir': run_dir}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--seeds', default='0,1,2')
  parser.add_argument('--steps', type=int, default=None, help='loop.steps (training steps)')
  parser.add_argument('--set', dest='overrides', action='append', default=[],
                      metavar='KEY=VALUE', help='config override, repeatable')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  from agents import configs
  overrides = dict(configs.parse_override(text) for text in args.overrides)
  results = [run_one(int(seed), args.steps, overrides) for seed in args.seeds.split(',')]
  solved = [result for result in results if result['solved']]
  summary = {
      'config': 'cartpole_qrdqn', 'overrides': overrides, 'seeds_solved': len(solved),
      'seeds': len(results),
      'max_train_steps_to_475': max((r['train_steps_to_475'] for r in solved), default=None),
      'max_wall_seconds_to_475': max((r['wall_seconds_to_475'] for r in solved), default=None)}
  print(json.dumps({'summary': summary, 'runs': results}, indent=1))
  return 0 if len(solved) == len(results) else 1


if __name__ == '__main__':
  sys.exit(main())
