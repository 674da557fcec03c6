"""Layouts of an evaluation batch, fleets x slab size, interleaved; prints JSON.

    OPENBLAS_NUM_THREADS=1 python -m bench.evaluation_fleets --agent=station_seeker \
        --seeds=2048 --rounds=2 [--layouts=1x512,2x512,2x1024] [--workers=2]

A layout `FxS` flies the first `--seeds` seeds of big_eval with `runner.fly(fleets=F,
slab_size=S)` and two worker processes. With one fleet, the workers wait while this
process computes the policy's actions, and this process waits while they step; with
two, each side works while the other does. Each round runs every layout, the order
reversed every other round, so slow drifts of the machine's load hit all alike.
"""

import argparse
import json
import os
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')

from agents.evaluation import runner, suites  # noqa: E402


def _time(agent, suite, seeds, workers, layout):
  fleets, slab_size = layout
  start = time.perf_counter()
  results = runner.fly(agent, suite, seeds, workers, slab_size, fleets=fleets)
  seconds = time.perf_counter() - start
  steps = sum(result.final_timestep for result in results)
  return steps / seconds, {result.seed: result.twr50 for result in results}


def _parse(layouts):
  parsed = []
  for layout in layouts.split(','):
    fleets, _, slab_size = layout.partition('x')
    parsed.append((int(fleets), int(slab_size)))
  return parsed


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--agent', default='station_seeker')
  parser.add_argument('--seeds', type=int, default=2048)
  parser.add_argument('--rounds', type=int, default=2)
  parser.add_argument('--workers', type=int, default=2)
  parser.add_argument('--layouts', default='1x512,2x512,2x1024',
                      help='comma-separated FLEETSxSLAB_SIZE; the first is the reference')
  args = parser.parse_args(argv)
  layouts = _parse(args.layouts)
  suite = suites.get_suite('big_eval')
  seeds = list(suite.seeds)[:args.seeds]
  rates = {layout: [] for layout in layouts}
  twr50 = {}
  load = [os.getloadavg()[0]]
  for round_index in range(args.rounds):
    for layout in layouts if round_index % 2 == 0 else layouts[::-1]:
      rate, by_seed = _time(args.agent, suite, seeds, args.workers, layout)
      rates[layout].append(rate)
      twr50.setdefault(layout, by_seed)
      load.append(os.getloadavg()[0])
  mean = {layout: sum(values) / len(values) for layout, values in rates.items()}
  reference = layouts[0]
  print(json.dumps({
      'agent': args.agent, 'seeds': len(seeds), 'workers': args.workers,
      'rounds': args.rounds,
      'balloon_steps_per_s': {f'{f}x{s}': [round(r) for r in rs]
                              for (f, s), rs in rates.items()},
      'vs_first': {f'{f}x{s}': round(mean[(f, s)] / mean[reference], 3) for f, s in layouts},
      'same_results': all(by_seed == twr50[reference] for by_seed in twr50.values()),
      'load_1min': {'max': max(load), 'mean': round(sum(load) / len(load), 2)},
      'cpus': os.cpu_count()}))


if __name__ == '__main__':
  main()
