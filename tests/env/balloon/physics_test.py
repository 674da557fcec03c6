"""Tests of agents/env/balloon/physics/physics.py: one sub-step, conservation, statuses."""

import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import array_math, physics
from agents.env.balloon.physics.atmosphere import Atmosphere


def _state(count, pressure=8000.0, superpressure=1200.0, mols_air=2000.0):
  atmosphere = Atmosphere(np.full(count, 0.5))
  state = physics.SlabState.zeros(count)
  state.pressure = np.full(count, pressure)
  state.internal_temperature = np.full(count, 215.0)
  state.mols_air = np.full(count, mols_air)
  state.battery_charge = np.full(count, 2000.0)
  state.volume, state.superpressure = physics.volume_and_superpressure(
      array_math.NUMPY, constants.HELIUM_MOLS + state.mols_air, state.internal_temperature,
      state.pressure)
  if superpressure is not None:
    state.superpressure = np.full(count, superpressure)
  state.ambient_temperature = atmosphere.temperature_at_pressure(state.pressure)
  return state, atmosphere


def _sun(count, unix=1.36e9):
  return physics.SunForcing(np.full(count, unix), np.zeros(count), np.zeros(count),
                            np.zeros(count), np.zeros(count), np.zeros(count), np.zeros(count))


class VolumeTest(unittest.TestCase):

  def test_slack_and_stretched(self):
    volume, superpressure = physics.volume_and_superpressure(array_math.NUMPY, 8000.0, 200.0,
                                                             np.array([9000.0, 6000.0]))
    free = 8000.0 * constants.GAS_CONSTANT * 200.0 / np.array([9000.0, 6000.0])
    self.assertEqual(superpressure[0], 0.0)
    self.assertAlmostEqual(volume[0], free[0])
    self.assertGreater(free[1], constants.ENVELOPE_BASE_VOLUME)
    # V = V0 + k·(P_gas − P) with P_gas = n·R·T/V.
    gas_pressure = 6000.0 * free[1] / volume[1]
    self.assertAlmostEqual(volume[1], constants.ENVELOPE_BASE_VOLUME
                           + constants.ENVELOPE_VOLUME_PER_PA * (gas_pressure - 6000.0))
    self.assertAlmostEqual(superpressure[1], gas_pressure - 6000.0)


class SubstepTest(unittest.TestCase):

  def test_scalar_and_numpy_substeps_agree(self):
    state, atmosphere = _state(3)
    state.pressure = np.array([6500.0, 8000.0, 11000.0])
    state.ambient_temperature = atmosphere.temperature_at_pressure(state.pressure)
    sun = _sun(3)
    pump = np.array([1.0, 0.0, 0.0])
    vent = np.array([0.0, 0.0, 1.0])
    names = physics.EVOLVED
    outputs = physics.substep(
        array_math.NUMPY, atmosphere.temperature_at_pressure,
        *(getattr(state, name) for name in names), pump, vent, sun.airmass_per_pascal[0],
        sun.panel_power[0], sun.sun_heat_factor[0], sun.hotel_load[0], np.full(3, 10.0))
    for index in range(3):
      scalar = physics.substep(
          array_math.SCALAR, atmosphere.scalar_temperature_function(index),
          *(float(getattr(state, name)[index]) for name in names), float(pump[index]),
          float(vent[index]), float(sun.airmass_per_pascal[0, index]),
          float(sun.panel_power[0, index]), float(sun.sun_heat_factor[0, index]),
          float(sun.hotel_load[0, index]), 10.0)
      np.testing.assert_allclose([o[index] for o in outputs], scalar, rtol=1e-12)

  def test_ambient_temperature_lags_one_substep(self):
    # BLE: a sub-step uses the ambient temperature the previous one looked up, and looks
    # up the new one at its own start pressure.
    state, atmosphere = _state(1)
    lagged = state.ambient_temperature + 1.0
    sun = _sun(1)
    args = (state.pressure, state.internal_temperature, state.mols_air, state.volume,
            state.superpressure, state.battery_charge)
    forcing = (np.zeros(1), np.zeros(1), sun.airmass_per_pascal[0], sun.panel_power[0],
               sun.sun_heat_factor[0], sun.hotel_load[0], np.full(1, 10.0))
    current = physics.substep(array_math.NUMPY, atmosphere.temperature_at_pressure, *args,
                              state.ambient_temperature, *forcing)
    late = physics.substep(array_math.NUMPY, atmosphere.temperature_at_pressure, *args, lagged,
                           *forcing)
    np.testing.assert_array_equal(late[6], atmosphere.temperature_at_pressure(state.pressure))
    np.testing.assert_array_equal(late[6], current[6])
    self.assertNotEqual(late[0][0], current[0][0])  # density (so the climb) used the lag

  def test_heavy_balloon_sinks_light_balloon_rises(self):
    state, atmosphere = _state(2, superpressure=None)
    state.mols_air = np.array([4000.0, 0.0])
    sun = _sun(2)
    before = state.pressure.copy()
    physics.advance_slab(state, None, np.zeros(2), np.zeros(2), sun,
                         atmosphere.temperature_at_pressure, np.full(2, 10.0))
    self.assertGreater(state.pressure[0], before[0])  # sinks: pressure rises
    self.assertLess(state.pressure[1], before[1])


