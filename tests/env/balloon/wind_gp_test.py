"""Tests for agents/env/balloon/wind/wind_gp.py against a dense GP solve of the same window."""

import unittest

import numpy as np

from agents.env.balloon.wind import blas_threads, wind_gp

HOUR = 3600.0
LEVELS = np.linspace(5000.0, 14000.0, 181)


def _dense_posterior(measurements, x, y, pressures, t):
  """Reference: the GP of §11 on the given measurements by numpy.linalg.solve.

  Args:
    measurements: array [n, 6] of (x, y, pressure, t, error_u, error_v).
    x, y, t: the query position; pressures: [L].

  Returns:
    mean [L, 2] and variance [L].
  """
  points = measurements[:, :4] / wind_gp.LENGTH_SCALES
  queries = np.stack([np.full_like(pressures, x), np.full_like(pressures, y), pressures,
                      np.full_like(pressures, t)], axis=-1) / wind_gp.LENGTH_SCALES

  def kernel(a, b):
    distance = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))
    return wind_gp.KERNEL_VARIANCE * np.exp(-distance)

  gram = kernel(points, points) + wind_gp.OBSERVATION_NOISE * np.eye(len(points))
  cross = kernel(queries, points)
  # Threaded BLAS on small matrices is slow on a busy machine (see WindGP).
  with blas_threads.limit_blas_threads(1):
    mean = cross @ np.linalg.solve(gram, measurements[:, 4:])
    variance = wind_gp.KERNEL_VARIANCE - np.einsum(
        'ln,nl->l', cross, np.linalg.solve(gram, cross.T))
  return mean, variance


class _Trajectories:
  """Random walks of B balloons with a measurement log per balloon."""

  def __init__(self, num_balloons, seed):
    self.rng = np.random.default_rng(seed)
    self.x, self.y = self.rng.uniform(-300e3, 300e3, (2, num_balloons))
    self.pressure = self.rng.uniform(6000, 12000, num_balloons)
    self.t = np.zeros(num_balloons)
    self.log = [[] for _ in range(num_balloons)]

  def step(self, gp, dt=180.0, indices=None):
    count = len(self.x)
    self.x += self.rng.normal(0, 1800, count)
    self.y += self.rng.normal(0, 1800, count)
    self.pressure = np.clip(self.pressure + self.rng.normal(0, 150, count), 5000, 14000)
    self.t += dt
    error_u, error_v = self.rng.normal(0, 1.5, (2, count))
    rows = np.arange(count) if indices is None else np.asarray(indices)
    args = [a[rows] for a in (self.x, self.y, self.pressure, self.t, error_u, error_v)]
    gp.observe(*args, indices=indices)
    for row, values in zip(rows, zip(*args)):
      self.log[row].append(values)

  def window(self, balloon, max_points=wind_gp.MAX_POINTS):
    """The measurements §11 keeps: the last 6 hours, at most max_points."""
    now = self.t[balloon]
    kept = [m for m in self.log[balloon] if now - m[3] <= wind_gp.WINDOW_S]
    return np.array(kept[-max_points:])


