"""Tests for agents/env/balloon/wind/kernels.py (the GP's window update is tested through
wind_gp_test.py against dense solves)."""

import unittest

import numpy as np
from scipy import interpolate

from agents.env.balloon.wind import kernels, wind_forecast


class ExpNegativeTest(unittest.TestCase):

  def test_matches_float64_exp_over_the_float32_range(self):
    values = -np.linspace(0.0, 87.0, 200_001).astype(np.float32)
    expected = np.exp(values.astype(np.float64))
    got = kernels.exp_negative(values)
    self.assertEqual(got.dtype, np.float32)
    np.testing.assert_allclose(got, expected, rtol=3e-7, atol=0)
    self.assertEqual(kernels.exp_negative(np.zeros(1, np.float32))[0], 1.0)

  def test_clamps_below_the_normal_range(self):
    got = kernels.exp_negative(np.array([-100.0, -1e30], np.float32))
    np.testing.assert_allclose(got, np.exp(-87.0), rtol=3e-7)


class CorrelationsTest(unittest.TestCase):

  def _case(self, dtype):
    rng = np.random.default_rng(0)
    levels = rng.uniform(15.0, 43.0, (3, 7))
    query = rng.uniform(-1.0, 1.0, (3, 3))
    points = rng.uniform(-1.0, 1.0, (3, 11, 4))
    points[..., 2] = rng.uniform(15.0, 43.0, (3, 11))
    shared = ((query[:, None, :] - points[..., [0, 1, 3]]) ** 2).sum(-1)
    distance = np.sqrt((levels[:, :, None] - points[:, None, :, 2]) ** 2 + shared[:, None, :])
    out = np.empty((3, 7, 11), dtype)
    return levels.astype(dtype), query, points, out, np.exp(-distance)

  def test_float64_kernel_is_the_formula(self):
    levels, query, points, out, expected = self._case(np.float64)
    kernels.correlations_float64(levels, query, points, out)
    np.testing.assert_allclose(out, expected, rtol=1e-12)

  def test_float32_kernel_is_close(self):
    levels, query, points, out, expected = self._case(np.float32)
    kernels.correlations(levels, query, points, out)
    # float32 levels: the pressure difference loses a few digits.
    np.testing.assert_allclose(out, expected, rtol=1e-5)


class ForecastColumnsTest(unittest.TestCase):

  def test_matches_scipy_linear_interpolation_on_the_grid(self):
    rng = np.random.default_rng(1)
    grid = rng.normal(size=(2, *wind_forecast.GRID_SHAPE, 2)).astype(np.float32)
    axes = (wind_forecast.GRID_TIME_S, wind_forecast.GRID_X_M, wind_forecast.GRID_Y_M,
            wind_forecast.GRID_PRESSURE_PA)
    count, num_levels = 5, 4
    rows = np.array([0, 1, 1, 0, 1])
    t = rng.uniform(0, axes[0][-1], count)
    x, y = rng.uniform(-500e3, 500e3, (2, count))
    pressure = rng.uniform(5000.0, 14000.0, (count, num_levels))
    positions = [(t - axes[0][0]) / 6 / 3600, (x - axes[1][0]) / 50e3, (y - axes[2][0]) / 50e3]
    corner = np.stack([np.floor(p) for p in positions], axis=1).astype(np.int64)
    weight = np.stack(positions, axis=1) - corner
    u, v = np.empty((count, num_levels)), np.empty((count, num_levels))
    kernels.forecast_columns(grid, rows, corner, weight, pressure, 5000.0, 1000.0, u, v)
    for row in range(count):
      for component, got in ((0, u), (1, v)):
        reference = interpolate.RegularGridInterpolator(axes, grid[rows[row], ..., component])
        queries = np.stack([np.full(num_levels, t[row]), np.full(num_levels, x[row]),
                            np.full(num_levels, y[row]), pressure[row]], axis=1)
        np.testing.assert_allclose(got[row], reference(queries), rtol=1e-5, atol=1e-6)


if __name__ == '__main__':
  unittest.main()
