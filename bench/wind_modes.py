"""The balloon's steps per second in each wind, side by side in one run; prints JSON.

    python -m bench.wind_modes [--winds generative,procedural,static] [--slab 256]
        [--warmup 60] [--steps 20] [--rounds 3]

One `BalloonVectorEnv` slab per wind, reset from the same seeds and flown by the station
seeker. After `--warmup` steps (the GP's window filling), `--rounds` rounds each time
`--steps` slab steps of every wind in turn, so the winds share the machine's moments;
each wind's figure is its median round. Reported per wind: balloon steps per second by
this process's CPU time and by wall clock, the reset's CPU seconds per balloon (the
generative wind decodes its fields there) and that reset spread over a 960-step episode,
with each figure's ratio to the procedural wind's. The 1-minute load average is printed:
the machine may be shared, and CPU time is less sensitive to other processes.
"""

import argparse
import json
import os
import time

# One BLAS thread: the slab's small matmuls are slower with spinning OpenBLAS threads.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')

import numpy as np  # noqa: E402

from agents.env.balloon import constants  # noqa: E402
from agents.env.balloon.controllers import baselines  # noqa: E402
from agents.env.balloon.env import BalloonVectorEnv  # noqa: E402


def _timed(function):
  wall, cpu = time.perf_counter(), time.process_time()
  result = function()
  return result, time.perf_counter() - wall, time.process_time() - cpu


def bench(winds, slab, warmup, steps, rounds):
  """{wind: figures} (see the module docstring)."""
  envs, observations, reset_cpu = {}, {}, {}
  seeds = list(range(slab))
  for wind in winds:
    envs[wind] = BalloonVectorEnv(slab, max_episode_steps=None, wind=wind)
    envs[wind].reset(seed=seeds)  # first reset: loads weights, compiles kernels
    (observations[wind], _), _, reset_cpu[wind] = _timed(
        lambda env=envs[wind]: env.reset(seed=[seed + slab for seed in seeds]))
    for _ in range(warmup):
      observations[wind] = envs[wind].step(baselines.station_seeker(observations[wind]))[0]
  cpu_rates, wall_rates = {wind: [] for wind in winds}, {wind: [] for wind in winds}
  for _ in range(rounds):
    for wind in winds:
      def run(wind=wind):
        for _ in range(steps):
          observations[wind] = envs[wind].step(baselines.station_seeker(observations[wind]))[0]
      _, wall, cpu = _timed(run)
      cpu_rates[wind].append(slab * steps / cpu)
      wall_rates[wind].append(slab * steps / wall)
  for env in envs.values():
    env.close()
  figures = {}
  for wind in winds:
    per_balloon = reset_cpu[wind] / slab
    step_cpu = 1.0 / float(np.median(cpu_rates[wind]))
    figures[wind] = {
        'steps_per_s_cpu': round(float(np.median(cpu_rates[wind])), 1),
        'steps_per_s_wall': round(float(np.median(wall_rates[wind])), 1),
        'reset_cpu_ms_per_balloon': round(1e3 * per_balloon, 3),
        # Steps per CPU second over a whole episode: its steps and its reset.
        'episode_steps_per_s_cpu': round(
            constants.EPISODE_STEPS / (constants.EPISODE_STEPS * step_cpu + per_balloon), 1),
    }
  if 'procedural' in figures:
    base = figures['procedural']
    for wind in winds:
      for key in ('steps_per_s_cpu', 'steps_per_s_wall', 'episode_steps_per_s_cpu'):
        figures[wind][f'{key}_vs_procedural'] = round(figures[wind][key] / base[key], 3)
  return figures


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--winds', default=','.join(constants.WINDS))
  parser.add_argument('--slab', type=int, default=256)
  parser.add_argument('--warmup', type=int, default=60)
  parser.add_argument('--steps', type=int, default=20)
  parser.add_argument('--rounds', type=int, default=3)
  args = parser.parse_args()
  winds = [wind for wind in args.winds.split(',') if wind]
  figures = bench(winds, args.slab, args.warmup, args.steps, args.rounds)
  print(json.dumps({'bench': 'wind_modes', 'slab': args.slab, 'warmup': args.warmup,
                    'steps': args.steps, 'rounds': args.rounds, 'winds': figures,
                    'load_1min': round(os.getloadavg()[0], 2)}))


if __name__ == '__main__':
  main()
