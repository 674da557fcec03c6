"""Tests of agents/env/balloon/physics/stable_start.py: the stable-start check values of §7."""

import datetime
import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import array_math, solar, stable_start, thermal
from agents.env.balloon.physics.atmosphere import Atmosphere


def _stable(alpha, hour, pressures):
  atmosphere = Atmosphere(np.full(len(pressures), alpha))
  _, ambient, _ = atmosphere.at_pressure(pressures)
  unix = datetime.datetime(2013, 6, 15, hour, tzinfo=datetime.timezone.utc).timestamp()
  elevation, _, flux = solar.solar_position(unix, 0.0, 0.0)
  earth = thermal.earth_heat_per_area(array_math.NUMPY, np.full(len(pressures), 315.0))
  sun = stable_start.sun_heat_per_area(elevation, flux, pressures)
  return ambient, stable_start.stable_state(pressures, ambient, sun, earth)


class StableStartTest(unittest.TestCase):

  PRESSURES = np.array([6000.0, 8000.0, 9000.0, 11000.0])

  def test_spec_check_values(self):
    # §7's ranges hold for the warm end of the atmospheres (α near 1, as do §3's checks);
    # at α = 0 the same model runs 4–7 K warmer relative to its colder air.
    ambient, (_, temperature, _, superpressure) = _stable(1.0, 0, self.PRESSURES)
    excess = temperature - ambient
    self.assertTrue(np.all((excess > 12 - 1) & (excess < 16 + 1)), excess)
    self.assertTrue(np.all((superpressure > 740 - 30) & (superpressure < 950 + 30)), superpressure)
    ambient, (_, temperature, _, superpressure) = _stable(1.0, 12, self.PRESSURES)
    excess = temperature - ambient
    self.assertTrue(np.all((excess > 23 - 1) & (excess < 27 + 1)), excess)
    self.assertTrue(np.all((superpressure > 1130 - 40) & (superpressure < 1440 + 40)),
                    superpressure)

  def test_equilibrium_is_neutral_and_steady(self):
    ambient, (mols_air, temperature, _, _) = _stable(0.3, 12, self.PRESSURES)
    density = self.PRESSURES * constants.AIR_MOLAR_MASS / (constants.GAS_CONSTANT * ambient)
    mass = constants.EMPTY_MASS + mols_air * constants.AIR_MOLAR_MASS
    np.testing.assert_allclose(density * constants.ENVELOPE_BASE_VOLUME, mass, rtol=1e-12)
    unix = datetime.datetime(2013, 6, 15, 12, tzinfo=datetime.timezone.utc).timestamp()
    elevation, _, flux = solar.solar_position(unix, 0.0, 0.0)
    rate = thermal.temperature_rate(
        array_math.NUMPY, constants.ENVELOPE_BASE_VOLUME, temperature, ambient, density,
        stable_start.sun_heat_per_area(elevation, flux, self.PRESSURES),
        thermal.earth_heat_per_area(array_math.NUMPY, 315.0))
    np.testing.assert_allclose(rate, 0.0, atol=1e-5)

  def test_ballonet_never_negative(self):
    self.assertEqual(float(stable_start.ballonet_air_for_neutral_buoyancy(0.01)), 0.0)


if __name__ == '__main__':
  unittest.main()