class WindGPTest(unittest.TestCase):

  def _assert_matches_dense(self, gp, walks, balloons, atol_mean, atol_variance):
    pressures = np.tile(LEVELS, (gp.num_balloons, 1))
    mean_u, mean_v, variance = gp.predict(walks.x, walks.y, pressures, walks.t)
    for balloon in balloons:
      window = walks.window(balloon, gp.max_points)
      self.assertEqual(gp.num_points[balloon], len(window))
      mean, dense_variance = _dense_posterior(window, walks.x[balloon], walks.y[balloon],
                                              LEVELS, walks.t[balloon])
      np.testing.assert_allclose(mean_u[balloon], mean[:, 0], atol=atol_mean)
      np.testing.assert_allclose(mean_v[balloon], mean[:, 1], atol=atol_mean)
      np.testing.assert_allclose(variance[balloon], dense_variance, atol=atol_variance)

  def test_matches_dense_solve_while_filling_and_after_sliding(self):
    gp = wind_gp.WindGP(5, chunk_size=2, predict_dtype=np.float64)
    walks = _Trajectories(5, seed=0)
    for step in range(150):
      walks.step(gp)
      if step in (0, 9, 119, 149):
        self._assert_matches_dense(gp, walks, range(5), 1e-8, 1e-8)
    self.assertEqual(gp.num_points.tolist(), [120] * 5)

  def test_block_sizes_of_the_triangular_product_agree(self):
    # predict sums k*^T Q k* over the block upper triangle of Q; any block size is exact.
    balloons = wind_gp.MIN_BLOCKED_ROWS
    gps = [wind_gp.WindGP(balloons, max_points=40, predict_dtype=np.float64, block_size=size)
           for size in (1, 7, 16, 40, 64)]
    walks = _Trajectories(balloons, seed=7)
    for _ in range(50):
      walks.step(gps[0])
      latest = np.array([log[-1] for log in walks.log])
      for gp in gps[1:]:
        gp.observe(*latest.T)
    for gp in gps:
      self._assert_matches_dense(gp, walks, range(balloons), 1e-8, 1e-8)

  def test_window_drops_points_older_than_six_hours(self):
    # Irregular steps: after a 2 h pause several points expire at once.
    gp = wind_gp.WindGP(3, refresh_interval=0, predict_dtype=np.float64)
    walks = _Trajectories(3, seed=1)
    for _ in range(100):
      walks.step(gp)
    walks.step(gp, dt=2 * HOUR)
    self.assertLess(gp.num_points[0], 100)
    self.assertEqual(gp.num_points[0], len(walks.window(0)))
    self._assert_matches_dense(gp, walks, range(3), 1e-8, 1e-8)
    walks.step(gp, dt=7 * HOUR)
    self.assertEqual(gp.num_points.tolist(), [1, 1, 1])
    self._assert_matches_dense(gp, walks, range(3), 1e-8, 1e-8)

  def test_smaller_window_and_long_run_without_refresh(self):
    gp = wind_gp.WindGP(2, max_points=30, refresh_interval=0, predict_dtype=np.float64)
    walks = _Trajectories(2, seed=2)
    for _ in range(400):
      walks.step(gp)
    self._assert_matches_dense(gp, walks, range(2), 1e-8, 1e-8)

  def test_float32_prediction_is_close(self):
    gp = wind_gp.WindGP(4)
    walks = _Trajectories(4, seed=3)
    for _ in range(130):
      walks.step(gp)
    self._assert_matches_dense(gp, walks, range(4), 2e-3, 5e-3)

  def test_subset_observations_and_reset(self):
    gp = wind_gp.WindGP(4, chunk_size=3, predict_dtype=np.float64)
    walks = _Trajectories(4, seed=4)
    for step in range(40):
      walks.step(gp, indices=[0, 2] if step % 2 else [3, 1, 2])
    self._assert_matches_dense(gp, walks, range(4), 1e-8, 1e-8)
    gp.reset(np.array([2]))
    walks.log[2] = []
    self.assertEqual(gp.num_points[2], 0)
    walks.step(gp)
    self._assert_matches_dense(gp, walks, range(4), 1e-8, 1e-8)

  def test_observe_and_predict_equals_the_two_calls(self):
    fused = wind_gp.WindGP(5, chunk_size=2)
    separate = wind_gp.WindGP(5, chunk_size=2)
    rng = np.random.default_rng(6)
    pressures = np.tile(LEVELS, (5, 1))
    for step in range(130):
      x, y = rng.uniform(-1e5, 1e5, (2, 5))
      pressure = rng.uniform(6000, 12000, 5)
      t = np.full(5, step * 180.0)
      errors = rng.normal(0, 1, (2, 5))
      got = fused.observe_and_predict(x, y, pressure, t, *errors, pressures)
      separate.observe(x, y, pressure, t, *errors)
    expected = separate.predict(x, y, pressures, t)
    for got_array, expected_array in zip(got, expected):
      np.testing.assert_allclose(got_array, expected_array, atol=1e-9)

  def test_no_measurements_give_zero_mean_and_zero_variance(self):
    # §11: with no measurements the estimate is the forecast and the uncertainty 0.
    gp = wind_gp.WindGP(2)
    mean_u, mean_v, variance = gp.predict(np.zeros(2), np.zeros(2),
                                          np.tile(LEVELS, (2, 1)), np.zeros(2))
    for array in (mean_u, mean_v, variance):
      np.testing.assert_array_equal(array, 0.0)

  def test_variance_is_small_at_a_measurement_and_prior_far_away(self):
    gp = wind_gp.WindGP(1, predict_dtype=np.float64)
    gp.observe(np.zeros(1), np.zeros(1), np.array([9000.0]), np.zeros(1), np.ones(1),
               -np.ones(1))
    pressures = np.array([[9000.0, 13000.0]])
    mean_u, mean_v, variance = gp.predict(np.zeros(1), np.zeros(1), pressures, np.zeros(1))
    # One point: mean = k / (k + noise) * y, variance = k noise / (k + noise).
    k = wind_gp.KERNEL_VARIANCE
    self.assertAlmostEqual(mean_u[0, 0], k / (k + wind_gp.OBSERVATION_NOISE))
    self.assertAlmostEqual(mean_v[0, 0], -k / (k + wind_gp.OBSERVATION_NOISE))
    self.assertAlmostEqual(variance[0, 0], k * wind_gp.OBSERVATION_NOISE
                           / (k + wind_gp.OBSERVATION_NOISE))
    self.assertGreater(variance[0, 1], 0.99 * k)

  def test_needed_levels(self):
    # float64, so only the logic is tested: in float32 a narrower band sums the same
    # products in another order, which moves the variance by up to ~1e-4 (m/s)².
    gp = wind_gp.WindGP(3, chunk_size=2, predict_dtype=np.float64)
    walks = _Trajectories(3, seed=5)
    for _ in range(20):
      walks.step(gp)
    pressures = np.tile(LEVELS, (3, 1))
    needed = np.zeros((3, 181), bool)
    needed[0, 40:90] = True
    needed[1, 60:70] = True
    full = gp.predict(walks.x, walks.y, pressures, walks.t)
    part = gp.predict(walks.x, walks.y, pressures, walks.t, needed=needed)
    for full_array, part_array in zip(full, part):
      np.testing.assert_allclose(part_array[needed], full_array[needed], atol=1e-9)
    # Balloon 2 needs nothing and has its own chunk: the prior is returned.
    np.testing.assert_array_equal(part[2][2], wind_gp.KERNEL_VARIANCE)

  def test_rejects_bad_arguments(self):
    gp = wind_gp.WindGP(2)
    with self.assertRaises(ValueError):
      gp.observe(np.zeros(3), np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2))
    with self.assertRaises(ValueError):
      gp.observe(*np.zeros((6, 2)), indices=np.array([1, 1]))
    with self.assertRaises(IndexError):
      gp.reset(np.array([5]))
    with self.assertRaises(ValueError):
      gp.predict(np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2))
    with self.assertRaises(ValueError):
      gp.predict(np.zeros(2), np.zeros(2), np.zeros((2, 3)), np.zeros(2),
                 needed=np.ones((2, 4), bool))
    with self.assertRaises(ValueError):
      wind_gp.WindGP(2, predict_dtype=np.int32)
    with self.assertRaises(ValueError):
      wind_gp.WindGP(2, block_size=0)


if __name__ == '__main__':
  unittest.main()
