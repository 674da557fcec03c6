"""Tests for agents/env/balloon/wind/forecast_error.py: spread, smoothness, column queries
and determinism of the forecast-error field."""

import unittest

import numpy as np

from agents.env.balloon.wind import forecast_error

HOUR = 3600.0


def _sampled(num_balloons, first_seed=0):
  error = forecast_error.ForecastError(num_balloons)
  error.sample(np.arange(num_balloons),
               [np.random.default_rng(first_seed + i) for i in range(num_balloons)])
  return error


class ForecastErrorTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.num_balloons = 200
    cls.error = _sampled(cls.num_balloons)

  def _random_points(self, rng, count):
    x, y = rng.uniform(-500e3, 500e3, (2, count))
    p = rng.uniform(5000, 14000, count)
    t = rng.uniform(0, 48 * HOUR, count)
    return x, y, p, t

  def test_spread_matches_the_spec(self):
    # Many points on every balloon's field: §10 asks ~1.05 m/s std per
    # component, with extremes of about 4 m/s.
    rng = np.random.default_rng(0)
    samples = []
    for _ in range(20):
      x, y, p, t = self._random_points(rng, self.num_balloons)
      samples.append(np.stack(self.error.query(None, x, y, p, t)))
    samples = np.concatenate(samples, axis=1)
    std = samples.std(axis=1)
    np.testing.assert_allclose(std, [1.05, 1.05], rtol=0.15)
    self.assertLess(np.abs(samples.mean(axis=1)).max(), 0.15)
    self.assertLess(np.abs(samples).max(), 6.0)
    self.assertGreater(np.abs(samples).max(), 2.5)

  def test_field_is_smooth(self):
    rng = np.random.default_rng(1)
    x, y, p, t = self._random_points(rng, self.num_balloons)
    u0, v0 = self.error.query(None, x, y, p, t)
    # Small steps in x, y (2 km) and time (180 s) change the error by a few
    # percent of its std; pressure is the roughest axis (the v scale of 66.6 Pa,
    # §10), so a 10 Pa step changes it more, but still little.
    u1, v1 = self.error.query(None, x + 2e3, y - 2e3, p, t + 180.0)
    self.assertLess(np.abs(np.concatenate([u1 - u0, v1 - v0])).mean(), 0.1)
    u1, v1 = self.error.query(None, x, y, p + 10.0, t)
    self.assertLess(np.abs(np.concatenate([u1 - u0, v1 - v0])).mean(), 0.15)
    # Far apart the values decorrelate but do not vanish.
    u2, _ = self.error.query(None, x + 400e3, y, p + 4000.0, t + 24 * HOUR)
    self.assertLess(np.corrcoef(u0, u2)[0, 1], 0.9)

  def test_column_query_matches_level_by_level_queries(self):
    rng = np.random.default_rng(2)
    x, y, _, t = self._random_points(rng, 4)
    column = np.tile(np.linspace(5000, 14000, 181), (4, 1))
    indices = np.array([3, 1, 4, 1])
    du, dv = self.error.query(indices, x, y, column, t)
    self.assertEqual(du.shape, (4, 181))
    for level in (0, 55, 180):
      du_level, dv_level = self.error.query(indices, x, y, column[:, level], t)
      np.testing.assert_allclose(du[:, level], du_level, atol=1e-12)
      np.testing.assert_allclose(dv[:, level], dv_level, atol=1e-12)

  def test_same_seed_same_field_and_different_seeds_differ(self):
    again = _sampled(3)
    other = _sampled(3, first_seed=100)
    args = (np.array([1e3, 2e3, 3e3]), np.zeros(3), np.full(3, 8000.0), np.full(3, HOUR))
    np.testing.assert_array_equal(again.query(None, *args)[0],
                                  self.error.query(np.arange(3), *args)[0])
    self.assertGreater(np.abs(other.query(None, *args)[0] - again.query(None, *args)[0]).max(),
                       1e-3)

  def test_unsampled_field_is_zero_and_bad_arguments_raise(self):
    error = forecast_error.ForecastError(2)
    du, dv = error.query(None, np.zeros(2), np.zeros(2), np.full(2, 9000.0), np.zeros(2))
    np.testing.assert_allclose(du, 0.0, atol=1e-12)
    np.testing.assert_allclose(dv, 0.0, atol=1e-12)
    with self.assertRaises(ValueError):
      error.sample(np.array([0]), [])
    with self.assertRaises(IndexError):
      error.query(np.array([2]), np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1))
    with self.assertRaises(ValueError):
      forecast_error.ForecastError(2, features_per_scale=0)


if __name__ == '__main__':
  unittest.main()
