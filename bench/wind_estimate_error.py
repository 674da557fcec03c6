"""How well the balloon's wind estimate predicts the true wind around and ahead of it; prints JSON.

    OPENBLAS_NUM_THREADS=1 python -m bench.wind_estimate_error [--balloons=32] [--first=200]

The planner `mpc` and the `lookahead` features drift in `BalloonSimulator.estimated_wind`:
the forecast plus the posterior mean of BLE's GP (spec §11: Matern-1/2, 6 hours of the
balloon's own measurements). This flies the station seeker on suite seeds [first, first +
balloons) (outside `small_eval` by default) and, every 6 hours, compares the true wind
with three estimates at points around each balloon: at pressure offsets of -1500 to
+1500 Pa, 0 and 150 km away, now and 3, 6 and 12 hours ahead:

- `forecast`: the forecast alone (no measurement);
- `ble_gp`: `estimated_wind`, what agents here know;
- `matched_gp`: a GP whose kernel is the forecast error's own covariance (the sum of the
  five squared-exponential terms per component that forecast_error.py draws from, with
  their weights and correlation lengths), fit to every `--every`-th measurement of the
  last `--window_h` hours: the best linear estimate from the same measurements, a bound
  on what a better estimator could add.

Reports the root-mean-square vector error (m/s) per horizon over all points, and at the
balloon's own position per pressure offset.
"""

import argparse
import json
import os
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import numpy as np  # noqa: E402

from agents.env.balloon import constants
from agents.env.balloon.controllers import baselines  # noqa: E402
from agents.env.balloon.env import BalloonVectorEnv  # noqa: E402
from agents.env.balloon.simulator import EVALUATION_SEED_BASE  # noqa: E402
from agents.env.balloon.wind import forecast_error as forecast_error_lib  # noqa: E402

HOURS = (0.0, 3.0, 6.0, 12.0)
PRESSURE_OFFSETS = (-1500.0, -500.0, 0.0, 500.0, 1500.0)
HORIZONTAL_OFFSETS = ((0.0, 0.0), (150e3, 0.0), (0.0, -150e3))
ESTIMATES = ('forecast', 'ble_gp', 'matched_gp')
# Jitter on the matched kernel's diagonal ((m/s)^2): measurements are exact, and
# consecutive ones are nearly collinear under a smooth kernel.
_JITTER = 1e-3


class MatchedKernel:
  """The forecast error's covariance per component: sum_i a_i exp(-|d / l_i|^2 / 2)."""

  def __init__(self):
    scales = np.stack([forecast_error_lib.U_SCALES, forecast_error_lib.V_SCALES])
    weights = scales[..., 0]
    self.amplitude = (forecast_error_lib.ERROR_STD_MPS ** 2 * weights ** 2
                      / (weights ** 2).sum(-1, keepdims=True))              # [2, 5]
    self.length = (forecast_error_lib.CORRELATION_PER_SCALE * scales[..., 1:]
                   * np.array([1e3, 1e3, 1.0, 3600.0]))                        # [2, 5, 4]

  def __call__(self, component, a, b):
    """Covariance [Na, Nb] of `component` (0: u, 1: v) between points (x, y, p, t)."""
    total = np.zeros((len(a), len(b)))
    for amplitude, length in zip(self.amplitude[component], self.length[component]):
      scaled = (a[:, None, :] - b[None, :, :]) / length
      total += amplitude * np.exp(-0.5 * np.square(scaled).sum(-1))
    return total

  def posterior_mean(self, points, errors, queries):
    """The GP posterior mean [Nq, 2] at `queries` given errors [N, 2] at `points`."""
    means = []
    for component in range(2):
      gram = self(component, points, points) + _JITTER * np.eye(len(points))
      means.append(self(component, queries, points) @ np.linalg.solve(gram,
                                                                        errors[:, component]))
    return np.stack(means, -1)


def _query_points(x, y, pressure, t):
  """The (x, y, p, t) points [B, Q, 4] around each balloon (x, y, pressure, t: [B]),
  ordered by hour, pressure offset and horizontal offset."""
  offsets = np.array([(dx, dy, dp, hour * 3600.0) for hour in HOURS
                      for dp in PRESSURE_OFFSETS for dx, dy in HORIZONTAL_OFFSETS])
  return np.stack([x, y, pressure, t], -1)[:, None, :] + offsets


