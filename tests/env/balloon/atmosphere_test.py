"""Tests of agents/env/balloon/physics/atmosphere.py: the check values of balloon.md §3."""

import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics.atmosphere import Atmosphere


class AtmosphereTest(unittest.TestCase):

  def setUp(self):
    self.alphas = np.array([0.0, 0.5, 0.75, 1.0])
    self.atmosphere = Atmosphere(self.alphas)

  def test_surface_values(self):
    temperature, pressure, _ = self.atmosphere.at_height(np.full(4, -610.0))
    np.testing.assert_allclose(temperature, 300.0)
    np.testing.assert_allclose(pressure, 108870.8213)

  def test_spec_check_heights(self):
    # §3 check values. They hold for α in [0.5, 1]; at α = 0 the same formulas (BLE's)
    # give a colder, lower atmosphere, about 0.5 km below the quoted ranges.
    upper = self.alphas >= 0.5
    for pressure, (low_km, high_km) in ((6000.0, (19.1, 19.6)), (10000.0, (16.3, 16.6)),
                                        (14000.0, (14.3, 14.6))):
      height = self.atmosphere.height_at_pressure(np.full(4, pressure)) / 1000.0
      self.assertTrue(np.all(height[upper] > low_km - 0.1), (pressure, height))
      self.assertTrue(np.all(height[upper] < high_km + 0.1), (pressure, height))
      self.assertTrue(np.all(np.diff(height) > 0), 'warmer atmospheres are higher')

  def test_pressure_at_50000_feet(self):
    pressure = self.atmosphere.pressure_at_height(np.full(4, constants.ALTITUDE_MIN_M))
    self.assertTrue(np.all((pressure[1:] > 11950 - 100) & (pressure[1:] < 12550 + 100)), pressure)
    self.assertTrue(np.all(np.diff(pressure) > 0))

  def test_height_and_pressure_are_inverse(self):
    heights = np.array([[0.0, 12000.0, 17000.0, 30000.0, 49000.0, 60000.0]] * 4)
    _, pressure, density = self.atmosphere.at_height(heights)
    back, temperature, density_back = self.atmosphere.at_pressure(pressure)
    np.testing.assert_allclose(back, heights, atol=1e-6)
    np.testing.assert_allclose(density_back, density, rtol=1e-12)
    np.testing.assert_allclose(
        density, pressure * constants.AIR_MOLAR_MASS / (constants.GAS_CONSTANT * temperature))

  def test_isothermal_layer(self):
    temperature, _, _ = self.atmosphere.at_height(np.array([[47500.0, 50500.0]] * 4))
    np.testing.assert_allclose(temperature[:, 0], temperature[:, 1])

  def test_fast_and_scalar_temperature_match(self):
    pressures = np.array([4000.0, 6000.0, 9000.0, 14000.0])
    _, expected, _ = self.atmosphere.at_pressure(pressures)
    np.testing.assert_allclose(self.atmosphere.temperature_at_pressure(pressures), expected,
                               rtol=1e-12)
    for index in range(4):
      scalar = self.atmosphere.scalar_temperature_function(index)
      self.assertAlmostEqual(scalar(float(pressures[index])), expected[index], places=9)

  def test_hydrostatic_pressure_gradient(self):
    # physics.py uses dP/dh = −ρg, which must match the model's own finite difference.
    pressure = np.full(4, 8000.0)
    height, _, density = self.atmosphere.at_pressure(pressure)
    step = self.atmosphere.height_at_pressure(pressure - 1.0) - height
    np.testing.assert_allclose(-1.0 / step, -density * constants.GRAVITY, rtol=2e-4)

  def test_bad_alpha(self):
    with self.assertRaises(ValueError):
      Atmosphere([1.5])


if __name__ == '__main__':
  unittest.main()
