"""One fleet against two taking turns (`runner.fly(fleets=...)`), interleaved; prints JSON.

    OPENBLAS_NUM_THREADS=1 python -m bench.evaluation_fleets --agent=station_seeker \
        --seeds=2048 --rounds=2 [--workers=2] [--slab_size=512]

With one fleet, the workers wait while this process computes the policy's actions and
this process waits while they step; with two, each side works while the other does.
The first `--seeds` seeds of big_eval are flown in each configuration, ABBA order.
"""

import argparse
import json
import os
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')

from agents.evaluation import runner, suites  # noqa: E402


def _time(agent, suite, seeds, workers, slab_size, fleets):
  start = time.perf_counter()
  results = runner.fly(agent, suite, seeds, workers, slab_size, fleets=fleets)
  seconds = time.perf_counter() - start
  steps = sum(result.final_timestep for result in results)
  return steps / seconds, {result.seed: result.twr50 for result in results}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--agent', default='station_seeker')
  parser.add_argument('--seeds', type=int, default=2048)
  parser.add_argument('--rounds', type=int, default=2)
  parser.add_argument('--workers', type=int, default=2)
  parser.add_argument('--slab_size', type=int, default=512)
  args = parser.parse_args(argv)
  suite = suites.get_suite('big_eval')
  seeds = list(suite.seeds)[:args.seeds]
  rates = {1: [], 2: []}
  twr50 = {}
  load = [os.getloadavg()[0]]
  for round_index in range(args.rounds):
    order = (1, 2) if round_index % 2 == 0 else (2, 1)
    for fleets in order:
      rate, by_seed = _time(args.agent, suite, seeds, args.workers, args.slab_size, fleets)
      rates[fleets].append(rate)
      twr50.setdefault(fleets, by_seed)
      load.append(os.getloadavg()[0])
  mean = {fleets: sum(values) / len(values) for fleets, values in rates.items()}
  print(json.dumps({
      'agent': args.agent, 'seeds': len(seeds), 'workers': args.workers,
      'slab_size': args.slab_size, 'rounds': args.rounds,
      'balloon_steps_per_s': {f'{fleets}_fleet{"s" * (fleets > 1)}': [round(r) for r in rs]
                              for fleets, rs in rates.items()},
      'two_over_one': round(mean[2] / mean[1], 3),
      'same_results': twr50[1] == twr50[2],
      'load_1min': {'max': max(load), 'mean': round(sum(load) / len(load), 2)},
      'cpus': os.cpu_count()}))


if __name__ == '__main__':
  main()
