"""What starting the balloon's worker processes costs, with its worker preload and without.

Each round starts two fresh interpreters, in turn: each builds a batch of 8 balloons in
8 worker processes (`make_batch_env`), resets it and steps it 3 times, then closes it.
One runs as the package does (the forkserver imports `agents.env.balloon.worker_preload`,
which loads the Numba kernels once, before it forks the workers); the other with the
balloon's `WORKER_PRELOADS` entry removed, so that each worker loads the kernels at its
first reset. Reported: the machine's busy CPU seconds (from /proc/stat: the workers and
the forkserver are not the interpreter's waited children) and the wall seconds of each,
medians over the rounds, and their ratios (preloaded / cold); on a shared machine the
paired rounds make the ratio the number to read. Linux only.

    python -m bench.worker_start [--rounds 5] [--workers 8]

Prints one JSON object.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_START = """
import sys
import numpy as np
from agents import plugins
from agents.python_agents import train_lib
if __name__ == '__main__':
  workers = int(sys.argv[1])
  if sys.argv[2] == 'cold':
    plugins.WORKER_PRELOADS.names()  # the plug-ins registered, then the balloon's removed
    plugins.WORKER_PRELOADS.unregister('BalloonLearningEnvironment-v0')
  batch = train_lib.make_batch_env('BalloonLearningEnvironment-v0', workers, workers)
  batch.reset(seeds=list(range(workers)))
  for _ in range(3):
    batch.step(np.zeros(workers, np.int64))
  batch.close()
"""


def _busy_seconds():
  """The machine's busy CPU seconds since boot (every state of /proc/stat's cpu line but
  idle and iowait)."""
  with open('/proc/stat', encoding='utf-8') as file:
    values = [int(value) for value in file.readline().split()[1:]]
  return (sum(values) - values[3] - values[4]) / os.sysconf('SC_CLK_TCK')


def _run(workers, mode):
  """(busy CPU seconds, wall seconds) of a fresh interpreter starting the batch."""
  busy, start = _busy_seconds(), time.perf_counter()
  environ = dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL='3')
  subprocess.run([sys.executable, '-c', _START, str(workers), mode], cwd=_ROOT, env=environ,
                 check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  wall = time.perf_counter() - start
  time.sleep(0.5)  # the forkserver and the resource tracker exit after the interpreter
  return _busy_seconds() - busy, wall


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--rounds', type=int, default=5)
  parser.add_argument('--workers', type=int, default=8)
  args = parser.parse_args(argv)
  if args.rounds < 1 or args.workers < 1:
    parser.error('--rounds and --workers must be >= 1.')
  modes = ('preloaded', 'cold')
  samples = {mode: {'cpu': [], 'wall': []} for mode in modes}
  for _ in range(args.rounds):
    for mode in modes:
      cpu, wall = _run(args.workers, mode)
      samples[mode]['cpu'].append(cpu)
      samples[mode]['wall'].append(wall)
  report = {'benchmark': 'worker_start', 'workers': args.workers, 'rounds': args.rounds}
  for mode, values in samples.items():
    report[mode] = {key: round(statistics.median(series), 3) for key, series in values.items()}
  for key in ('cpu', 'wall'):
    ratios = [p / c for p, c in zip(samples['preloaded'][key], samples['cold'][key])]
    report[f'{key}_ratio_preloaded_over_cold'] = round(statistics.median(ratios), 3)
  json.dump(report, sys.stdout, indent=2)
  print()
  return 0


if __name__ == '__main__':
  sys.exit(main())
