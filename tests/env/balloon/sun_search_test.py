"""Tests of agents/env/balloon/physics/sun_search.py: BLE's sunrise search, the snap, the phase.

Agreement with BLE's own answers is in ble_reference_test.py; these check the properties.
"""

import unittest

import numpy as np

from agents.env.balloon.physics import solar, sun_search


def _states(count, seed=0):
  rng = np.random.default_rng(seed)
  time = np.round(1.3e9 + rng.uniform(0.0, 1.3e8, count))
  return time, rng.uniform(-12.0, 12.0, count), rng.uniform(-180.0, 180.0, count)


class NextSunriseSunsetTest(unittest.TestCase):

  def test_on_the_grid_ahead_and_near_the_crossing(self):
    time, latitude, longitude = _states(200)
    sunrise, sunset = sun_search.next_sunrise_sunset(time, latitude, longitude)
    for event in (sunrise, sunset):
      ahead = event - time
      np.testing.assert_array_equal(np.mod(ahead, sun_search.SEARCH_STEP_S), 0.0)
      self.assertTrue(np.all((ahead >= 0.0) & (ahead <= 86400.0)))
    # BLE's bisection may land up to six grid points off the crossing, never further.
    _, _, _, _, to_sunset, to_sunrise = solar.sun_state(time, latitude, longitude)
    self.assertLess(np.abs(np.mod(sunrise - time - to_sunrise + 43200, 86400) - 43200).max(),
                    6.5 * sun_search.SEARCH_STEP_S)
    self.assertLess(np.abs(np.mod(sunset - time - to_sunset + 43200, 86400) - 43200).max(),
                    6.5 * sun_search.SEARCH_STEP_S)


class SnapTest(unittest.TestCase):

  def test_scalar_matches_numpy_and_picks_the_nearest_elevation(self):
    time, latitude, longitude = _states(500, seed=1)
    _, _, _, _, to_sunset, to_sunrise = solar.sun_state(time, latitude, longitude)
    sunset, sunrise = sun_search.snap_to_search_grid(time, latitude, longitude, to_sunset,
                                                     to_sunrise)
    for index in range(len(time)):
      self.assertEqual(sun_search.scalar_snap_to_search_grid(
          time[index], latitude[index], longitude[index], to_sunset[index],
          to_sunrise[index]), (sunset[index], sunrise[index]))
    for snapped in (sunset, sunrise):
      self.assertTrue(np.all(np.mod(snapped, sun_search.SEARCH_STEP_S) == 0.0))
      self.assertTrue(np.all(snapped >= 0.0))
    # The chosen point is no farther in elevation from -4.242° than its neighbours.
    target = -4.242
    for offset in (-sun_search.SEARCH_STEP_S, sun_search.SEARCH_STEP_S):
      here = np.abs(solar.solar_elevation_deg(time + sunrise, latitude, longitude)[0] - target)
      there = np.abs(solar.solar_elevation_deg(time + sunrise + offset, latitude,
                                               longitude)[0] - target)
      self.assertTrue(np.all(here <= there))


class PhaseTest(unittest.TestCase):

  def test_day_and_night_halves(self):
    # Day: sunset in 3 h, sunrise in 15 h (so the last sunrise was 9 h ago, a 12 h day).
    day = sun_search.solar_cycle_phase(np.array([3 * 3600.0]), np.array([15 * 3600.0]))
    self.assertAlmostEqual(day[0], np.pi * 9 / 12, places=9)
    # Night: sunrise in 2 h, sunset in 14 h (last sunset 10 h ago, a 12 h night).
    night = sun_search.solar_cycle_phase(np.array([14 * 3600.0]), np.array([2 * 3600.0]))
    self.assertAlmostEqual(night[0], np.pi + np.pi * 10 / 12, places=9)
    self.assertEqual(sun_search.scalar_solar_cycle_phase(3 * 3600.0, 15 * 3600.0), day[0])
    self.assertEqual(sun_search.scalar_solar_cycle_phase(14 * 3600.0, 2 * 3600.0), night[0])


if __name__ == '__main__':
  unittest.main()