def _winds_at(simulator, points):
  """The true wind, the forecast and `estimated_wind` at points [B, Q, 4]: each [B, Q, 2]."""
  rows = np.repeat(np.arange(points.shape[0]), points.shape[1])
  flat = points.reshape(-1, 4).T
  truth = np.stack(simulator.true_wind(rows, *flat), -1).reshape(*points.shape[:2], 2)
  grid = [points[..., k] for k in range(4)]
  forecast = np.stack(simulator.forecast_wind(*grid), -1)
  estimate = np.stack(simulator.estimated_wind(*grid), -1)
  return truth, forecast, estimate


def measure(balloons, first, window_h, every, interval_steps=120):
  """Squared vector errors per estimate, hour and pressure offset (lists of floats)."""
  kernel = MatchedKernel()
  slab = BalloonVectorEnv(balloons)
  observations, _ = slab.reset(seed=[EVALUATION_SEED_BASE + first + i for i in range(balloons)])
  simulator = slab.simulator
  flying = np.ones(balloons, bool)
  history = []  # per step [B, 6]: x, y, pressure, t and the measured error (u, v)
  squared = {name: {} for name in ESTIMATES}
  for step in range(1, constants.EPISODE_STEPS + 1):
    observations, _, terminated, truncated, _ = slab.step(
        baselines.station_seeker(observations))
    flying &= ~(terminated | truncated)
    here = [simulator.x.copy(), simulator.y.copy(), simulator.pressure.copy(),
            simulator.time_elapsed_s.copy()]
    # What each balloon measures where it is: the true wind minus the forecast.
    measured = (np.stack(simulator.true_wind(np.arange(balloons), *here), -1)
                - np.stack(simulator.forecast_wind(*(part[:, None] for part in here)), -1)[:, 0])
    history.append(np.concatenate([np.stack(here, -1), measured], -1))
    if step % interval_steps:
      continue
    flown = np.stack(history, 1)
    points = _query_points(*here)
    truth, forecast, estimate = _winds_at(simulator, points)
    for balloon in np.flatnonzero(flying):
      rows = flown[balloon]
      recent = rows[rows[:, 3] >= here[3][balloon] - window_h * 3600.0][::-1][::every]
      matched = forecast[balloon] + kernel.posterior_mean(recent[:, :4], recent[:, 4:],
                                                          points[balloon])
      for name, guess in zip(ESTIMATES, (forecast[balloon], estimate[balloon], matched)):
        error = np.square(truth[balloon] - guess).sum(-1).reshape(len(HOURS), -1)
        for h, hour in enumerate(HOURS):
          squared[name].setdefault((hour, None), []).extend(error[h])
          for j, offset in enumerate(PRESSURE_OFFSETS):
            squared[name].setdefault((hour, offset), []).append(
                error[h, j * len(HORIZONTAL_OFFSETS)])
  return squared


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--balloons', type=int, default=32)
  parser.add_argument('--first', type=int, default=200, help='first suite seed')
  parser.add_argument('--window_h', type=float, default=24.0,
                      help="hours of measurements the matched GP reads")
  parser.add_argument('--every', type=int, default=3,
                      help='the matched GP reads every k-th measurement')
  args = parser.parse_args(argv)
  start = time.perf_counter()
  squared = measure(args.balloons, args.first, args.window_h, args.every)

  def rms(values):
    return round(float(np.sqrt(np.mean(values))), 3)

  print(json.dumps({
      'seeds': [args.first, args.first + args.balloons - 1], 'window_h': args.window_h,
      'every': args.every, 'seconds': round(time.perf_counter() - start, 1),
      'rmse_mps_all_points': {name: {f'{hour:g}h': rms(table[(hour, None)])
                                     for hour in HOURS} for name, table in squared.items()},
      'rmse_mps_at_the_balloon': {name: {f'{hour:g}h {offset:+.0f} Pa': rms(table[(hour, offset)])
                                         for hour in HOURS for offset in PRESSURE_OFFSETS}
                                  for name, table in squared.items()},
  }))


if __name__ == '__main__':
  main()
