"""TWR50 of the baseline controllers over N seeds, each flown as one vector slab; prints JSON.

    python -m bench.baselines --seeds 100 [--policies station_seeker,random_walk,random]
        [--run_dir RUN_DIR]

`--run_dir` adds a row for the deterministic policy of a trained balloon run (its latest
checkpoint), flown on the same seeds in slabs of at most the run's `num_agents`, with
this benchmark's wind and episode length.

TWR50 is the fraction of the 960 agent steps (48 h) a balloon spends within 50 km of its
station (balloon.md §14); a balloon that terminates early counts as outside afterwards.
Seeds are 0 … N−1 (episode seeds of the procedural environment).
"""

import argparse
import functools
import json
import os
import time

# One BLAS thread per process: OpenBLAS threads spin-wait and, on a busy machine, make the
# GP's small batched matmuls many times slower; parallelism comes from slab processes.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')

import numpy as np  # noqa: E402

from agents.env.balloon import baselines  # noqa: E402


def _fly_baseline(name, seeds, **kwargs):
  return baselines.evaluate(baselines.POLICIES[name](len(seeds), seed=0), seeds, **kwargs)


def _fly_trained(run_dir, seeds, **kwargs):
  """`baselines.evaluate` of a trained run's deterministic policy, in slabs of num_agents."""
  from agents import configs
  from agents.scripts import evaluate as evaluate_lib
  policy = evaluate_lib.DeterministicPolicy(run_dir)
  if policy.config['environment']['id'] != configs.BALLOON_ENV_ID:
    raise SystemExit(f'--run_dir {run_dir} trained on {policy.config["environment"]["id"]}, '
                     f'not {configs.BALLOON_ENV_ID}.')
  size = policy.num_agents
  parts = [baselines.evaluate(policy, seeds[start:start + size], **kwargs)
           for start in range(0, len(seeds), size)]
  return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--seeds', type=int, default=100)
  parser.add_argument('--first_seed', type=int, default=0)
  parser.add_argument('--policies', default=','.join(baselines.POLICIES))
  parser.add_argument('--steps', type=int, default=960)
  parser.add_argument('--wind', default='procedural', choices=('procedural', 'static'))
  parser.add_argument('--run_dir', default=None,
                      help='also fly the deterministic policy of this trained balloon run')
  args = parser.parse_args(argv)
  seeds = list(range(args.first_seed, args.first_seed + args.seeds))
  flights = {name: functools.partial(_fly_baseline, name) for name in args.policies.split(',')}
  if args.run_dir:
    flights['trained'] = functools.partial(_fly_trained, args.run_dir)
  results = {}
  for name, fly in flights.items():
    start = time.perf_counter()
    metrics = fly(seeds, wind=args.wind, steps=args.steps)
    seconds = time.perf_counter() - start
    twr = metrics['twr50']
    results[name] = {
        'twr50_mean': round(float(twr.mean()), 4),
        'twr50_stderr': round(float(twr.std(ddof=1) / np.sqrt(len(twr))), 4) if len(twr) > 1
        else None,
        'twr50_median': round(float(np.median(twr)), 4),
        'mean_reward': round(float(metrics['reward'].mean()), 2),
        'terminated': int(metrics['terminated'].sum()),
        'seconds': round(seconds, 1),
    }
    print(json.dumps({'policy': name, **results[name]}), flush=True)
  print(json.dumps({'seeds': len(seeds), 'steps': args.steps, 'wind': args.wind,
                    'results': results}))


if __name__ == '__main__':
  main()
