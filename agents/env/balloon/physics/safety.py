"""The three safety layers' state machines, vectorised over a slab (balloon.md §8).

Once per agent step, in this order, each layer may change the commanded action:

1. Power: keeps the next sunrise (+30 min) and sunset ahead of now. At night, unless
   already paused, it pauses when (charge − 183.7 W × hours to sunrise+30 min)/capacity
   < 0.025; by day it unpauses unless paused with charge below 5 %. While paused, DOWN
   becomes STAY. As in BLE (the default, `power_sun='episode_start'`), sunrise and sunset
   are found once per episode at the start position and time (sun_search, BLE's
   3-minute search) and then only advanced by whole days; `power_sun='balloon'` instead
   uses each step's sunrise and sunset at the balloon's current position (physically
   better: after a 2° drift in longitude the two differ by about 7 minutes, enough to
   change when the layer pauses; not BLE).
2. Envelope, on superpressure with hysteresis (states NOMINAL, LOW_CRITICAL, LOW, HIGH,
   HIGH_CRITICAL): critical states force UP, LOW and HIGH turn DOWN into STAY.
3. Altitude (NOMINAL, LOW, VERY_LOW): below 50,000 ft force UP, below 50,500 ft DOWN
   becomes STAY, below 51,000 ft stay LOW if already there.

The altitude thresholds are compared in pressure (altitude falls as pressure rises),
with each balloon's pressures at 50,000, 50,500 and 51,000 ft precomputed per episode.
"""

import numpy as np

from agents.env.balloon import constants

ENVELOPE_NOMINAL, ENVELOPE_LOW_CRITICAL, ENVELOPE_LOW, ENVELOPE_HIGH, ENVELOPE_HIGH_CRITICAL = (
    0, 1, 2, 3, 4)
ALTITUDE_NOMINAL, ALTITUDE_LOW, ALTITUDE_VERY_LOW = 0, 1, 2

_CRITICAL = constants.ENVELOPE_CRITICAL_BUFFER_PA
_BUFFER = constants.ENVELOPE_BUFFER_PA
_HYSTERESIS = constants.ENVELOPE_RESTART_HYSTERESIS_PA
_MAX = constants.BURST_SUPERPRESSURE
# Superpressure thresholds, ascending: 150, 250, 300, 2080, 2130, 2230 Pa.
ENVELOPE_THRESHOLDS = (_CRITICAL, _BUFFER, _BUFFER + _HYSTERESIS, _MAX - _BUFFER - _HYSTERESIS,
                       _MAX - _BUFFER, _MAX - _CRITICAL)
ALTITUDE_THRESHOLDS_M = (
    constants.ALTITUDE_MIN_M, constants.ALTITUDE_MIN_M + constants.ALTITUDE_BUFFER_M,
    constants.ALTITUDE_MIN_M + constants.ALTITUDE_BUFFER_M
    + constants.ALTITUDE_RESTART_HYSTERESIS_M)


POWER_SUN_MODES = ('episode_start', 'balloon')
_DAY_S = 86400.0


