"""Learning benchmark: does PPO reach the target return within the step budget? Prints JSON.

    python -m bench.learning [--configs=pendulum,cartpole] [--seeds=0,1,2] [--steps=N]
        [--eval_episodes=10] [--output=FILE] [--set key=value ...]

For every config and seed it trains a fresh run (environments in this process),
then reports:

- `train_score`: mean training return over the last logged interval (the
  stochastic policy, as in published PPO curves);
- `best_train_score` and `first_step_at_target`: the best logged interval and
  the first global step whose interval reached the target;
- `eval_return`: mean return of the deterministic policy over
  `eval_episodes` fresh episodes after training;
- `wall_seconds`: wall time of the training run.

Targets: Pendulum-v1 >= -200 within 200k steps; CartPole-v1 >= 475 within 100k.
A seed passes when its final `train_score` or its `eval_return` reaches the target.
"""

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

TARGETS = {'pendulum': -200.0, 'cartpole': 475.0}


def evaluate(run_dir, episodes, seed=10_000):
  """Mean return of the run's deterministic policy over fresh episodes."""
  from agents.evaluation import play
  from agents.training import builders
  policy = play.DeterministicPolicy(run_dir)
  env = builders.make_env(policy.config)
  returns = [sum(step.reward for step in play.play_episode(env, policy, seed + episode))
             for episode in range(episodes)]
  env.close()
  return float(np.mean(returns))


def run_one(name, seed, steps, eval_episodes, overrides):
  from agents import configs
  from agents.training import trainer
  config_overrides = dict(overrides, seed=seed, **{'environment.processes': False})
  if steps:
    config_overrides['loop.steps'] = steps
  config = configs.resolve(name, config_overrides)
  run_dir = tempfile.mkdtemp(prefix=f'bench-{name}-{seed}-')
  start = time.time()
  result = trainer.train(config, run_dir, quiet=True)
  wall = time.time() - start
  with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
    rows = [json.loads(line) for line in file]
  scores = [(row['step'], row['mean_score']) for row in rows
            if row['phase'] == 'train' and row['mean_score'] is not None]
  target = TARGETS.get(name)
  first_at_target = next((step for step, score in scores if target is not None
                          and score >= target), None)
  eval_return = evaluate(run_dir, eval_episodes) if eval_episodes else None
  train_score = scores[-1][1] if scores else None
  passed = target is not None and any(
      value is not None and value >= target for value in (train_score, eval_return))
  return {
      'config': name, 'seed': seed, 'steps': result['step'], 'train_score': train_score,
      'best_train_score': max((score for _, score in scores), default=None),
      'first_step_at_target': first_at_target, 'eval_return': eval_return,
      'target': target, 'passed': passed, 'wall_seconds': round(wall, 1), 'run_dir': run_dir}


def _mean(values):
  """Mean of the values that are not None (a short run may have no score yet); None if none."""
  values = [value for value in values if value is not None]
  return float(np.mean(values)) if values else None


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--configs', default='pendulum,cartpole')
  parser.add_argument('--seeds', default='0,1,2')
  parser.add_argument('--steps', type=int, default=None, help='Override the step budget.')
  parser.add_argument('--eval_episodes', type=int, default=10)
  parser.add_argument('--output', default=None, help='Also write the JSON here.')
  parser.add_argument('--set', dest='overrides', action='append', default=[])
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  from agents import configs
  overrides = dict(configs.parse_override(text) for text in args.overrides)
  runs = []
  for name in args.configs.split(','):
    for seed in (int(s) for s in args.seeds.split(',')):
      runs.append(run_one(name, seed, args.steps, args.eval_episodes, overrides))
      print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
  summary = {}
  for name in args.configs.split(','):
    mine = [run for run in runs if run['config'] == name]
    summary[name] = {
        'seeds': len(mine), 'passed': sum(run['passed'] for run in mine),
        'mean_train_score': _mean(run['train_score'] for run in mine),
        'mean_eval_return': _mean(run['eval_return'] for run in mine),
        'mean_wall_seconds': _mean(run['wall_seconds'] for run in mine),
        'steps': mine[0]['steps'], 'target': TARGETS.get(name)}
  report = {'summary': summary, 'runs': runs}
  text = json.dumps(report, indent=2)
  print(text)
  if args.output:
    with open(args.output, 'w', encoding='utf-8') as file:
      file.write(text)
  return 0


if __name__ == '__main__':
  sys.exit(main())
