"""How an episode starts: the seeded draws of balloon.md §9, or an explicit `InitialState`.

Episode randomness comes from one numpy Generator per balloon, seeded by that balloon's
episode seed, so the same seed gives the same episode on every machine and in any slab
position. Draw order: α, start time, station latitude, longitude, start radius (Beta),
start angle, start pressure; the simulator then draws the forecast field and the error
field from the same generators (`EpisodeStarts.rngs`).
"""

import dataclasses
import datetime

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import atmosphere as atmosphere_lib

_START_MIN_S = datetime.datetime.fromisoformat(constants.START_TIME_MIN).replace(
    tzinfo=datetime.timezone.utc).timestamp()
_START_MAX_S = datetime.datetime.fromisoformat(constants.START_TIME_MAX).replace(
    tzinfo=datetime.timezone.utc).timestamp()
# Episode seeds at and above this (and below constants.MAX_SEED) are reserved for
# evaluation suites (agents.evaluation maps suite seed s to episode seed
# EVALUATION_SEED_BASE + s); episodes reset without a seed draw below it, so training
# never flies a suite's episode.
EVALUATION_SEED_BASE = 2 ** 62


@dataclasses.dataclass
class InitialState:
  """An explicit episode start, overriding the seeded draws of §9.

  Attributes:
    start_time: UTC start as an aware datetime, or Unix seconds.
    station_lat_deg, station_lng_deg: the station.
    x, y: start offset from the station (m, east and north).
    pressure: start pressure (Pa).
    atmosphere_alpha: α in [0, 1] of the episode's atmosphere.
    upwelling_infrared: W/m².
  """
  start_time: object
  station_lat_deg: float
  station_lng_deg: float
  x: float
  y: float
  pressure: float
  atmosphere_alpha: float = 0.5
  upwelling_infrared: float = constants.UPWELLING_INFRARED

  def unix_time(self):
    """The start time as Unix seconds."""
    if isinstance(self.start_time, datetime.datetime):
      if self.start_time.tzinfo is None:
        raise ValueError('InitialState.start_time must be timezone-aware (UTC), got a naive '
                         f'datetime {self.start_time!r}.')
      return self.start_time.timestamp()
    return float(self.start_time)


def check_seed(seed, where='seed'):
  """Returns `seed` as an int if it is a non-negative integer; raises otherwise."""
  if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
    raise TypeError(f'{where} must be a non-negative integer, got {seed!r} '
                    f'({type(seed).__name__}).')
  if seed < 0 or seed >= constants.MAX_SEED:
    raise ValueError(f'{where} must be a non-negative integer below 2**63, got {seed}.')
  return int(seed)


@dataclasses.dataclass
class EpisodeStarts:
  """The starts of the episodes of one reset, arrays [N], explicit states applied.

  Attributes:
    rngs: the episodes' generators, after the §9 draws (the wind fields draw next).
    alpha: α of each episode's atmosphere; atmosphere: that Atmosphere.
    start: start time (Unix s). latitude, longitude: the station (degrees).
    x, y: start offset from the station (m). pressure: start pressure (Pa).
    infrared: upwelling infrared (W/m²).
  """
  rngs: list
  alpha: np.ndarray
  start: np.ndarray
  latitude: np.ndarray
  longitude: np.ndarray
  x: np.ndarray
  y: np.ndarray
  pressure: np.ndarray
  infrared: np.ndarray
  atmosphere: atmosphere_lib.Atmosphere


def episode_starts(indices, episode_seeds, states):
  """Draws the starts of episodes from their seeds, then applies the explicit states.

  Args:
    indices: the balloons reset, [N] (for messages).
    episode_seeds: int [N], the episodes' seeds.
    states: per balloon an InitialState or None (the seeded draws).

  Raises:
    TypeError / ValueError: naming the balloon's state or the value that is wrong.
  """
  count = len(indices)
  for index, state in zip(indices, states):
    if state is not None and not isinstance(state, InitialState):
      raise TypeError(f'initial state for balloon {index} must be an InitialState, got '
                      f'{type(state).__name__}.')
  rngs = [np.random.default_rng(int(seed)) for seed in episode_seeds]
  draws = np.array([draw_episode(rng) for rng in rngs]).reshape(count, 7)
  alpha, start, latitude, longitude = draws[:, 0], draws[:, 1], draws[:, 2], draws[:, 3]
  radius, angle = draws[:, 4] * constants.START_RADIUS_M, draws[:, 5]
  x, y = radius * np.sin(angle), radius * np.cos(angle)
  infrared = np.full(count, constants.UPWELLING_INFRARED)
  episode_atmosphere = atmosphere_lib.Atmosphere(alpha)
  bottom = episode_atmosphere.pressure_at_height(np.full(count, constants.ALTITUDE_MIN_M))
  pressure = constants.START_MIN_PRESSURE + draws[:, 6] * (bottom - constants.START_MIN_PRESSURE)
  explicit = [row for row, state in enumerate(states) if state is not None]
  for row in explicit:
    state = states[row]
    alpha[row], start[row] = state.atmosphere_alpha, state.unix_time()
    latitude[row], longitude[row] = state.station_lat_deg, state.station_lng_deg
    x[row], y[row], pressure[row] = state.x, state.y, state.pressure
    infrared[row] = state.upwelling_infrared
  if explicit:
    for name, values in (('x', x), ('y', y), ('pressure', pressure), ('start_time', start),
                         ('upwelling_infrared', infrared), ('station_lat_deg', latitude),
                         ('station_lng_deg', longitude)):
      if not np.all(np.isfinite(values)):
        raise ValueError(f'initial state {name} must be finite, got {values.tolist()}.')
    if np.any(pressure <= 0) or np.any(infrared <= 0):
      raise ValueError('initial state pressure and upwelling_infrared must be positive, got '
                       f'{pressure.tolist()} and {infrared.tolist()}.')
    episode_atmosphere = atmosphere_lib.Atmosphere(alpha)
  return EpisodeStarts(rngs, alpha, start, latitude, longitude, x, y, pressure, infrared,
                       episode_atmosphere)


def draw_episode(rng):
  """The seeded draws of §9 for one balloon, in their fixed order.

  Returns:
    (α, start Unix s, station latitude, station longitude, radius fraction (Beta),
    angle (rad), pressure fraction in [0, 1)).
  """
  alpha = rng.uniform(0.0, 1.0)
  start = float(rng.integers(int(_START_MIN_S), int(_START_MAX_S)))
  latitude = rng.uniform(-constants.STATION_MAX_ABS_LATITUDE_DEG,
                         constants.STATION_MAX_ABS_LATITUDE_DEG)
  longitude = rng.uniform(-constants.STATION_MAX_ABS_LONGITUDE_DEG,
                          constants.STATION_MAX_ABS_LONGITUDE_DEG)
  radius = rng.beta(*constants.START_RADIUS_BETA)
  angle = rng.uniform(0.0, 2.0 * np.pi)
  pressure_fraction = rng.uniform(0.0, 1.0)
  return alpha, start, latitude, longitude, radius, angle, pressure_fraction
