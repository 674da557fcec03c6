"""The station-keeping reward (balloon.md §12), vectorised.

Reward 1 within 50 km of the station, 0.4·2^(−(d − 50)/100) beyond; when the last command
was DOWN and there is no excess energy it is multiplied by
0.95 − 0.3·clip((ACS power − 100)/200, 0, 1), the ACS power being that of the last
sub-step (0 when a safety layer cancelled the descent).
"""

import numpy as np

from agents.env.balloon import array_math, constants


def station_keeping_reward(distance_km, last_command, excess_energy, acs_power):
  """Returns the reward of each balloon.

  Args:
    distance_km: float64 [B], distance to the station.
    last_command: int [B], the commanded action (0 DOWN, 1 STAY, 2 UP).
    excess_energy: bool [B].
    acs_power: float64 [B], W, of the last sub-step.

  Returns:
    float64 [B].
  """
  outside = constants.REWARD_DROPOFF * np.exp2(
      -(distance_km - constants.STATION_RADIUS_KM) / constants.REWARD_HALFLIFE_KM)
  reward = np.where(distance_km <= constants.STATION_RADIUS_KM, 1.0, outside)
  scale = array_math.clip((acs_power - 100.0) / 200.0, 0.0, 1.0)
  multiplier = (constants.DESCENT_PENALTY_MAX_MULTIPLIER
                - constants.DESCENT_PENALTY_SKEW * scale)
  penalised = (np.asarray(last_command) == constants.DOWN) & ~np.asarray(excess_energy, bool)
  return np.where(penalised, reward * multiplier, reward)
