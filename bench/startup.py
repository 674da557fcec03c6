"""What a process pays to start TensorFlow, with the package's Keras deferral and without.

Each round starts two fresh interpreters, in turn: one imports TensorFlow through the
package (`import agents, tensorflow`: agents/tensorflow_start.py keeps TensorFlow from
importing Keras eagerly), one imports TensorFlow alone (what every command, fit and
worker process paid before). Both then trace and run one `tf.function`. Reported: the
CPU seconds (user + system) and wall seconds of each, medians over the rounds, and their
ratios (deferred / plain); on a shared machine the paired rounds make the ratio the
number to read.

    python -m bench.startup [--rounds 10]

Prints one JSON object.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_WORK = ("import tensorflow as tf\n"
         "tf.function(lambda x: x + 1)(tf.constant(1))\n")
COMMANDS = {'deferred': 'import agents\n' + _WORK, 'plain': _WORK}


def _run(code):
  """(CPU seconds, wall seconds) of a fresh interpreter running `code`."""
  before = resource.getrusage(resource.RUSAGE_CHILDREN)
  start = time.perf_counter()
  environ = dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL='3')
  subprocess.run([sys.executable, '-c', code], cwd=_ROOT, env=environ, check=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  wall = time.perf_counter() - start
  after = resource.getrusage(resource.RUSAGE_CHILDREN)
  cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
  return cpu, wall


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--rounds', type=int, default=10)
  args = parser.parse_args(argv)
  if args.rounds < 1:
    parser.error(f'--rounds must be >= 1, got {args.rounds}.')
  samples = {name: {'cpu': [], 'wall': []} for name in COMMANDS}
  for _ in range(args.rounds):
    for name, code in COMMANDS.items():
      cpu, wall = _run(code)
      samples[name]['cpu'].append(cpu)
      samples[name]['wall'].append(wall)
  report = {'benchmark': 'startup', 'rounds': args.rounds}
  for name, values in samples.items():
    report[name] = {key: round(statistics.median(series), 3) for key, series in values.items()}
  for key in ('cpu', 'wall'):
    ratios = [d / p for d, p in zip(samples['deferred'][key], samples['plain'][key])]
    report[f'{key}_ratio_deferred_over_plain'] = round(statistics.median(ratios), 3)
  json.dump(report, sys.stdout, indent=2)
  print()
  return 0


if __name__ == '__main__':
  sys.exit(main())
