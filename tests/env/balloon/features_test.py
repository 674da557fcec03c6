"""Tests of agents/env/balloon/observation/features.py: the 1099-float layout of balloon.md §11."""

import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.observation import features


def _observation(pressure, reachable=None, x=-30e3, y=40e3, variance=None):
  count = len(pressure)
  out = np.full((count, constants.OBSERVATION_SIZE), np.nan, np.float32)
  features.ambient_features(out, pressure, np.full(count, 0.5), np.zeros(count),
                            np.zeros(count), np.full(count, x), np.full(count, y),
                            np.full(count, constants.DOWN), np.zeros(count, bool),
                            np.zeros(count, bool), np.full(count, 1.1))
  level_count = constants.NUM_LEVELS
  wind_u = np.tile(np.linspace(-20, 20, level_count), (count, 1))
  wind_v = np.full((count, level_count), 3.0)
  variance = np.full((count, level_count), 0.5 * 3.6 ** 2) if variance is None else variance
  reachable = np.ones((count, level_count), bool) if reachable is None else reachable
  triples = features.level_triples(np.full(count, x), np.full(count, y), wind_u, wind_v,
                                   variance, reachable)
  features.place_column(out, features.balloon_level(pressure), triples)
  return out, triples


class LayoutTest(unittest.TestCase):

  def test_size_and_everything_written(self):
    out, _ = _observation(np.array([5000.0, 9512.0, 14000.0]))
    self.assertEqual(out.shape, (3, 1099))
    self.assertFalse(np.isnan(out).any())

  def test_balloon_level_sits_at_column_180(self):
    pressures = np.array([5000.0, 7024.0, 7026.0, 14000.0, 3000.0, 20000.0])
    levels = features.balloon_level(pressures)
    np.testing.assert_array_equal(levels, [0, 40, 41, 180, 0, 180])
    out, triples = _observation(pressures)
    column = out[:, 16:].reshape(len(pressures), 361, 3)
    for row, level in enumerate(levels):
      np.testing.assert_array_equal(column[row, 180], triples[row, level])
      # The real levels run from column 180 − b to 360 − b; the rest is padding.
      np.testing.assert_array_equal(column[row, 180 - level:361 - level], triples[row])
      padding = np.concatenate([column[row, :180 - level], column[row, 361 - level:]])
      self.assertEqual(len(padding), 180)
      np.testing.assert_array_equal(padding, np.tile([0.0, 1.0, 1.0], (180, 1)))

  def test_unreachable_levels_are_padding(self):
    reachable = np.zeros((1, 181), bool)
    reachable[0, 20:100] = True
    _, triples = _observation(np.array([8000.0]), reachable)
    np.testing.assert_array_equal(triples[0, :20], np.tile([0, 1, 1], (20, 1)))
    self.assertFalse(np.all(triples[0, 20:100] == [0, 1, 1], axis=-1).any())

  def test_ambient_features(self):
    out, _ = _observation(np.array([9500.0]), x=-30e3, y=40e3)
    self.assertAlmostEqual(out[0, 0], 0.5)
    self.assertAlmostEqual(out[0, 1], 0.5)
    self.assertAlmostEqual(out[0, 2], 0.5)
    heading = np.arctan2(30e3, -40e3)  # towards the station, clockwise from north
    self.assertAlmostEqual(out[0, 5], np.sin(heading), places=6)
    self.assertAlmostEqual(out[0, 6], np.cos(heading), places=6)
    self.assertAlmostEqual(out[0, 7], 50.0 / 300.0, places=6)
    np.testing.assert_array_equal(out[0, 8:11], [0, 0, 1])  # UP, STAY, DOWN one-hot
    np.testing.assert_array_equal(out[0, 11:13], [0, 1])
    self.assertAlmostEqual(out[0, 15], 1.1, places=6)

  def test_uncertainty_bearing_speed(self):
    _, triples = _observation(np.array([8000.0]), x=0.0, y=-100e3,
                              variance=np.full((1, 181), 3.6 ** 2 * 0.25))
    np.testing.assert_allclose(triples[0, :, 0], 0.25)
    # Station to the north (+y); wind (u, 3): bearing error = angle from north.
    wind_u = np.linspace(-20, 20, 181)
    expected = np.arccos(3.0 / np.hypot(wind_u, 3.0)) / np.pi
    # arccos is steep near 0: the 1e-5 normalisation tolerance and float32 show there.
    np.testing.assert_allclose(triples[0, :, 1], expected, atol=2e-3)
    speed = np.hypot(wind_u, 3.0)
    np.testing.assert_allclose(triples[0, :, 2], speed / (speed + 30.0), rtol=1e-6)

  def test_bearing_edge_cases(self):
    triples = features.level_triples(np.array([0.0, 1000.0]), np.array([0.0, 0.0]),
                                     np.zeros((2, 2)), np.array([[5.0, 0.0], [5.0, 0.0]]),
                                     np.zeros((2, 2)), np.ones((2, 2), bool))
    np.testing.assert_array_equal(triples[0, :, 1], [0.0, 0.0])  # at the station
    self.assertEqual(triples[1, 1, 1], 1.0)                      # no wind


class DescentCostTest(unittest.TestCase):

  def test_power_table(self):
    ratios = np.array([1.0, 1.0, 1.08, 1.1, 1.15, 1.25, 1.3, 1.3])
    socs = np.array([0.2, 0.45, 0.3, 0.8, 0.45, 0.55, 0.55, 0.6])
    np.testing.assert_array_equal(features.power_table_watts(ratios, socs),
                                  [0, 175, 200, 225, 225, 300, 325, 350])
    np.testing.assert_allclose(features.descent_cost(ratios, socs),
                               [0, 0.375, 0.5, 0.625, 0.625, 1.0, 1.0, 1.0])


if __name__ == '__main__':
  unittest.main()
