"""The cost of BLE's Perciatelli44 per balloon-decision, batched; prints JSON lines.

    python -m bench.perciatelli44_cost [--batches=1,50,100,1024] [--calls=200] [--path=PB]

One line per batch size: the network (`agents.env.balloon.controllers.perciatelli44`) decides for a
batch of B observations `--calls` times (after 5 calls of warm-up); CPU time of this
process and wall time, per call and per balloon-decision (µs). The weights are found
as the module says (fetch them with `python -m agents.env.balloon.controllers.perciatelli44 fetch`).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.controllers import perciatelli44


def decision_cost(network, batch, calls):
  """CPU and wall µs per call and per balloon-decision for a batch of `batch` observations."""
  observations = np.random.default_rng(batch).uniform(
      0, 1, (batch, constants.OBSERVATION_SIZE)).astype(np.float32)
  for _ in range(5):
    network(observations)
  cpu, wall = time.process_time(), time.perf_counter()
  for _ in range(calls):
    network(observations)
  cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
  return {'measure': 'perciatelli44_decision', 'batch': batch, 'calls': calls,
          'cpu_us_per_call': round(1e6 * cpu / calls, 1),
          'wall_us_per_call': round(1e6 * wall / calls, 1),
          'cpu_us_per_decision': round(1e6 * cpu / calls / batch, 2),
          'wall_us_per_decision': round(1e6 * wall / calls / batch, 2),
          'load_1min': round(os.getloadavg()[0], 2)}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--batches', default='1,50,100,1024')
  parser.add_argument('--calls', type=int, default=200)
  parser.add_argument('--path', default=None, help='the weights (default: found)')
  args = parser.parse_args(argv)
  try:
    network = perciatelli44.load(args.path)
  except perciatelli44.WeightsError as error:
    print(f'perciatelli44_cost: error: {error}', file=sys.stderr)
    return 2
  for batch in (int(value) for value in args.batches.split(',')):
    print(json.dumps(decision_cost(network, batch, args.calls)), flush=True)
  return 0


if __name__ == '__main__':
  sys.exit(main())
