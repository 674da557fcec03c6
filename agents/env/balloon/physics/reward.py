"""The station-keeping reward (balloon.md §12), vectorised.

Reward 1 within 50 km of the station, 0.4·2^(−(d − 50)/100) beyond; when the last command
was DOWN and there is no excess energy it is multiplied by
0.95 − 0.3·clip((ACS power − 100)/200, 0, 1), the ACS power being that of the last
sub-step (0 when a safety layer cancelled the descent).

The arithmetic follows BLE's `perciatelli_reward_function` operation by operation (the
distance as sqrt(x² + y²) in metres, 2^(−·) as exp(−0.69314718056/100·km) with BLE's
rounded ln 2), and with libm's exp, so
rewards agree with BLE's to the last bit, not just to 1e-16.
"""

import math

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import array_math

# BLE writes ln 2 as this literal.
_BLE_LN2 = 0.69314718056


def station_keeping_reward(x, y, last_command, excess_energy, acs_power,
                           radius_km=constants.STATION_RADIUS_KM):
  """Returns the reward of each balloon.

  Args:
    x, y: float64 [B], position relative to the station (m).
    last_command: int [B], the commanded action (0 DOWN, 1 STAY, 2 UP).
    excess_energy: bool [B].
    acs_power: float64 [B], W, of the last sub-step.
    radius_km: the station-keeping radius (BLE's `station_keeping_radius_km`, 50).

  Returns:
    float64 [B].
  """
  x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
  distance_m = np.sqrt(x * x + y * y)
  radius_m = radius_km * 1000.0
  exponent = -_BLE_LN2 / constants.REWARD_HALFLIFE_KM * ((distance_m - radius_m) / 1000.0)
  # math.exp (correctly rounded libm, as BLE) rather than numpy's SIMD exp, which differs
  # by one ulp now and then; B calls of about 50 ns.
  outside = constants.REWARD_DROPOFF * np.array([math.exp(value) for value in exponent.tolist()])
  reward = np.where(distance_m <= radius_m, 1.0, outside)
  scale = array_math.clip((acs_power - 100.0) / 200.0, 0.0, 1.0)
  multiplier = (constants.DESCENT_PENALTY_MAX_MULTIPLIER
                - constants.DESCENT_PENALTY_SKEW * scale)
  penalised = (np.asarray(last_command) == constants.DOWN) & ~np.asarray(excess_energy, bool)
  return np.where(penalised, reward * multiplier, reward)


def distance_reward(distance_km, dtype=np.float64):
  """The reward's distance term over any array: 1 within 50 km, 0.4·2^(−(d − 50)/100) beyond.

  Vectorised numpy arithmetic for planners' rollouts (planner.py), which score many
  imagined positions a step: it agrees with `station_keeping_reward` (no descent penalty)
  to rounding, not to the last bit, and is far cheaper on large arrays (in `dtype`,
  float64 by default; float32 for the largest).
  """
  distance_km = np.asarray(distance_km, dtype)
  beyond_km = np.maximum(distance_km - dtype(constants.STATION_RADIUS_KM), dtype(0.0))
  dropoff = dtype(constants.REWARD_DROPOFF) * dtype(2.0) ** (
      -beyond_km / dtype(constants.REWARD_HALFLIFE_KM))
  return np.where(distance_km <= dtype(constants.STATION_RADIUS_KM), dtype(1.0), dropoff)


def check_progress_weight(weight):
  """Returns the shaping weight as a float; raises naming it unless finite and >= 0."""
  if isinstance(weight, bool) or not isinstance(weight, (int, float, np.integer, np.floating)):
    raise TypeError(f'progress_reward must be a number (reward per km gained toward the '
                    f'station), got {weight!r}.')
  if not math.isfinite(weight) or weight < 0:
    raise ValueError(f'progress_reward must be finite and >= 0, got {weight!r}.')
  return float(weight)


def progress_bonus(distance_before_km, distance_after_km, weight):
  """The optional shaped training term: `weight` per km gained toward the station.

  A potential-based shaping term (Ng, Harada and Russell, 1999) with potential
  −weight · distance and no discount: over an episode it sums to weight · (first − last
  distance), so it rewards ending closer but cannot be farmed by circling. Unlike BLE's
  reward, which is flat within 50 km, it tells the agent at every step and everywhere
  whether the wind it chose carried it toward the station.
  """
  return weight * (np.asarray(distance_before_km) - np.asarray(distance_after_km))
