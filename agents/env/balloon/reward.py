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

from agents.env.balloon import array_math, constants

# BLE writes ln 2 as this literal.
_BLE_LN2 = 0.69314718056


def station_keeping_reward(x, y, last_command, excess_energy, acs_power):
  """Returns the reward of each balloon.

  Args:
    x, y: float64 [B], position relative to the station (m).
    last_command: int [B], the commanded action (0 DOWN, 1 STAY, 2 UP).
    excess_energy: bool [B].
    acs_power: float64 [B], W, of the last sub-step.

  Returns:
    float64 [B].
  """
  x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
  distance_m = np.sqrt(x * x + y * y)
  radius_m = constants.STATION_RADIUS_KM * 1000.0
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
