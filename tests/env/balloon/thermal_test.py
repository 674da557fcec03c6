"""Tests of agents/env/balloon/physics/thermal.py: the film-and-gas heat balance of §6."""

import math
import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import array_math, thermal


class ThermalTest(unittest.TestCase):

  def test_total_absorptivity(self):
    a, reflectivity = 0.05, constants.FILM_REFLECTIVITY
    expected = a * (1 + (1 - a - reflectivity) / (1 - reflectivity))
    self.assertAlmostEqual(thermal.total_absorptivity(array_math.SCALAR, a), expected)
    self.assertEqual(thermal.total_absorptivity(array_math.SCALAR, 5.0), 0.0)  # kept in [0, 1]

  def test_rate_against_the_spec_formula(self):
    volume, temperature, ambient, density, sun, ir = 1850.0, 220.0, 205.0, 0.15, 4.0, 315.0
    radius = (3 * volume / (4 * math.pi)) ** (1 / 3)
    area = 4 * math.pi * radius ** 2
    sigma = constants.STEFAN_BOLTZMANN

    def alpha_total(a):
      return a * (1 + (1 - a - 0.0291) / (1 - 0.0291))

    def alpha_ir(t):
      return 0.04587 + 0.000232 * (t - 210)

    q_earth = ir * 0.4605 * area * alpha_total(alpha_ir((ir / sigma) ** 0.25))
    q_emit = sigma * temperature ** 4 * area * alpha_total(alpha_ir(temperature))
    mu = 1.458e-6 * ambient ** 1.5 / (ambient + 110.4)
    kappa = 0.0241 * (ambient / 273.15) ** 0.9
    prandtl = 0.804 - 3.25e-4 * ambient
    grashof = 9.80665 * density ** 2 * (2 * radius) ** 3 * abs(ambient - temperature) / (
        ambient * mu ** 2)
    rayleigh = prandtl * grashof
    nusselt = 2 + 0.457 * rayleigh ** 0.25 + (1 + 2.69e-8 * rayleigh) ** (1 / 12)
    q_conv = area * nusselt * kappa / (2 * radius) * (ambient - temperature)
    q_sun = sun * area
    expected = (q_sun + q_earth + q_conv - q_emit) / (1500 * 68.5)
    earth = thermal.earth_heat_per_area(array_math.SCALAR, ir)
    for math_namespace in (array_math.SCALAR, array_math.NUMPY):
      got = thermal.temperature_rate(math_namespace, np.float64(volume), temperature, ambient,
                                     density, sun, earth)
      self.assertAlmostEqual(float(got), expected, places=12)

  def test_hot_balloon_cools_at_night(self):
    rate = thermal.temperature_rate(array_math.SCALAR, 1804.0, 260.0, 200.0, 0.12, 0.0,
                                    thermal.earth_heat_per_area(array_math.SCALAR, 315.0))
    self.assertLess(rate, 0.0)


if __name__ == '__main__':
  unittest.main()
