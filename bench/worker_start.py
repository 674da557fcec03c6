"""What starting the balloon's worker processes costs, with its worker preload and without.

Each round starts two fresh interpreters, in turn: each builds a batch of 8 balloons in
8 worker processes (`make_batch_env`), resets it and steps it 3 times, then closes it.
One runs as the package does (the forkserver imports `agents.env.balloon.worker_preload`,
which loads the Numba kernels once, before it forks the workers); the other with the
balloon's plug-in's `worker_preloads` emptied, so that each worker loads the kernels at its
first reset. Reported: the machine's busy CPU seconds (from /proc/stat: the workers and
the forkserver are not the interpreter's waited children) and the wall seconds of each,
medians over the rounds, and their ratios (preloaded / cold); on a shared machine the
paired rounds make the ratio the number to read. Linux only.

    python -m bench.worker_start [--rounds 5] [--workers 8]

Prints one JSON object.
"""

import argparse
import functools
import os
import subprocess
import sys
import time

from bench import startup

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_START = """
import sys
import numpy as np
from agents import plugins
from agents.python_agents import train_lib
if __name__ == '__main__':
  workers = int(sys.argv[1])
  if sys.argv[2] == 'cold':
    # The balloon's plug-in replaced by one that preloads nothing.
    from agents.env.balloon import plugin
    plugins.load_plugins()
    plugins.ENVIRONMENTS.register('BalloonLearningEnvironment-v0',
                                  type('Cold', (plugin.BalloonPlugin,), {'worker_preloads': ()})(),
                                  replace=True)
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
  samples = startup.paired_rounds(args.rounds, {
      mode: functools.partial(_run, args.workers, mode) for mode in ('preloaded', 'cold')})
  startup.print_report(samples, 'preloaded', 'cold', benchmark='worker_start',
                       workers=args.workers, rounds=args.rounds)
  return 0


if __name__ == '__main__':
  sys.exit(main())
