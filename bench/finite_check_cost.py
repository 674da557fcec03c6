"""What BatchEnv's NaN/inf check (`check_finite=True`, the default) costs per batch step.

Two measurements, both in this process:

1. The check alone (`agents.tools.batch_checks.check_finite`) on batches of the
   shapes that matter: CartPole (8 x 4 float32), an 84x84x4 float32 image batch,
   and balloon slabs (16 and 256 x 1099 float32), in microseconds per batch.
2. A BatchEnv of 8 CartPole environments in worker processes stepped with the
   check on and off, in interleaved rounds: steps per second of each and the
   relative cost, for the median and for the best (least disturbed) rounds.
   On a shared machine, many short rounds make the best ones meaningful.

    python bench/finite_check_cost.py [--rounds 30] [--steps 200]

Prints one JSON object.
"""

import argparse
import functools
import json
import os
import statistics
import sys
import time
import timeit

os.environ.setdefault('OMP_NUM_THREADS', '1')
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from agents.tools import batch_checks  # noqa: E402
from agents.tools.batch_env import BatchEnv  # noqa: E402

SHAPES = {'cartpole_8x4': (8, 4), 'image_8x84x84x4': (8, 84, 84, 4),
          'balloon_16x1099': (16, 1099), 'balloon_256x1099': (256, 1099)}


def check_alone(number=2000):
  """Microseconds per call of the check on finite float32 observations and rewards."""
  rows = {}
  for name, shape in SHAPES.items():
    observ = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    reward = np.ones(shape[0], np.float32)
    check = functools.partial(batch_checks.check_finite, observ, reward)
    seconds = min(timeit.repeat(check, number=number, repeat=5)) / number
    rows[name] = {'us_per_batch': round(seconds * 1e6, 2),
                  'ns_per_value': round(seconds * 1e9 / (observ.size + reward.size), 3)}
  return rows


def make_cartpole():
  return gymnasium.make('CartPole-v1')


def in_batch(rounds, steps, num_envs=8):
  """Steps per second of a process BatchEnv with the check on and off, interleaved."""
  batches = {flag: BatchEnv.from_constructors(make_cartpole, num_envs, check_finite=flag)
             for flag in (True, False)}
  rng = np.random.default_rng(0)
  actions = rng.integers(0, 2, (steps, num_envs))
  timings = {flag: [] for flag in batches}
  try:
    for batch in batches.values():
      batch.reset(seeds=list(range(num_envs)))
    for round_number in range(rounds):
      order = (True, False) if round_number % 2 == 0 else (False, True)  # No order bias.
      for flag in order:
        batch = batches[flag]
        start = time.perf_counter()
        for action in actions:
          _, _, terminated, truncated, _ = batch.step(action)
          done = terminated | truncated
          if done.any():
            batch.reset(np.flatnonzero(done))
        timings[flag].append(time.perf_counter() - start)
  finally:
    for batch in batches.values():
      batch.close()
  row = {'num_envs': num_envs, 'batch_steps_per_round': steps, 'rounds': rounds}
  for name, pick in (('median', statistics.median), ('best', min)):
    on, off = pick(timings[True]), pick(timings[False])
    row[name] = {'steps_per_second_checked': round(steps * num_envs / on),
                 'steps_per_second_unchecked': round(steps * num_envs / off),
                 'relative_cost': round(on / off - 1, 4)}
  return row


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--rounds', type=int, default=30)
  parser.add_argument('--steps', type=int, default=200)
  args = parser.parse_args(argv)
  report = {'benchmark': 'finite_check_cost', 'check_alone': check_alone(),
            'cartpole_batch_env': in_batch(args.rounds, args.steps),
            'cpu_count': os.cpu_count(), 'load_average_1min': round(os.getloadavg()[0], 2)}
  print(json.dumps(report, indent=1))


if __name__ == '__main__':
  main()
