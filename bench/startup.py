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
import functools
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


def paired_rounds(rounds, runs):
  """Runs each of `runs` (name -> a function returning (CPU seconds, wall seconds)) once
  per round, in turn; returns {name: {'cpu': [...], 'wall': [...]}}."""
  samples = {name: {'cpu': [], 'wall': []} for name in runs}
  for _ in range(rounds):
    for name, run in runs.items():
      cpu, wall = run()
      samples[name]['cpu'].append(cpu)
      samples[name]['wall'].append(wall)
  return samples


def print_report(samples, numerator, denominator, **header):
  """Prints one JSON object: `header`, each run's median CPU and wall seconds, and the
  medians of the paired ratios numerator / denominator."""
  report = dict(header)
  for name, values in samples.items():
    report[name] = {key: round(statistics.median(series), 3) for key, series in values.items()}
  for key in ('cpu', 'wall'):
    ratios = [a / b for a, b in zip(samples[numerator][key], samples[denominator][key])]
    report[f'{key}_ratio_{numerator}_over_{denominator}'] = round(statistics.median(ratios), 3)
  json.dump(report, sys.stdout, indent=2)
  print()


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--rounds', type=int, default=10)
  args = parser.parse_args(argv)
  if args.rounds < 1:
    parser.error(f'--rounds must be >= 1, got {args.rounds}.')
  samples = paired_rounds(args.rounds, {name: functools.partial(_run, code)
                                        for name, code in COMMANDS.items()})
  print_report(samples, 'deferred', 'plain', benchmark='startup', rounds=args.rounds)
  return 0


if __name__ == '__main__':
  sys.exit(main())
