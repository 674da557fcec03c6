"""Tests of agents/env/balloon/physics/acs.py: the ACS check values of balloon.md §4.5."""

import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import acs, array_math


class AcsTest(unittest.TestCase):

  def test_spec_check_values(self):
    for ratio, power, flow in ((1.05, 100.0, 0.011), (1.15, 233.3, 0.0158),
                               (1.3, 400.0, 0.0256)):
      for math in (array_math.SCALAR, array_math.NUMPY):
        got_power, got_flow = acs.pump_mass_flow(math, np.float64(ratio) if not math.is_scalar
                                                 else ratio)
        self.assertAlmostEqual(float(got_power), power, delta=0.1)
        self.assertAlmostEqual(float(got_flow), flow, delta=0.015 * flow)  # "about"

  def test_power_is_flat_outside_table(self):
    ratios = np.array([0.9, 1.0, 1.4, 2.0])
    np.testing.assert_allclose(acs.pump_power(array_math.NUMPY, ratios), [100, 100, 400, 400])

  def test_efficiency_table_corners_and_clamping(self):
    table = np.asarray(constants.PUMP_EFFICIENCY)
    ratios = 1.05 + 0.025 * np.arange(13)
    for column, power in enumerate((100.0, 200.0, 300.0, 400.0)):
      got = acs.pump_efficiency(array_math.NUMPY, ratios, np.full(13, power))
      np.testing.assert_allclose(got, table[:, column], atol=1e-12)
    # Clamped at the edges of the table.
    self.assertAlmostEqual(acs.pump_efficiency(array_math.SCALAR, 1.0, 50.0), 0.40)
    self.assertAlmostEqual(acs.pump_efficiency(array_math.SCALAR, 1.5, 500.0), 0.13)
    # Bilinear between rows 1.15/1.175 and columns 200/300 W.
    expected = 0.5 * (0.5 * (0.25 + 0.23) + 0.5 * (0.12 + 0.10))
    self.assertAlmostEqual(acs.pump_efficiency(array_math.SCALAR, 1.1625, 250.0), expected)

  def test_scalar_and_numpy_agree(self):
    ratios = np.linspace(0.98, 1.4, 97)
    _, numpy_flow = acs.pump_mass_flow(array_math.NUMPY, ratios)
    scalar_flow = [acs.pump_mass_flow(array_math.SCALAR, float(r))[1] for r in ratios]
    np.testing.assert_allclose(numpy_flow, scalar_flow, rtol=1e-12, atol=1e-15)

  def test_tabulated_flow_matches_exact(self):
    ratios = np.linspace(1.0, 1.4, 4003)
    exact_power, exact_flow = acs.pump_mass_flow(array_math.NUMPY, ratios)
    power, flow = acs.tabulated_pump_mass_flow(array_math.NUMPY, ratios)
    np.testing.assert_array_equal(power, exact_power)
    np.testing.assert_allclose(flow, exact_flow, rtol=1e-5, atol=1e-7)  # ≤1e-5 of typical flow
    scalar = [acs.tabulated_pump_mass_flow(array_math.SCALAR, float(r))[1] for r in ratios]
    np.testing.assert_allclose(scalar, flow, rtol=1e-12, atol=1e-15)

  def test_vent_flow(self):
    pressure, superpressure, temperature = 8000.0, 1000.0, 220.0
    density = (pressure + superpressure) * constants.AIR_MOLAR_MASS / (
        constants.GAS_CONSTANT * temperature)
    expected = -0.62 * np.pi * 0.04 ** 2 / 4 * np.sqrt(2 * superpressure * density)
    self.assertAlmostEqual(
        acs.vent_mass_flow(array_math.SCALAR, pressure, superpressure, temperature), expected)
    self.assertEqual(acs.vent_mass_flow(array_math.SCALAR, pressure, -5.0, temperature), 0.0)


if __name__ == '__main__':
  unittest.main()
