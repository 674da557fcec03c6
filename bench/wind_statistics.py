"""Measures the statistics of the procedural wind forecast against the targets of spec §10.

Draws `--fields` forecast fields (seeds 0 ... N-1) and prints one JSON object:
for every statistic of the §10 table, ours beside the target, plus the
relative error of the per-level stds and speeds, and the generation time.

    .venv/bin/python -m bench.wind_statistics [--fields 300]

Definitions (all pooled over fields and grid points unless said otherwise):
- per level: std and mean of u and v, mean and 90th percentile of the speed;
- correlation of u between grid points 50 / 250 / 500 km apart (along x and
  along y, pooled), 1 / 3 kPa apart and 6 / 24 h apart (Pearson);
- per-field mean speed: the mean over all of a field's grid points, then its
  10th / 50th / 90th percentile over fields;
- directional diversity: for every grid column (field, t, x, y), the largest
  gap between the wind directions at the grid levels 6000 ... 12000 Pa; its
  median and the fraction of columns with a gap under 180 degrees. (Levels
  interpolated in between cannot change a gap of 180 degrees or more: the
  interpolated direction turns along the shorter arc, under 180 degrees.)
"""

import argparse
import json
import time

import numpy as np

from agents.env.balloon.wind import wind_forecast

TARGETS = {
    'std_u': [8.7, 6.5, 5.8, 5.8, 6.3, 7.3, 8.6, 9.9, 10.8, 11.2],
    'std_v': [0.9, 1.4, 1.8, 2.1, 2.7, 3.4, 4.1, 4.6, 5.0, 5.2],
    'mean_speed': [6.9, 5.5, 5.1, 5.4, 6.1, 7.0, 8.2, 9.3, 10.2, 10.7],
    'p90_speed': [14.6, 11.1, 9.8, 9.8, 11.4, 12.8, 14.7, 16.8, 18.5, 19.4],
    'max_abs_mean_uv': 2.2,
    'corr_u_distance_50_250_500km': [0.98, 0.96, 0.88],
    'corr_u_pressure_1_3kPa': [0.90, 0.39],
    'corr_u_time_6_24h': [0.996, 0.94],
    'field_mean_speed_p10_p50_p90': [4.8, 7.1, 11.1],
    'largest_direction_gap_median_deg': 185.0,
    'fraction_gap_under_180': 0.45,
}


def generate(num_fields):
  """Returns fields [N, T, X, Y, P, 2] (seeds 0 ... N-1) and the ms per field."""
  start = time.perf_counter()
  fields = np.stack([wind_forecast.generate_field(np.random.default_rng(seed))
                     for seed in range(num_fields)])
  return fields, (time.perf_counter() - start) / num_fields * 1e3


def correlation(a, b):
  """Pearson correlation of two equally shaped arrays, pooled over all entries."""
  a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
  return float(np.corrcoef(a, b)[0, 1])


def largest_direction_gap_deg(u, v):
  """Largest gap (degrees) between the directions of the vectors along the last axis."""
  directions = np.sort(np.degrees(np.arctan2(v, u)), axis=-1)
  gaps = np.diff(directions, axis=-1)
  wrap = 360.0 - (directions[..., -1] - directions[..., 0])
  return np.maximum(gaps.max(axis=-1), wrap)


def measure(fields):
  """All statistics of the module docstring, as a dict of plain floats and lists."""
  u, v = fields[..., 0].astype(np.float64), fields[..., 1].astype(np.float64)
  speed = np.hypot(u, v)
  level_axes = (0, 1, 2, 3)
  distance = {}
  for km in (50, 250, 500):
    k = km // 50
    distance[km] = 0.5 * (correlation(u[:, :, k:], u[:, :, :-k])
                          + correlation(u[:, :, :, k:], u[:, :, :, :-k]))
  band = (wind_forecast.GRID_PRESSURE_PA >= 6000) & (wind_forecast.GRID_PRESSURE_PA <= 12000)
  gap = largest_direction_gap_deg(u[..., band], v[..., band])
  field_mean_speed = speed.mean(axis=(1, 2, 3, 4))
  return {
      'std_u': u.std(axis=level_axes).round(2).tolist(),
      'std_v': v.std(axis=level_axes).round(2).tolist(),
      'mean_speed': speed.mean(axis=level_axes).round(2).tolist(),
      'p90_speed': np.percentile(speed, 90, axis=level_axes).round(2).tolist(),
      'max_abs_mean_uv': round(float(max(np.abs(u.mean(axis=level_axes)).max(),
                                         np.abs(v.mean(axis=level_axes)).max())), 2),
      'corr_u_distance_50_250_500km': [round(distance[km], 3) for km in (50, 250, 500)],
      'corr_u_pressure_1_3kPa': [round(correlation(u[..., k:], u[..., :-k]), 3)
                                 for k in (1, 3)],
      'corr_u_time_6_24h': [round(correlation(u[:, k:], u[:, :-k]), 3) for k in (1, 4)],
      'field_mean_speed_p10_p50_p90': np.percentile(
          field_mean_speed, [10, 50, 90]).round(2).tolist(),
      'largest_direction_gap_median_deg': round(float(np.median(gap)), 1),
      'fraction_gap_under_180': round(float((gap < 180).mean()), 3),
  }


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('--fields', type=int, default=300, help='Number of fields to draw.')
  args = parser.parse_args(argv)
  fields, ms_per_field = generate(args.fields)
  ours = measure(fields)
  relative_error = {
      key: (np.abs(np.array(ours[key]) / np.array(TARGETS[key]) - 1).max().round(3).item())
      for key in ('std_u', 'std_v', 'mean_speed', 'p90_speed')}
  report = {
      'fields': args.fields,
      'generate_ms_per_field': round(ms_per_field, 2),
      'ours': ours,
      'target': TARGETS,
      'max_relative_error_per_level': relative_error,
  }
  print(json.dumps(report, indent=1))


if __name__ == '__main__':
  main()