class SafetyLayers:
  """State of the three layers for a slab of balloons.

  Attributes:
    power_paused: bool [B].
    envelope_state: int8 [B], one of the ENVELOPE_* states.
    altitude_state: int8 [B], one of the ALTITUDE_* states.
    altitude_pressures: float64 [B, 3], pressures at 50,000, 50,500 and 51,000 ft.
    power_sun: 'episode_start' (BLE) or 'balloon' (see the module docstring).
    delayed_sunrise, sunset: float64 [B], Unix seconds of the power layer's next
      sunrise + 30 min and next sunset ('episode_start' mode).
  """

  def __init__(self, num_balloons, power_sun='episode_start'):
    if power_sun not in POWER_SUN_MODES:
      raise ValueError(f'power_sun must be one of {POWER_SUN_MODES}, got {power_sun!r}.')
    self.power_sun = power_sun
    self.power_paused = np.zeros(num_balloons, bool)
    self.envelope_state = np.zeros(num_balloons, np.int8)
    self.altitude_state = np.zeros(num_balloons, np.int8)
    self.altitude_pressures = np.zeros((num_balloons, 3))
    self.delayed_sunrise = np.zeros(num_balloons)
    self.sunset = np.zeros(num_balloons)

  def reset(self, indices, altitude_pressures, sunrise=None, sunset=None):
    """Puts balloons `indices` back in the nominal states (new episodes).

    Args:
      indices: the balloons.
      altitude_pressures: [len(indices), 3], pressures at the altitude thresholds.
      sunrise, sunset: Unix seconds of the next sunrise and sunset at the episode's start
        position and time (sun_search.next_sunrise_sunset); needed in 'episode_start'
        mode.
    """
    self.power_paused[indices] = False
    self.envelope_state[indices] = ENVELOPE_NOMINAL
    self.altitude_state[indices] = ALTITUDE_NOMINAL
    self.altitude_pressures[indices] = altitude_pressures
    if sunrise is not None:
      self.delayed_sunrise[indices] = np.asarray(sunrise) + (
          constants.POWER_SAFETY_SUNRISE_DELAY_S)
      self.sunset[indices] = sunset
    elif self.power_sun == 'episode_start':
      raise ValueError("SafetyLayers.reset needs sunrise and sunset in 'episode_start' mode.")

  def power_sun_times(self, now, seconds_to_sunset, seconds_to_sunrise):
    """Seconds from `now` to the power layer's next sunset and next sunrise + 30 min.

    In 'episode_start' mode the stored times first advance by whole days until they are
    not before `now` (BLE: `while date_time > sunrise: sunrise += 1 day`); in 'balloon'
    mode the given times at the balloon's position are used.
    """
    if self.power_sun == 'balloon':
      return seconds_to_sunset, np.mod(
          seconds_to_sunrise + constants.POWER_SAFETY_SUNRISE_DELAY_S, _DAY_S)
    for times in (self.delayed_sunrise, self.sunset):
      behind = now > times
      if behind.any():
        times += np.where(behind, _DAY_S * np.ceil((now - times) / _DAY_S), 0.0)
    return self.sunset - now, self.delayed_sunrise - now

  @property
  def navigation_paused(self):
    """bool [B]: whether any layer is not nominal (observation features 11, 12)."""
    return (self.power_paused | (self.envelope_state != ENVELOPE_NOMINAL)
            | (self.altitude_state != ALTITUDE_NOMINAL))

  def apply(self, action, now, seconds_to_sunset, seconds_to_sunrise, battery_charge,
            superpressure, pressure, active=None):
    """Advances the three state machines and returns the effective action.

    Args:
      action: int [B] commanded actions (0 DOWN, 1 STAY, 2 UP).
      now: float64 [B], Unix seconds of the agent step's start.
      seconds_to_sunset, seconds_to_sunrise: float64 [B], to the next sunset and sunrise at
        the balloon's position (used in 'balloon' mode only).
      battery_charge: float64 [B], Wh.
      superpressure, pressure: float64 [B], Pa.
      active: optional bool [B]; balloons outside it keep their layer states.

    Returns:
      int64 [B]: the effective action.
    """
    action = np.asarray(action, np.int64)
    to_sunset, to_delayed_sunrise = self.power_sun_times(now, seconds_to_sunset,
                                                         seconds_to_sunrise)
    paused = power_layer_paused(self.power_paused, to_sunset, to_delayed_sunrise,
                                battery_charge)
    envelope = envelope_layer_state(self.envelope_state, superpressure)
    altitude = altitude_layer_state(self.altitude_state, pressure, self.altitude_pressures)
    if active is None:
      self.power_paused, self.envelope_state, self.altitude_state = paused, envelope, altitude
    else:
      np.copyto(self.power_paused, paused, where=active)
      np.copyto(self.envelope_state, envelope, where=active)
      np.copyto(self.altitude_state, altitude, where=active)
    return effective_action(action, self.power_paused, self.envelope_state, self.altitude_state)


