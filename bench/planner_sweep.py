"""TWR50 of planner settings (planner.PlannerConfig) on suite seeds outside `small_eval`.

    OPENBLAS_NUM_THREADS=1 python -m bench.planner_sweep --first=200 --count=40 \\
        --configs='{}' '{"horizon_s": 21600, "second_levels": 0}' [--wind=estimate]

How `mpc`'s defaults were chosen (docs/balloon_env.md): suite seeds s in [first, first +
count), flown as episode seeds 2**62 + s like the evaluation suites', one slab in this
process; `small_eval` is seeds 0-99, so first >= 100 keeps it out of the tuning. Prints
one JSON line for the station seeker (unless --no_seeker), then one per config (a JSON
object of `PlannerConfig` fields over the defaults): mean TWR50 (steps within 50 km /
960), the per-seed values and the seconds flown.

`--wind` sets what the planner's rollouts drift in, to measure what knowledge of the wind
is worth: `estimate` (forecast + the GP's posterior mean, what `mpc` flies with),
`forecast` (the forecast alone, as if the balloon measured nothing), `truth` (the
true wind field, which no agent can know: an upper bound for this planner, never a
baseline), or `column_now` (the forecast plus the true forecast error of the balloon's
whole column at its position now, carried unchanged along the rollouts: as if every
level were measured at each step, what measuring levels could at most be worth to this
planner; never a baseline either).
"""

import argparse
import json
import os
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import numpy as np  # noqa: E402

from agents.env.balloon import constants
from agents.env.balloon.controllers import baselines  # noqa: E402
from agents.env.balloon.controllers import planner as planner_lib  # noqa: E402
from agents.env.balloon.env import BalloonVectorEnv  # noqa: E402
from agents.env.balloon.simulator import EVALUATION_SEED_BASE  # noqa: E402

WIND_KNOWLEDGE = ('estimate', 'forecast', 'truth', 'column_now')


def plan_in(simulator, wind):
  """Makes the planner of `simulator` read wind knowledge `wind` (of WIND_KNOWLEDGE).

  The planner reads `simulator.estimated_wind`; for the other kinds this replaces that
  method on this one simulator (the module docstring says with what).
  """
  if wind == 'forecast':
    simulator.estimated_wind = lambda x, y, pressure, t, float32=False: (
        simulator.forecast_wind(x, y, pressure, t))
  elif wind == 'truth':
    simulator.estimated_wind = lambda x, y, pressure, t, float32=False: (
        _true_wind(simulator, x, y, pressure, t))
  elif wind == 'column_now':
    def column_now(x, y, pressure, t, float32=False):
      x, y, pressure, t = np.broadcast_arrays(x, y, pressure, t)
      # Each point's pressure at the balloon's own position and time now.
      now = [np.broadcast_to(value[:, None], x.shape) for value in (
          simulator.x, simulator.y, simulator.time_elapsed_s)]
      now.insert(2, pressure)
      true_now = _true_wind(simulator, *now)
      forecast_now = simulator.forecast_wind(*now)
      forecast = simulator.forecast_wind(x, y, pressure, t)
      return tuple(ahead + true - guess
                   for ahead, true, guess in zip(forecast, true_now, forecast_now))
    simulator.estimated_wind = column_now
  elif wind != 'estimate':
    raise ValueError(f'--wind must be one of {", ".join(WIND_KNOWLEDGE)}, got {wind!r}.')


def _true_wind(simulator, x, y, pressure, t):
  """The true wind (u, v) at M points per balloon, [B, M] arrays as `estimated_wind`'s."""
  x, y, pressure, t = np.broadcast_arrays(x, y, pressure, t)
  indices = np.repeat(np.arange(x.shape[0]), x.shape[1])
  u, v = simulator.true_wind(indices, x.ravel(), y.ravel(), pressure.ravel(), t.ravel())
  return u.reshape(x.shape), v.reshape(x.shape)


def fly(suite_seeds, config=None, wind='estimate'):
  """TWR50 per seed and seconds: the planner with `config` planning in `wind`, or the
  seeker if `config` is None."""
  slab = BalloonVectorEnv(len(suite_seeds))
  if config is not None:
    slab = planner_lib.PlannedSlab(slab, config)
    plan_in(slab.simulator, wind)
  observations, _ = slab.reset(seed=[EVALUATION_SEED_BASE + seed for seed in suite_seeds])
  within = np.zeros(len(suite_seeds))
  done = np.zeros(len(suite_seeds), bool)
  start = time.perf_counter()
  for _ in range(constants.EPISODE_STEPS):
    # A planned slab ignores the seeker's actions.
    observations, _, terminated, truncated, info = slab.step(
        baselines.station_seeker(observations))
    within += ~done & ~terminated & (info['distance_km'] <= constants.STATION_RADIUS_KM)
    done |= terminated | truncated
  return within / constants.EPISODE_STEPS, time.perf_counter() - start


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--first', type=int, default=200)
  parser.add_argument('--count', type=int, default=40)
  parser.add_argument('--configs', nargs='*', default=['{}'])
  parser.add_argument('--wind', choices=WIND_KNOWLEDGE, default='estimate',
                      help="what the planner's rollouts drift in")
  parser.add_argument('--no_seeker', action='store_true', help='skip the seeker row')
  args = parser.parse_args(argv)
  seeds = list(range(args.first, args.first + args.count))
  rows = [] if args.no_seeker else [('station_seeker', None)]
  rows += [
      (text, planner_lib.PlannerConfig(**json.loads(text))) for text in args.configs]
  for name, config in rows:
    twr50, seconds = fly(seeds, config, args.wind)
    print(json.dumps({'agent': 'station_seeker' if config is None else 'mpc',
                      'config': None if config is None else json.loads(name),
                      'wind': None if config is None else args.wind,
                      'seeds': [seeds[0], seeds[-1]], 'twr50_mean': round(twr50.mean(), 4),
                      'twr50': np.round(twr50, 3).tolist(), 'seconds': round(seconds, 1)}),
          flush=True)


if __name__ == '__main__':
  main()
