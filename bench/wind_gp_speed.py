"""Times the per-step wind work of a slab: GP observe and predict, forecast and error queries.

Balloons random-walk (2 km, 150 Pa per 180 s step); the GP window is filled
first (120 steps), then `--steps` steps are timed, as separate observe and
predict calls and as one fused observe_and_predict call; `121_levels` asks
predict for only the first 121 of the 181 levels (`needed`). Prints one JSON object with
microseconds per balloon-step: CPU time of this process (time.process_time,
robust on a shared machine; equal to wall time on an idle core with
OPENBLAS_NUM_THREADS=1) / steps / balloons.

    .venv/bin/python -m bench.wind_gp_speed [--balloons 256] [--steps 30]

Set OPENBLAS_NUM_THREADS=1 to time one core.
"""

import argparse
import json
import time

import numpy as np

from agents.env.balloon.wind import forecast_error, wind_forecast, wind_gp

LEVELS = np.linspace(5000.0, 14000.0, 181)


def _time_steps(num_balloons, steps, predict_dtype, chunk_size, needed_levels, fused):
  rng = np.random.default_rng(0)
  gp = wind_gp.WindGP(num_balloons, chunk_size=chunk_size, predict_dtype=predict_dtype)
  x, y = rng.uniform(-200e3, 200e3, (2, num_balloons))
  pressure = rng.uniform(6000, 12000, num_balloons)
  pressures = np.tile(LEVELS, (num_balloons, 1))
  needed = None
  if needed_levels < len(LEVELS):
    needed = np.zeros(pressures.shape, bool)
    needed[:, :needed_levels] = True
  observe_s = predict_s = 0.0
  for step in range(wind_gp.MAX_POINTS + steps):
    x += rng.normal(0, 2000, num_balloons)
    y += rng.normal(0, 2000, num_balloons)
    pressure = np.clip(pressure + rng.normal(0, 150, num_balloons), 5000, 14000)
    t = np.full(num_balloons, step * 180.0)
    errors = rng.normal(0, 1, (2, num_balloons))
    start = time.process_time()
    if fused:
      gp.observe_and_predict(x, y, pressure, t, *errors, pressures, needed=needed)
      middle = start
    else:
      gp.observe(x, y, pressure, t, *errors)
      middle = time.process_time()
      gp.predict(x, y, pressures, t, needed=needed)
    end = time.process_time()
    if step >= wind_gp.MAX_POINTS:
      observe_s += middle - start
      predict_s += end - middle
  scale = 1e6 / steps / num_balloons
  return round(observe_s * scale, 2), round(predict_s * scale, 2)


def _time_queries(num_balloons, steps):
  rng = np.random.default_rng(1)
  forecast = wind_forecast.WindForecast(num_balloons)
  error = forecast_error.ForecastError(num_balloons)
  rngs = [np.random.default_rng(i) for i in range(num_balloons)]
  start = time.process_time()
  forecast.sample(np.arange(num_balloons), rngs)
  sample_ms = (time.process_time() - start) * 1e3 / num_balloons
  error.sample(np.arange(num_balloons), rngs)
  x, y = rng.uniform(-200e3, 200e3, (2, num_balloons))
  pressure = rng.uniform(6000, 12000, num_balloons)
  t = rng.uniform(0, 48 * 3600, num_balloons)
  column = np.tile(LEVELS, (num_balloons, 1))
  timings = {}
  for name, call in (
      ('forecast_query_column_181_us', lambda: forecast.query(None, x, y, column, t)),
      ('forecast_query_point_us', lambda: forecast.query(None, x, y, pressure, t)),
      ('error_query_point_us', lambda: error.query(None, x, y, pressure, t))):
    call()
    start = time.process_time()
    for _ in range(steps):
      call()
    timings[name] = round((time.process_time() - start) * 1e6 / steps / num_balloons, 2)
  timings['forecast_sample_ms_per_field'] = round(sample_ms, 2)
  return timings


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--balloons', type=int, default=256)
  parser.add_argument('--steps', type=int, default=30)
  parser.add_argument('--chunk-size', type=int, default=16)
  args = parser.parse_args(argv)
  report = {'balloons': args.balloons, 'steps': args.steps, 'chunk_size': args.chunk_size,
            'unit': 'CPU microseconds per balloon-step'}
  for label, dtype, levels in (('float32_181_levels', np.float32, 181),
                               ('float32_121_levels', np.float32, 121),
                               ('float64_181_levels', np.float64, 181)):
    observe_us, predict_us = _time_steps(args.balloons, args.steps, dtype, args.chunk_size,
                                         levels, fused=False)
    _, fused_us = _time_steps(args.balloons, args.steps, dtype, args.chunk_size, levels,
                              fused=True)
    report[label] = {'observe': observe_us, 'predict': predict_us,
                     'observe_plus_predict': round(observe_us + predict_us, 2),
                     'observe_and_predict_fused': fused_us}
  report.update(_time_queries(args.balloons, args.steps))
  print(json.dumps(report, indent=1))


if __name__ == '__main__':
  main()
