"""Tests of agents/env/balloon/physics/safety.py: the three safety layers' state machines (§8)."""

import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import safety

DOWN, STAY, UP = constants.DOWN, constants.STAY, constants.UP


def _run_envelope(superpressures, action=DOWN):
  """Feeds one balloon a sequence of superpressures; returns (states, actions)."""
  layers = safety.SafetyLayers(1, power_sun='balloon')
  layers.reset([0], [[1e9, 1e9, 1e9]])  # altitude layer never triggers
  states, actions = [], []
  for superpressure in superpressures:
    actions.append(int(layers.apply(np.array([action]), np.zeros(1), np.array([3600.0]),
                                    np.array([7200.0]), np.array([3000.0]),
                                    np.array([superpressure]), np.array([8000.0]))[0]))
    states.append(int(layers.envelope_state[0]))
  return states, actions


class EnvelopeLayerTest(unittest.TestCase):

  def test_bands_from_nominal(self):
    for superpressure, state, action in (
        (100.0, safety.ENVELOPE_LOW_CRITICAL, UP), (200.0, safety.ENVELOPE_LOW, STAY),
        (280.0, safety.ENVELOPE_NOMINAL, DOWN), (1000.0, safety.ENVELOPE_NOMINAL, DOWN),
        (2100.0, safety.ENVELOPE_NOMINAL, DOWN), (2200.0, safety.ENVELOPE_HIGH, STAY),
        (2300.0, safety.ENVELOPE_HIGH_CRITICAL, UP)):
      self.assertEqual(_run_envelope([superpressure]), ([state], [action]), superpressure)

  def test_low_hysteresis(self):
    states, actions = _run_envelope([200.0, 280.0, 290.0, 310.0])
    self.assertEqual(states, [safety.ENVELOPE_LOW] * 3 + [safety.ENVELOPE_NOMINAL])
    self.assertEqual(actions, [STAY, STAY, STAY, DOWN])
    states, _ = _run_envelope([100.0, 280.0])
    self.assertEqual(states, [safety.ENVELOPE_LOW_CRITICAL, safety.ENVELOPE_LOW])

  def test_high_hysteresis(self):
    states, actions = _run_envelope([2300.0, 2100.0, 2090.0, 2000.0])
    self.assertEqual(states, [safety.ENVELOPE_HIGH_CRITICAL, safety.ENVELOPE_HIGH,
                              safety.ENVELOPE_HIGH, safety.ENVELOPE_NOMINAL])
    self.assertEqual(actions, [UP, STAY, STAY, DOWN])

  def test_up_and_stay_pass_in_low_band(self):
    self.assertEqual(_run_envelope([200.0], UP)[1], [UP])
    self.assertEqual(_run_envelope([200.0], STAY)[1], [STAY])


class AltitudeLayerTest(unittest.TestCase):

  def test_states_and_hysteresis(self):
    thresholds = np.array([[12000.0, 11800.0, 11600.0]])  # 50,000 / 50,500 / 51,000 ft
    state = np.zeros(1, np.int8)
    sequence = []
    for pressure in (11500.0, 11700.0, 12100.0, 11700.0, 11900.0, 11500.0):
      state = safety.altitude_layer_state(state, np.array([pressure]), thresholds)
      sequence.append(int(state[0]))
    self.assertEqual(sequence, [safety.ALTITUDE_NOMINAL, safety.ALTITUDE_NOMINAL,
                                safety.ALTITUDE_VERY_LOW, safety.ALTITUDE_LOW,
                                safety.ALTITUDE_LOW, safety.ALTITUDE_NOMINAL])
    action = safety.effective_action(np.array([DOWN, DOWN]), np.zeros(2, bool),
                                     np.zeros(2, np.int8),
                                     np.array([safety.ALTITUDE_VERY_LOW, safety.ALTITUDE_LOW]))
    np.testing.assert_array_equal(action, [UP, STAY])


