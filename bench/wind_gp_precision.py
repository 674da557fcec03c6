"""How far the float32 GP prediction is from a float64 GP in the observation; prints JSON.

    python -m bench.wind_gp_precision [--balloons 8] [--steps 960] [--action stay]

Two slabs of the same seeds step in lockstep with the same actions: one with the
environment's GP (float32 prediction), one with a float64 GP. Their physics is identical
(the GP only feeds the observation), so the observations differ only by the GP's
rounding. Reports, over every step and level, the largest difference of the wind
column's uncertainty feature (variance / 3.6²), of the variance itself ((m/s)²), of the
speed and bearing features, and the seconds per slab step of each (CPU time; a rough cost
of float64, the throughput benchmark is the real measure). `--action stay` holds
altitude (the GP's window then crowds one pressure, the worst case for cancellation).
"""

import argparse
import json
import os
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import numpy as np  # noqa: E402

from agents.env.balloon import constants  # noqa: E402
from agents.env.balloon.env import BalloonVectorEnv  # noqa: E402
from agents.env.balloon.wind import wind_gp

_ACTIONS = {'stay': constants.STAY, 'down': constants.DOWN, 'up': constants.UP}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--balloons', type=int, default=8)
  parser.add_argument('--steps', type=int, default=960)
  parser.add_argument('--action', default='stay', choices=sorted(_ACTIONS) + ['random'])
  args = parser.parse_args(argv)
  envs = {}
  for dtype in (np.float32, np.float64):
    env = BalloonVectorEnv(args.balloons, wind='procedural')
    env.simulator._wind.gp = wind_gp.WindGP(args.balloons, predict_dtype=dtype)  # noqa: SLF001
    env.reset(seed=0)
    envs[dtype] = env
  rng = np.random.default_rng(0)
  worst = dict.fromkeys(('uncertainty', 'variance', 'speed', 'bearing'), 0.0)
  seconds = {np.float32: 0.0, np.float64: 0.0}
  for _ in range(args.steps):
    if args.action == 'random':
      actions = rng.integers(0, 3, args.balloons)
    else:
      actions = np.full(args.balloons, _ACTIONS[args.action])
    observations = {}
    for dtype, env in envs.items():
      start = time.process_time()
      observations[dtype] = env.step(actions)[0].astype(np.float64)
      seconds[dtype] += time.process_time() - start
    difference = np.abs(observations[np.float32] - observations[np.float64])
    column = difference[:, constants.NUM_AMBIENT_FEATURES:].reshape(args.balloons, -1, 3)
    worst['uncertainty'] = max(worst['uncertainty'], float(column[..., 0].max()))
    worst['bearing'] = max(worst['bearing'], float(column[..., 1].max()))
    worst['speed'] = max(worst['speed'], float(column[..., 2].max()))
    worst['variance'] = worst['uncertainty'] * constants.GP_PRIOR_VARIANCE
    if not np.array_equal(observations[np.float32][:, :16], observations[np.float64][:, :16]):
      raise AssertionError('the two slabs diverged: the GP changed the physics')
  for env in envs.values():
    env.close()
  print(json.dumps({
      'balloons': args.balloons, 'steps': args.steps, 'action': args.action,
      'max_abs_difference_float32_vs_float64': worst,
      'cpu_ms_per_slab_step': {'float32': round(seconds[np.float32] / args.steps * 1e3, 3),
                               'float64': round(seconds[np.float64] / args.steps * 1e3, 3)},
      'load_avg_1min': round(os.getloadavg()[0], 2)}))


if __name__ == '__main__':
  main()