class SunForcingTest(unittest.TestCase):

  def test_scalar_matches_numpy(self):
    # Night, dawn near the refraction branches, day with shading; a station by the date line.
    times = 1.36e9 + np.array([0.0, 5.9 * 3600, 6.1 * 3600, 12 * 3600, 17.95 * 3600])
    latitudes = np.array([5.0, -8.0, 0.0, 9.5, 3.0])
    longitudes = np.array([179.99, 0.0, -30.0, 100.0, -179.99])
    x, y = np.array([1e4, -2e5, 0.0, 3e4, 5e3]), np.array([0.0, 1e5, 0.0, -4e4, 2e3])
    drift_x, drift_y = np.array([150.0, -80.0, 0.0, 20.0, 300.0]), np.array([-50.0, 0, 0, 90, 0])
    slab = physics.SunForcing(times, latitudes, longitudes, x, y, drift_x, drift_y)
    for index in range(len(times)):
      one = physics.ScalarSunForcing(*(float(a[index]) for a in (
          times, latitudes, longitudes, x, y, drift_x, drift_y)))
      for name in ('airmass_per_pascal', 'panel_power', 'sun_heat_factor', 'hotel_load'):
        np.testing.assert_allclose(getattr(one, name), getattr(slab, name)[:, index],
                                   rtol=1e-9, atol=1e-12, err_msg=name)
      for got, expected in zip(one.end[:2] + one.end[2], slab.end[:2] + slab.end[2]):
        np.testing.assert_allclose(got, expected[index:index + 1], rtol=1e-12)


class AgentStepTest(unittest.TestCase):

  def test_venting_never_makes_ballonet_negative(self):
    state, atmosphere = _state(2, pressure=6000.0, superpressure=None, mols_air=30.0)
    sun = _sun(2)
    for _ in range(5):
      physics.advance_slab(state, None, np.zeros(2), np.ones(2), sun,
                           atmosphere.temperature_at_pressure, np.full(2, 10.0))
      self.assertTrue(np.all(state.mols_air >= 0.0))
    self.assertTrue(np.all(state.mols_air == 0.0))

  def test_out_of_power_stops_substepping(self):
    state, atmosphere = _state(2)
    state.battery_charge = np.array([0.05, 2000.0])  # night hotel load drains 0.51 Wh/sub-step
    sun = _sun(2, unix=1.36e9 - 43200)
    steps = physics.advance_slab(state, None, np.zeros(2), np.zeros(2), sun,
                                 atmosphere.temperature_at_pressure, np.full(2, 10.0))
    self.assertEqual(state.status[0], constants.STATUS_OUT_OF_POWER)
    self.assertEqual(state.status[1], constants.STATUS_OK)
    np.testing.assert_array_equal(steps, [1.0, 18.0])
    frozen = state.pressure[0]
    physics.advance_slab(state, None, np.zeros(2), np.zeros(2), sun,
                         atmosphere.temperature_at_pressure, np.full(2, 10.0))
    self.assertEqual(state.pressure[0], frozen)

  def test_inactive_balloons_are_left_alone(self):
    state, atmosphere = _state(3)
    before = {name: getattr(state, name).copy() for name in physics.EVOLVED}
    steps = physics.advance_slab(state, np.array([True, False, True]), np.zeros(3), np.zeros(3),
                                 _sun(3), atmosphere.temperature_at_pressure, np.full(3, 10.0))
    np.testing.assert_array_equal(steps, [18.0, 0.0, 18.0])
    np.testing.assert_array_equal(state.status, [constants.STATUS_OK] * 3)
    for name in physics.EVOLVED:
      self.assertEqual(getattr(state, name)[1], before[name][1], name)
    self.assertNotEqual(state.pressure[0], before['pressure'][0])
    self.assertNotEqual(state.battery_charge[0], before['battery_charge'][0])

  def test_status_priority(self):
    status = physics.status_of(np.array([3000.0, -1.0, 3000.0, 100.0]),
                               np.array([10.0, 10.0, 0.0, 10.0]))
    np.testing.assert_array_equal(status, [constants.STATUS_BURST, constants.STATUS_ZEROPRESSURE,
                                           constants.STATUS_OUT_OF_POWER, constants.STATUS_OK])
    self.assertEqual(physics.scalar_status_of(3000.0, 0.0), constants.STATUS_OUT_OF_POWER)

  def test_one_balloon_path_matches_slab(self):
    slab, atmosphere = _state(2)
    slab.pressure = np.array([7000.0, 9500.0])
    single = [_state(1)[0] for _ in range(2)]
    for index in range(2):
      for name in physics.EVOLVED + physics.REPORTED + ('status',):
        getattr(single[index], name)[:] = getattr(slab, name)[index]
    pump, vent = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    sun = _sun(2)
    physics.advance_slab(slab, None, pump, vent, sun, atmosphere.temperature_at_pressure,
                         np.full(2, 10.0))
    for index in range(2):
      one_sun = _sun(1)
      physics.advance_one(single[index], 0, pump[index], vent[index], one_sun,
                          atmosphere.scalar_temperature_function(index), 10.0)
      for name in physics.EVOLVED + ('acs_power',):
        self.assertAlmostEqual(getattr(single[index], name)[0], getattr(slab, name)[index],
                               delta=1e-9 * max(1.0, abs(getattr(slab, name)[index])))


if __name__ == '__main__':
  unittest.main()