class PowerLayerTest(unittest.TestCase):

  def test_pauses_at_night_when_reserve_is_low(self):
    paused = np.zeros(3, bool)
    # Night: sunset in 20 h, sunrise + 30 min in 10.5 h.
    to_sunset, to_sunrise = np.full(3, 20 * 3600.0), np.full(3, 10.5 * 3600.0)
    needed = constants.HOTEL_LOAD_NIGHT_W * 10.5
    charge = np.array([needed + 0.02 * constants.BATTERY_CAPACITY_WH,
                       needed + 0.03 * constants.BATTERY_CAPACITY_WH, 3000.0])
    paused = safety.power_layer_paused(paused, to_sunset, to_sunrise, charge)
    np.testing.assert_array_equal(paused, [True, False, False])
    # Paused stays paused through the night, whatever the charge.
    paused = safety.power_layer_paused(paused, to_sunset, to_sunrise, np.full(3, 3000.0))
    np.testing.assert_array_equal(paused, [True, False, False])

  def test_day_unpauses_unless_charge_below_five_percent(self):
    paused = np.ones(2, bool)
    to_sunset, to_sunrise = np.full(2, 5 * 3600.0), np.full(2, 15.5 * 3600.0)
    charge = np.array([0.04, 0.06]) * constants.BATTERY_CAPACITY_WH
    np.testing.assert_array_equal(
        safety.power_layer_paused(paused, to_sunset, to_sunrise, charge), [True, False])

  def test_first_half_hour_after_sunrise_counts_as_night(self):
    # 'balloon' mode, 10 minutes after sunrise: next sunrise in ~23.8 h, sunrise + 30 min
    # in 20 min.
    layers = safety.SafetyLayers(1, power_sun='balloon')
    to_sunset, to_delayed = layers.power_sun_times(np.zeros(1), np.array([11 * 3600.0]),
                                                   np.array([86400.0 - 600.0]))
    self.assertAlmostEqual(to_delayed[0], 1200.0)
    paused = safety.power_layer_paused(np.zeros(1, bool), to_sunset, to_delayed,
                                       np.array([10.0]))
    self.assertTrue(paused[0])

  def test_episode_start_mode_adds_whole_days(self):
    # BLE: sunrise and sunset fixed at the start, then advanced by whole days only.
    layers = safety.SafetyLayers(2)
    start = 1.0e9
    layers.reset([0, 1], [[1e9] * 3] * 2, sunrise=np.full(2, start + 3600.0),
                 sunset=np.full(2, start + 13 * 3600.0))
    to_sunset, to_delayed = layers.power_sun_times(np.full(2, start), None, None)
    np.testing.assert_array_equal(to_delayed, [5400.0, 5400.0])
    np.testing.assert_array_equal(to_sunset, [13 * 3600.0] * 2)
    # 2.5 days on: sunrise (+30 min) moved 3 days on, sunset 2 days on.
    now = np.array([start + 2.5 * 86400.0, start + 5400.0])
    to_sunset, to_delayed = layers.power_sun_times(now, None, None)
    np.testing.assert_array_equal(to_delayed, [5400.0 + 0.5 * 86400.0, 0.0])
    np.testing.assert_array_equal(to_sunset, [13 * 3600.0 - 0.5 * 86400.0, 13 * 3600.0 - 5400.0])
    # Exactly at sunrise + 30 min it is still night (BLE advances only when now > it).
    self.assertTrue(safety.power_layer_paused(np.zeros(1, bool), to_sunset[1:], to_delayed[1:],
                                              np.array([10.0]))[0])

  def test_episode_start_mode_needs_the_sun_times(self):
    with self.assertRaisesRegex(ValueError, 'sunrise and sunset'):
      safety.SafetyLayers(1).reset([0], [[1e9] * 3])
    with self.assertRaisesRegex(ValueError, 'power_sun'):
      safety.SafetyLayers(1, power_sun='station')

  def test_paused_turns_down_into_stay_only(self):
    action = safety.effective_action(np.array([DOWN, UP, STAY]), np.ones(3, bool),
                                     np.zeros(3, np.int8), np.zeros(3, np.int8))
    np.testing.assert_array_equal(action, [STAY, UP, STAY])

  def test_navigation_paused_and_inactive_balloons(self):
    layers = safety.SafetyLayers(2, power_sun='balloon')
    layers.reset([0, 1], [[1e9] * 3] * 2)
    layers.apply(np.array([DOWN, DOWN]), np.zeros(2), np.full(2, 3600.0), np.full(2, 7200.0),
                 np.full(2, 3000.0), np.array([100.0, 100.0]), np.full(2, 8000.0),
                 active=np.array([True, False]))
    np.testing.assert_array_equal(layers.navigation_paused, [True, False])


if __name__ == '__main__':
  unittest.main()
