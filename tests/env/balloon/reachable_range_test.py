"""Tests of agents/env/balloon/observation/reachable_range.py: the reachable-range table."""

import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.observation import reachable_range
from agents.env.balloon.physics import array_math, solar, stable_start, thermal
from agents.env.balloon.physics.atmosphere import Atmosphere

NOON_AT_0E = 1.36e9 - 1.36e9 % 86400 + 43200.0


def _table(infrared, alphas=(0.5,)):
  atmosphere = Atmosphere(np.array(alphas))
  count = len(alphas)
  earth = thermal.earth_heat_per_area(array_math.NUMPY, np.full(count, infrared))
  return atmosphere, earth, reachable_range.build_table(
      atmosphere, np.full(count, NOON_AT_0E), np.zeros(count), np.zeros(count), earth)


class ReachableRangeTest(unittest.TestCase):

  def test_nominal_range_is_float_level_to_50000_feet(self):
    atmosphere, _, table = _table(315.0, (0.0, 1.0))
    self.assertEqual(table.shape, (2, reachable_range.TABLE_TIMES, 2))
    bottom = atmosphere.pressure_at_height(np.full(2, constants.ALTITUDE_MIN_M))
    np.testing.assert_allclose(table[:, :, 1], np.repeat(bottom[:, None], table.shape[1], 1))
    # The top is where an empty-ballonet balloon is neutrally buoyant at V0.
    _, temperature, density = atmosphere.at_pressure(table[:, 0, 0])
    np.testing.assert_allclose(density * constants.ENVELOPE_BASE_VOLUME, constants.EMPTY_MASS,
                               rtol=2e-3)
    self.assertTrue(np.all((table[:, :, 0] > 5000) & (table[:, :, 0] < 7000)))

  def test_narrowed_to_safe_superpressure(self):
    # Strong upwelling infrared heats the balloon: low levels exceed 2130 Pa.
    atmosphere, earth, table = _table(600.0)
    highest = table[0, 0, 1]
    self.assertLess(highest, atmosphere.pressure_at_height(np.array([constants.ALTITUDE_MIN_M]))[0])
    elevation, _, flux = solar.solar_position(NOON_AT_0E, 0.0, 0.0)
    _, ambient, _ = atmosphere.at_pressure(np.array([highest]))
    _, _, _, superpressure = stable_start.stable_state(
        np.array([highest]), ambient,
        stable_start.sun_heat_per_area(elevation, flux, np.array([highest])), earth)
    self.assertAlmostEqual(superpressure[0], 2130.0, delta=60.0)

  def test_lookup_interpolates_in_time(self):
    table = np.zeros((1, reachable_range.TABLE_TIMES, 2))
    table[0, :, 0] = np.arange(reachable_range.TABLE_TIMES)
    lowest, _ = reachable_range.lookup(table, np.array([5400.0]))
    self.assertAlmostEqual(lowest[0], 1.5)
    lowest, _ = reachable_range.lookup(table, np.array([1e7]))
    self.assertEqual(lowest[0], reachable_range.TABLE_TIMES - 1)


if __name__ == '__main__':
  unittest.main()
