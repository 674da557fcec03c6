"""Baseline controllers as numpy policies over a batch of observations (balloon.md §14).

Each policy maps observations float [B, 1099] to actions int [B] (0 DOWN, 1 STAY, 2 UP)
with array operations over the batch:

- `station_seeker`: BLE's StationSeeker score over the wind column.
- `RandomWalkPolicy`: steers towards a target pressure that random-walks.

`time_within_radius` and `evaluate` measure TWR50 (the fraction of the 960 steps
spent within 50 km) on a vector slab.
"""

import math

import numba
import numpy as np

from agents.env.balloon import constants

# StationSeeker constants (Bellemare et al. 2020; BLE's station_seeker_agent).
_HALF_RADIUS_KM = 35.0
_MAGNITUDE_WEIGHT = 0.07
_CLOSE_BEARING_WEIGHT, _FAR_BEARING_WEIGHT = 0.6, 0.45
_CLOSE_BEARING_KM, _FAR_BEARING_KM = 250.0, 500.0
_DEFAULT_SCORE = 0.5
_HYSTERESIS_K2, _HYSTERESIS_K3 = 0.05, 0.001
_CONFIDENCE_EPSILON = 0.01


# The hysteresis term of every column level: a small bonus for levels near the balloon.
_HYSTERESIS = _HYSTERESIS_K2 * np.exp(
    -_HYSTERESIS_K3 * np.abs(np.arange(constants.NUM_COLUMN_LEVELS)
                             - constants.BALLOON_COLUMN_INDEX))


def station_seeker_scores(observations):
  """The StationSeeker score of every column level, float [B, 361]; −inf where invalid."""
  observations = _checked(observations)
  scores = np.empty((len(observations), constants.NUM_COLUMN_LEVELS))
  _scores(observations, _HYSTERESIS, scores)
  return scores


def station_seeker(observations):
  """StationSeeker actions [B]: head for the best-scoring level (STAY if none is valid).

  One compiled pass over each row: the scores of `station_seeker_scores` are computed
  and compared level by level, never stored (the evaluation of many balloons feels the
  difference from a chain of array operations).
  """
  observations = _checked(observations)
  actions = np.empty(len(observations), np.int64)
  _actions(observations, _HYSTERESIS, actions)
  return actions


def _checked(observations):
  """Observations as a C-ordered float array [B, 1099]; ValueError for another shape."""
  observations = np.asarray(observations)
  if observations.ndim != 2 or observations.shape[1] != constants.OBSERVATION_SIZE:
    raise ValueError(f'observations must have shape [B, {constants.OBSERVATION_SIZE}], got '
                     f'{observations.shape}.')
  if observations.dtype not in (np.float32, np.float64):
    observations = observations.astype(np.float64)
  return np.ascontiguousarray(observations)


@numba.njit(cache=True, inline='always')
def _row_weights(observations, row):
  """(alpha, bearing weight) of a row: how much speed and bearing count at its distance."""
  distance_feature = np.float64(observations[row, 7])
  distance_km = constants.DISTANCE_SQUASH_KM * distance_feature / (1.0 - distance_feature)
  alpha = math.exp(-distance_km / _HALF_RADIUS_KM)
  bearing_weight = _CLOSE_BEARING_WEIGHT + min(max(
      (distance_km - _CLOSE_BEARING_KM) / (_FAR_BEARING_KM - _CLOSE_BEARING_KM), 0.0),
      1.0) * (_FAR_BEARING_WEIGHT - _CLOSE_BEARING_WEIGHT)
  return alpha, bearing_weight


@numba.njit(cache=True, inline='always')
def _level_score(observations, row, level, alpha, bearing_weight, hysteresis):
  """The score of one column level of a row, in float64; −inf for padding."""
  start = constants.NUM_AMBIENT_FEATURES + 3 * level
  uncertainty = np.float64(observations[row, start])
  bearing_feature = np.float64(observations[row, start + 1])
  speed_feature = np.float64(observations[row, start + 2])
  if speed_feature == 1.0 and bearing_feature == 1.0 and uncertainty == 0.0:
    return -math.inf  # Padding: never a candidate.
  if speed_feature == 1.0:
    speed = math.inf
  else:
    speed = constants.WIND_SPEED_SQUASH * speed_feature / (1.0 - speed_feature)
  wind_score = ((1.0 - alpha) * math.exp(-bearing_weight * (bearing_feature * np.pi))
                + alpha * math.exp(-_MAGNITUDE_WEIGHT * speed))
  return ((1.0 - uncertainty + _CONFIDENCE_EPSILON) * wind_score
          + _DEFAULT_SCORE * uncertainty + hysteresis[level])


@numba.njit(cache=True)
def _scores(observations, hysteresis, scores):
  for row in range(observations.shape[0]):
    alpha, bearing_weight = _row_weights(observations, row)
    for level in range(hysteresis.shape[0]):
      scores[row, level] = _level_score(observations, row, level, alpha, bearing_weight,
                                        hysteresis)


@numba.njit(cache=True)
def _actions(observations, hysteresis, actions):
  center = constants.BALLOON_COLUMN_INDEX
  for row in range(observations.shape[0]):
    alpha, bearing_weight = _row_weights(observations, row)
    best_score, best = -math.inf, -1  # The first level of the best score.
    for level in range(hysteresis.shape[0]):
      score = _level_score(observations, row, level, alpha, bearing_weight, hysteresis)
      if score > best_score:
        best_score, best = score, level
    # Lower column index = lower pressure = higher up.
    if best < 0 or best == center:
      actions[row] = constants.STAY
    elif best < center:
      actions[row] = constants.UP
    else:
      actions[row] = constants.DOWN


class RandomWalkPolicy:
  """BLE's random-walk controller, for a batch of balloons.

  The target pressure starts U(6500, 11400) Pa; every step it moves by a Gaussian step
  whose standard deviation is 0.1666 Pa/s times the time elapsed in the episode (BLE's
  rule: the spread grows with time). Command UP if P − 100 > target, DOWN if
  P + 100 < target, else STAY.
  """

  def __init__(self, num_balloons, seed=0):
    self._rng = np.random.default_rng(seed)
    self._target = np.zeros(num_balloons)
    self._elapsed_s = np.zeros(num_balloons)
    self.begin_episode(np.arange(num_balloons))

  def begin_episode(self, indices):
    """Draws new targets for balloons `indices` (their first action comes from __call__)."""
    indices = np.asarray(indices, np.intp)
    self._target[indices] = self._rng.uniform(6500.0, 11400.0, len(indices))
    self._elapsed_s[indices] = -constants.AGENT_STEP_S  # the first call is not a step

  def __call__(self, observations):
    """Actions [B] for observations [B, 1099]."""
    observations = np.asarray(observations)
    self._elapsed_s += constants.AGENT_STEP_S
    self._target += self._elapsed_s * 0.1666 * self._rng.standard_normal(len(self._target))
    pressure = constants.COLUMN_MIN_PRESSURE + observations[:, 0] * (
        constants.COLUMN_MAX_PRESSURE - constants.COLUMN_MIN_PRESSURE)
    return np.where(pressure - 100.0 > self._target, constants.UP,
                    np.where(pressure + 100.0 < self._target, constants.DOWN,
                             constants.STAY)).astype(np.int64)


class StationSeekerPolicy:
  """`station_seeker` with the policy interface of the others."""

  def __init__(self, num_balloons=None, seed=None):
    del num_balloons, seed

  def begin_episode(self, indices):
    """Stateless."""
    del indices

  def __call__(self, observations):
    return station_seeker(observations)