def power_layer_paused(paused, seconds_to_sunset, seconds_to_delayed_sunrise, battery_charge):
  """The power layer's next paused flag (§8.1).

  Args:
    paused: bool [B], the current flag.
    seconds_to_sunset, seconds_to_delayed_sunrise: float64 [B], from now to the next sunset
      and to the next sunrise + 30 min (`SafetyLayers.power_sun_times`).
    battery_charge: float64 [B], Wh.
  """
  # Night: the next sunset is not before the next (sunrise + 30 min) (BLE: day when
  # sunset < sunrise + 30 min).
  night = seconds_to_sunset >= seconds_to_delayed_sunrise
  needed = constants.HOTEL_LOAD_NIGHT_W * (seconds_to_delayed_sunrise / 3600.0)
  low_reserve = ((battery_charge - needed) / constants.BATTERY_CAPACITY_WH
                 < constants.POWER_SAFETY_MIN_SOC)
  pause = night & ~paused & low_reserve
  still_low = paused & (battery_charge / constants.BATTERY_CAPACITY_WH
                        < constants.POWER_SAFETY_RESTART_SOC)
  unpause = ~night & ~still_low
  return (paused | pause) & ~unpause


def _envelope_transitions():
  """Next state by [superpressure band, current state], BLE's first-match transitions."""
  states = 5
  table = np.empty((len(ENVELOPE_THRESHOLDS) + 1, states), np.int8)
  table[0] = ENVELOPE_LOW_CRITICAL            # < 150 Pa
  table[1] = ENVELOPE_LOW                     # < 250 Pa
  table[2] = ENVELOPE_NOMINAL                 # < 300 Pa: stay low if already low
  table[2, [ENVELOPE_LOW_CRITICAL, ENVELOPE_LOW]] = ENVELOPE_LOW
  table[3] = ENVELOPE_NOMINAL                 # < 2080 Pa
  table[4] = ENVELOPE_NOMINAL                 # < 2130 Pa: stay high if already high
  table[4, [ENVELOPE_HIGH, ENVELOPE_HIGH_CRITICAL]] = ENVELOPE_HIGH
  table[5] = ENVELOPE_HIGH                    # < 2230 Pa
  table[6] = ENVELOPE_HIGH_CRITICAL           # above
  return table


_ENVELOPE_TRANSITIONS = _envelope_transitions()
_ENVELOPE_THRESHOLDS_ARRAY = np.asarray(ENVELOPE_THRESHOLDS)


def envelope_layer_state(state, superpressure):
  """The envelope layer's next state (§8.2); transitions in BLE's first-match order."""
  band = np.searchsorted(_ENVELOPE_THRESHOLDS_ARRAY, superpressure, side='right')
  return _ENVELOPE_TRANSITIONS[band, state]


def altitude_layer_state(state, pressure, altitude_pressures):
  """The altitude layer's next state (§8.3), comparing pressure with the thresholds."""
  very_low = pressure > altitude_pressures[:, 0]
  low = pressure > altitude_pressures[:, 1]
  low_nominal = pressure > altitude_pressures[:, 2]
  was_low = state != ALTITUDE_NOMINAL
  return np.where(very_low, ALTITUDE_VERY_LOW,
                  np.where(low | (low_nominal & was_low), ALTITUDE_LOW,
                           ALTITUDE_NOMINAL)).astype(np.int8)


# Per envelope state: whether it forces UP, whether it turns DOWN into STAY.
_ENVELOPE_FORCES_UP = np.array([False, True, False, False, True])
_ENVELOPE_BLOCKS_DESCENT = np.array([False, False, True, True, False])


def effective_action(action, power_paused, envelope_state, altitude_state):
  """Combines the layers in order: power, envelope, altitude (later layers override)."""
  no_descent = (power_paused | _ENVELOPE_BLOCKS_DESCENT[envelope_state]
                | (altitude_state == ALTITUDE_LOW))
  force_up = _ENVELOPE_FORCES_UP[envelope_state] | (altitude_state == ALTITUDE_VERY_LOW)
  action = np.where(no_descent & (action == constants.DOWN), constants.STAY, action)
  return np.where(force_up, constants.UP, action)
