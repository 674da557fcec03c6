"""Tests for agents/env/balloon/wind/simplex_noise.py: BLE's simplex wind noise, held to BLE's
own values (../shared/reference/ble/generative/simplex_noise.npz, copied to testdata/)."""

import os
import unittest

import numpy as np
from opensimplex import internals as opensimplex_internals

from agents.env.balloon.wind import simplex_noise

REFERENCE = os.path.join(os.path.dirname(__file__), 'testdata', 'ble_simplex_noise.npz')


class SimplexNoiseTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.reference = dict(np.load(REFERENCE))

  def test_permutation_is_opensimplexs(self):
    seeds = [0, 1, 3, simplex_noise.SEED_RANGE - 1, 2 ** 63 - 1, -7,
             *np.random.default_rng(0).integers(simplex_noise.SEED_RANGE, size=20)]
    for seed in seeds:
      np.testing.assert_array_equal(simplex_noise.permutation(seed),
                                    opensimplex_internals._init(int(seed))[0], err_msg=seed)

  def test_raw_noise_is_bles_opensimplex_0_3(self):
    for seed, expected in zip(self.reference['raw_seeds'], self.reference['raw']):
      perm = simplex_noise.permutation(seed)
      values = [opensimplex_internals._noise4(*point, perm) for point in self.reference['raw_pts']]
      np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)

  def test_noise_matches_bles_simplex_wind_noise(self):
    noise = simplex_noise.SimplexNoise(2)
    noise.set_harmonics(1, self.reference['seeds'], self.reference['offsets'])
    points = self.reference['pts']  # x km, y km, pressure Pa, hours
    rows = np.ones(len(points), int)
    u, v = noise.query(rows, points[:, 0] * 1000.0, points[:, 1] * 1000.0, points[:, 2],
                       points[:, 3] * 3600.0)
    np.testing.assert_allclose(u, self.reference['vals'][:, 0], rtol=0, atol=1e-8)
    np.testing.assert_allclose(v, self.reference['vals'][:, 1], rtol=0, atol=1e-8)
    # A column query gives the same values as point queries, level by level.
    column_u, column_v = noise.query(rows[:3], points[:3, 0] * 1000.0, points[:3, 1] * 1000.0,
                                     np.tile(points[:3, 2], (3, 1)), points[:3, 3] * 3600.0)
    np.testing.assert_allclose(np.diag(column_u), u[:3], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.diag(column_v), v[:3], rtol=0, atol=1e-12)
    # Balloon 0 was never sampled: zero noise.
    zero_u, zero_v = noise.query(np.zeros(2, int), np.ones(2), np.ones(2), np.full(2, 9e3),
                                 np.ones(2))
    np.testing.assert_array_equal(zero_u, 0.0)
    np.testing.assert_array_equal(zero_v, 0.0)

  def test_sample_draws_as_ble_draws_and_is_deterministic(self):
    noise = simplex_noise.SimplexNoise(3)
    noise.sample(np.array([0, 2]), [np.random.default_rng(5), np.random.default_rng(5)])
    np.testing.assert_array_equal(noise._seeds[0], noise._seeds[2])
    self.assertTrue(((noise._seeds[0] >= 0) & (noise._seeds[0] < simplex_noise.SEED_RANGE)).all())
    offsets = noise._offsets[0]
    self.assertTrue(((offsets >= -1) & (offsets < 1)).all())
    np.testing.assert_array_equal(offsets, offsets.astype(np.float32))
    # Spread: BLE scales the noise to about 1 m/s per component.
    rng = np.random.default_rng(1)
    count = 4000
    everywhere = noise.query(np.zeros(count, int), *rng.uniform(-5e5, 5e5, (2, count)),
                             rng.uniform(5e3, 14e3, count), rng.uniform(0, 4 * 86400.0, count))
    self.assertTrue(0.6 < np.std(everywhere[0]) < 1.6, np.std(everywhere[0]))

  def test_bad_input_is_named(self):
    noise = simplex_noise.SimplexNoise(1)
    with self.assertRaisesRegex(ValueError, 'seeds \\[10\\] and offsets \\[10, 4\\]'):
      noise.set_harmonics(0, [1, 2], np.zeros((2, 4)))
    with self.assertRaisesRegex(ValueError, '1 indices but 2 generators'):
      noise.sample(np.array([0]), [np.random.default_rng(0)] * 2)
    with self.assertRaisesRegex(ValueError, 'num_balloons >= 1'):
      simplex_noise.SimplexNoise(0)


if __name__ == '__main__':
  unittest.main()
