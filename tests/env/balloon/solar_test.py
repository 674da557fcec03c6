"""Tests of agents/env/balloon/physics/solar.py: solar power check values and sun events (§5)."""

import datetime
import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import solar


def _unix(*args):
  return datetime.datetime(*args, tzinfo=datetime.timezone.utc).timestamp()


class SolarPowerTest(unittest.TestCase):

  def test_spec_check_values(self):
    elevations = np.array([0.0, 10.0, 20.0, 30.0, 35.0, 45.0, 60.0, 90.0])
    expected = np.array([489, 914, 1057, 1143, 972, 524, 508, 373])
    np.testing.assert_allclose(solar.solar_power(elevations, 6000.0), expected, atol=1.0)

  def test_no_power_below_horizon_dip(self):
    self.assertEqual(float(solar.solar_power(-5.0, 6000.0)), 0.0)
    self.assertGreater(float(solar.solar_power(-4.0, 6000.0)), 0.0)


class SunPositionTest(unittest.TestCase):

  def test_equinox_noon_is_overhead_at_equator(self):
    # Around the March equinox the sun culminates almost at the zenith on the equator.
    times = _unix(2012, 3, 20, 0) + np.arange(0, 86400, 60.0)
    elevation, _, flux = solar.solar_position(times, 0.0, 0.0)
    self.assertGreater(elevation.max(), 89.0)
    self.assertAlmostEqual(times[elevation.argmax()] % 86400 / 3600.0, 12.1, delta=0.2)
    self.assertTrue(np.all((flux > 1300) & (flux < 1420)))

  def test_sun_cycle_matches_elevation(self):
    times = _unix(2013, 7, 1, 0) + np.arange(0, 2 * 86400, 180.0)
    latitude, longitude = np.full(times.shape, 7.0), np.full(times.shape, -120.0)
    elevation, _, _ = solar.solar_position(times, latitude, longitude)
    is_day, phase, to_sunset, to_sunrise = solar.sun_cycle(times, latitude, longitude)
    by_elevation = elevation > constants.DAYTIME_MIN_ELEVATION_DEG
    # The closed form agrees with the elevation except within a minute of the events.
    disagree = is_day != by_elevation
    self.assertLessEqual(disagree.sum(), 2)
    self.assertTrue(np.all((phase >= 0) & (phase < 2 * np.pi + 1e-9)))
    self.assertTrue(np.all(phase[is_day] <= np.pi + 1e-9))
    self.assertTrue(np.all(phase[~is_day] >= np.pi - 1e-9))
    # At the predicted sunset the refracted elevation is at the -4.242° threshold.
    sunset_elevation, _, _ = solar.solar_position(times + to_sunset, latitude, longitude)
    sunrise_elevation, _, _ = solar.solar_position(times + to_sunrise, latitude, longitude)
    np.testing.assert_allclose(sunset_elevation, constants.DAYTIME_MIN_ELEVATION_DEG, atol=0.1)
    np.testing.assert_allclose(sunrise_elevation, constants.DAYTIME_MIN_ELEVATION_DEG, atol=0.1)
    self.assertTrue(np.all((to_sunset > 0) & (to_sunset <= 86400)))

  def test_scalar_sun_state_matches_numpy(self):
    times = _unix(2013, 7, 1, 0) + np.arange(0, 86400, 997.0)
    latitude, longitude = np.full(times.shape, -6.0), np.full(times.shape, 150.0)
    expected = solar.sun_state(times, latitude, longitude)
    for index in range(len(times)):
      got = solar.scalar_sun_state(float(times[index]), -6.0, 150.0)
      for value, reference in zip(got, expected):
        self.assertAlmostEqual(float(value), float(reference[index]), places=9)

  def test_latlng_from_offset(self):
    latitude, longitude = solar.latlng_from_offset(0.0, 10.0, 0.0, 111195.0)
    self.assertAlmostEqual(float(latitude), 1.0, places=3)
    self.assertAlmostEqual(float(longitude), 10.0, places=6)
    latitude, longitude = solar.latlng_from_offset(0.0, 179.9, 111195.0, 0.0)
    self.assertAlmostEqual(float(longitude), -179.1, places=3)


if __name__ == '__main__':
  unittest.main()
