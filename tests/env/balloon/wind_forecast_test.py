"""Tests for agents/env/balloon/wind/wind_forecast.py: interpolation, clamping, time
reflection, the generator's non-divergence and rough statistics, determinism, and the
static field."""

import unittest

import numpy as np

from agents.env.balloon.wind import wind_forecast

HOUR = 3600.0


def _linear_field(coefficients_u, coefficients_v):
  """A field linear in (t, x, y, p): linear interpolation must reproduce it exactly."""
  t, x, y, p = np.meshgrid(wind_forecast.GRID_TIME_S, wind_forecast.GRID_X_M,
                           wind_forecast.GRID_Y_M, wind_forecast.GRID_PRESSURE_PA,
                           indexing='ij')
  field = np.empty((*t.shape, 2))
  for component, (a, b, c, d) in enumerate((coefficients_u, coefficients_v)):
    field[..., component] = a * t / HOUR + b * x / 1e3 + c * y / 1e3 + d * p / 1e3
  return field


def _linear_value(coefficients, t, x, y, p):
  a, b, c, d = coefficients
  return a * t / HOUR + b * x / 1e3 + c * y / 1e3 + d * p / 1e3


class WindForecastQueryTest(unittest.TestCase):

  def setUp(self):
    self.coeff_u = (0.1, 0.01, -0.02, 0.5)
    self.coeff_v = (-0.05, 0.003, 0.007, -0.25)
    self.forecast = wind_forecast.WindForecast(3)
    self.forecast.set_field(1, _linear_field(self.coeff_u, self.coeff_v))

  def _query_one(self, x, y, p, t, index=1):
    u, v = self.forecast.query(np.array([index]), np.array([x]), np.array([y]),
                               np.array([p]), np.array([t]))
    return u[0], v[0]

  def test_linear_field_is_reproduced_between_grid_points(self):
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-500e3, 500e3, (2, 50))
    p = rng.uniform(5000, 14000, 50)
    t = rng.uniform(0, 48 * HOUR, 50)
    u, v = self.forecast.query(np.full(50, 1), x, y, p, t)
    np.testing.assert_allclose(u, _linear_value(self.coeff_u, t, x, y, p), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(v, _linear_value(self.coeff_v, t, x, y, p), rtol=1e-5, atol=1e-4)

  def test_hand_value_at_a_cell_centre(self):
    field = np.zeros((9, 21, 21, 10, 2))
    # Corners of the cell t in [0, 6 h], x, y in [0, 50 km], p in [5000, 6000] Pa.
    field[0, 10, 10, 0, 0] = 16.0
    field[1, 11, 11, 1, 1] = -32.0
    forecast = wind_forecast.WindForecast(1)
    forecast.set_field(0, field)
    u, v = forecast.query(None, np.array([25e3]), np.array([25e3]), np.array([5500.0]),
                          np.array([3 * HOUR]))
    # Each corner weighs (1/2)^4 = 1/16 at the centre of the 4-D cell.
    self.assertAlmostEqual(u[0], 1.0)
    self.assertAlmostEqual(v[0], -2.0)
    u, _ = forecast.query(None, np.array([0.0]), np.array([0.0]), np.array([5000.0]),
                          np.array([0.0]))
    self.assertAlmostEqual(u[0], 16.0)

  def test_clamps_position_and_pressure_to_the_grid(self):
    inside = self._query_one(500e3, -500e3, 14000.0, 5 * HOUR)
    outside = self._query_one(900e3, -2000e3, 30000.0, 5 * HOUR)
    np.testing.assert_allclose(outside, inside)
    low = self._query_one(0.0, 0.0, 5000.0, 1 * HOUR)
    np.testing.assert_allclose(self._query_one(0.0, 0.0, 100.0, 1 * HOUR), low)

  def test_reflects_time_back_and_forth_over_48_hours(self):
    for t, mirror in ((50, 46), (96, 0), (100, 4), (150, 42), (-2, 2)):
      np.testing.assert_allclose(self._query_one(1e3, 2e3, 9000.0, t * HOUR),
                                 self._query_one(1e3, 2e3, 9000.0, mirror * HOUR), atol=1e-9)

  def test_column_query_matches_level_by_level_queries(self):
    rng = np.random.default_rng(1)
    self.forecast.sample(np.array([0, 2]), [np.random.default_rng(5), np.random.default_rng(6)])
    x, y = rng.uniform(-600e3, 600e3, (2, 3))
    t = rng.uniform(0, 60 * HOUR, 3)
    column = np.tile(np.linspace(5000, 14000, 181), (3, 1))
    u, v = self.forecast.query(None, x, y, column, t)
    self.assertEqual(u.shape, (3, 181))
    for level in (0, 17, 90, 180):
      u_level, v_level = self.forecast.query(None, x, y, column[:, level], t)
      np.testing.assert_allclose(u[:, level], u_level)
      np.testing.assert_allclose(v[:, level], v_level)

  def test_indices_select_balloons(self):
    self.forecast.sample(np.array([0, 2]), [np.random.default_rng(5), np.random.default_rng(6)])
    args = (np.zeros(3), np.zeros(3), np.full(3, 9000.0), np.zeros(3))
    u_all, _ = self.forecast.query(None, *args)
    u_some, _ = self.forecast.query(np.array([2, 0]), *(a[:2] for a in args))
    np.testing.assert_allclose(u_some, u_all[[2, 0]])

  def test_rejects_bad_arguments(self):
    with self.assertRaises(ValueError):
      self.forecast.query(None, np.zeros(2), np.zeros(3), np.zeros(3), np.zeros(3))
    with self.assertRaises(IndexError):
      self.forecast.query(np.array([3]), np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1))
    with self.assertRaises(TypeError):
      self.forecast.query(np.array([0.5]), np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1))
    with self.assertRaises(ValueError):
      self.forecast.sample(np.array([0, 1]), [np.random.default_rng(0)])
    with self.assertRaises(ValueError):
      self.forecast.set_field(0, np.zeros((9, 21, 21, 10)))
    with self.assertRaises(ValueError):
      wind_forecast.WindForecast(0)


class GenerateFieldTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.fields = np.stack([wind_forecast.generate_field(np.random.default_rng(seed))
                           for seed in range(40)]).astype(np.float64)

  def test_shape_and_finiteness(self):
    self.assertEqual(self.fields.shape[1:], (9, 21, 21, 10, 2))
    self.assertTrue(np.isfinite(self.fields).all())

  def test_same_seed_same_field_and_different_seeds_differ(self):
    again = wind_forecast.generate_field(np.random.default_rng(3))
    np.testing.assert_array_equal(again, self.fields[3].astype(np.float32))
    self.assertGreater(np.abs(self.fields[3] - self.fields[4]).mean(), 1.0)

  def test_sample_uses_each_balloons_generator(self):
    forecast = wind_forecast.WindForecast(2)
    forecast.sample(np.array([1, 0]), [np.random.default_rng(7), np.random.default_rng(8)])
    np.testing.assert_array_equal(forecast.grid[1],
                                  wind_forecast.generate_field(np.random.default_rng(7)))
    np.testing.assert_array_equal(forecast.grid[0],
                                  wind_forecast.generate_field(np.random.default_rng(8)))

  def test_field_is_non_divergent_on_the_grid(self):
    u, v = self.fields[..., 0], self.fields[..., 1]
    spacing = wind_forecast.GRID_SPACING_M
    du_dx = (u[:, :, 2:, 1:-1] - u[:, :, :-2, 1:-1]) / (2 * spacing)
    dv_dy = (v[:, :, 1:-1, 2:] - v[:, :, 1:-1, :-2]) / (2 * spacing)
    divergence = du_dx + dv_dy
    # The centred-difference divergence vanishes up to float32 round-off, while
    # each of its two terms alone is many orders of magnitude larger.
    self.assertLess(np.abs(divergence).max(), 1e-4 * np.abs(du_dx).max())
    self.assertGreater(np.abs(du_dx).mean(), 1e-7)

  def test_rough_statistics_follow_the_spec_table(self):
    u, v = self.fields[..., 0], self.fields[..., 1]
    std_u = u.std(axis=(0, 1, 2, 3))
    std_v = v.std(axis=(0, 1, 2, 3))
    # u is strongly anisotropic aloft (§10: 8.7 vs 0.9 m/s at 5000 Pa), and v
    # grows with pressure; 40 fields only, so the bounds are loose.
    self.assertGreater(std_u[0], 4 * std_v[0])
    self.assertGreater(std_v[-1], 3 * std_v[0])
    np.testing.assert_allclose(std_u, [8.7, 6.5, 5.8, 5.8, 6.3, 7.3, 8.6, 9.9, 10.8, 11.2],
                               rtol=0.35)
    np.testing.assert_allclose(std_v, [0.9, 1.4, 1.8, 2.1, 2.7, 3.4, 4.1, 4.6, 5.0, 5.2],
                               rtol=0.35)
    self.assertLess(np.abs(u.mean()), 2.2)
    self.assertLess(np.abs(v.mean()), 2.2)


class StaticWindTest(unittest.TestCase):

  def test_bands(self):
    wind = wind_forecast.StaticWind(1)
    pressures = np.array([[5000.0, 7999.0, 8000.0, 9999.0, 10000.0, 11999.0, 12000.0, 14000.0]])
    u, v = wind.query(None, np.zeros(1), np.zeros(1), pressures, np.zeros(1))
    np.testing.assert_array_equal(u, [[10, 10, 0, 0, -10, -10, 0, 0]])
    np.testing.assert_array_equal(v, [[0, 0, 10, 10, 0, 0, -10, -10]])

  def test_flat_query_and_sample_noop(self):
    wind = wind_forecast.StaticWind(2)
    wind.sample(np.array([0, 1]), [None, None])
    u, v = wind.query(np.array([1]), np.array([9e5]), np.zeros(1), np.array([9000.0]),
                      np.array([1e6]))
    self.assertEqual(u.shape, (1,))
    self.assertEqual((u[0], v[0]), (0.0, 10.0))


if __name__ == '__main__':
  unittest.main()
