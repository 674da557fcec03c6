"""Compiles the balloon's Numba kernels into their cache, once, before many processes start.

    python -m agents.env.balloon.precompile

The wind GP's, the forecast's and the station seeker's inner loops are Numba kernels,
compiled on first use and cached beside their modules (`cache=True`). A process that
starts before the cache exists compiles them itself, about 5 s of CPU; so on a fresh
install the first run of a batch in worker processes, an evaluation fleet or a cluster's
Ray actors compiles them once per process, all at the same time. Running this once after
installing (`make test` runs it before the suite) leaves every later process a cache to
load in well under a second. It flies two balloons for two steps with the station seeker,
asks the GP for its posterior means in both precisions, and slides a tiny GP window past
full and through a refresh in both of predict's precisions; running it again only loads
the cache.
"""

import sys
import time

import numpy as np


def precompile():
  """Runs every kernel once on small inputs (compiling and caching what is not cached yet)."""
  from agents.env.balloon.controllers import baselines
  from agents.env.balloon.env import BalloonVectorEnv
  # The procedural wind needs no weights; BLE's generative wind's own kernels (the simplex
  # noise and its permutation tables) are compiled below.
  env = BalloonVectorEnv(2, max_episode_steps=4, wind='procedural')
  try:
    observations, _ = env.reset(seed=[0, 1])
    for _ in range(2):
      observations = env.step(baselines.station_seeker(observations))[0]
    points = np.zeros((2, 3))
    pressure = np.full((2, 3), 6000.0)
    for float32 in (True, False):  # observation features, the planner
      env.simulator.estimated_wind(points, points, pressure, points, float32=float32)
    baselines.station_seeker_scores(observations)
  finally:
    env.close()
  from agents.env.balloon.wind import simplex_noise, wind_gp
  noise = simplex_noise.SimplexNoise(2)
  noise.sample(np.arange(2), [np.random.default_rng(seed) for seed in range(2)])
  points = np.zeros(2)
  noise.query(None, points, points, np.full(2, 6000.0), points)
  noise.query(None, points, points, np.full((2, 3), 6000.0), points)
  for dtype in (np.float32, np.float64):
    # A window of two points, refreshed every step: the third measurement drops the first.
    gp = wind_gp.WindGP(2, max_points=2, refresh_interval=1, predict_dtype=dtype)
    levels = np.full((2, 3), 6000.0) + np.arange(3) * 1000.0
    for step in range(3):
      position, time_s, error = np.full(2, 1000.0 * step), np.full(2, 180.0 * step), np.ones(2)
      gp.observe_and_predict(position, position, np.full(2, 6000.0), time_s, error, error,
                             levels)


def main():
  start = time.perf_counter()
  precompile()
  print(f"The balloon's Numba kernels are compiled and cached "
        f'({time.perf_counter() - start:.1f} s).')
  return 0


if __name__ == '__main__':
  sys.exit(main())
