"""BLE's 3-minute search for the next sunrise and sunset, vectorised over balloons.

BLE's power safety layer asks, once at the start of an episode and at the start
position, for the next sunrise and sunset (`solar.get_next_sunrise_sunset`), then only adds
whole days to them. BLE finds them by bisection on a grid of 3-minute steps from the
query time: first the next solar noon and midnight (extrema of the elevation), then the
grid points where the refracted elevation is nearest −4.242° between them. Its results
therefore lie on the grid start + k·180 s, which is also the grid of agent steps, and the
bisection (which compares the objective at the two ends of the bracket) is reproduced here
step for step, so that the power layer's night and day switch at the same agent step as
BLE's. The closed form of solar.sun_state (used by the observation) can differ from it by
one grid point.

    sunrise, sunset = sun_search.next_sunrise_sunset(unix_time_s, latitude_deg, longitude_deg)
"""

import math

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import array_math, solar

SEARCH_STEP_S = 180.0  # BLE's _SEARCH_TIME_DELTA: 3 minutes
_HALF_DAY_S = 12 * 3600.0
_DAY_S = 24 * 3600.0


def _elevation(unix_time_s, latitude_deg, longitude_deg):
  return solar.solar_elevation_deg(unix_time_s, latitude_deg, longitude_deg)[0]


def _is_afternoon(unix_time_s, latitude_deg, longitude_deg):
  """BLE's is_solar_afternoon: the elevation falls over the next second."""
  return (_elevation(unix_time_s + 1.0, latitude_deg, longitude_deg)
          < _elevation(unix_time_s, latitude_deg, longitude_deg))


def _bisect(start, stop, latitude_deg, longitude_deg, objective):
  """BLE's _find_solar_elevation_binary_search on arrays: the grid time start + k·180 s
  in [start, stop] that its bisection picks as the minimum of objective(elevation)."""
  steps = np.floor((stop - start) / SEARCH_STEP_S)
  low, high = np.zeros_like(start), steps.copy()

  def value(index):
    return objective(_elevation(start + SEARCH_STEP_S * index, latitude_deg, longitude_deg))

  searching = high > low + 1
  while searching.any():
    midpoint = low + (high - low) / 2
    lower_is_smaller = value(low) < value(high)
    high = np.where(searching & lower_is_smaller, np.ceil(midpoint), high)
    low = np.where(searching & ~lower_is_smaller, np.floor(midpoint), low)
    searching = high > low + 1
  best = np.where(value(low) < value(high), low, high)
  return start + SEARCH_STEP_S * best


def next_sunrise_sunset(unix_time_s, latitude_deg, longitude_deg):
  """BLE's get_next_sunrise_sunset for arrays of balloons.

  Args:
    unix_time_s: query times (UTC Unix seconds), float64 [B].
    latitude_deg, longitude_deg: positions, [B] (|latitude| < 60°, as BLE requires).

  Returns:
    (sunrise, sunset): Unix seconds [B] of the next sunrise and sunset, each at or after
    the query time, on the query's 3-minute grid.
  """
  time = np.asarray(unix_time_s, np.float64)
  latitude, longitude = np.broadcast_arrays(np.asarray(latitude_deg, np.float64),
                                            np.asarray(longitude_deg, np.float64))
  afternoon = _is_afternoon(time, latitude, longitude)
  # Midnight is within 12 hours in the afternoon, 12 to 24 hours away in the morning;
  # noon the other way round.
  near, far = (time, time + _HALF_DAY_S), (time + _HALF_DAY_S, time + _DAY_S)
  midnight = _bisect(np.where(afternoon, near[0], far[0]), np.where(afternoon, near[1], far[1]),
                     latitude, longitude, lambda elevation: elevation)
  noon = _bisect(np.where(afternoon, far[0], near[0]), np.where(afternoon, far[1], near[1]),
                 latitude, longitude, lambda elevation: -elevation)
  target = constants.DAYTIME_MIN_ELEVATION_DEG
  crossing = lambda elevation: np.abs(elevation - target)  # noqa: E731
  sunrise = _bisect(np.where(afternoon, midnight, midnight - _DAY_S), noon, latitude, longitude,
                    crossing)
  sunset = _bisect(np.where(afternoon, noon - _DAY_S, noon), midnight, latitude, longitude,
                   crossing)
  sunrise = np.where(sunrise < time, sunrise + _DAY_S, sunrise)
  sunset = np.where(sunset < time, sunset + _DAY_S, sunset)
  return sunrise, sunset


_CANDIDATES = np.array([-1.0, 0.0, 1.0, 2.0])[:, None, None]


def snap_to_search_grid(unix_time_s, latitude_deg, longitude_deg, seconds_to_sunset,
                        seconds_to_sunrise):
  """Moves closed-form times to the next sunset and sunrise onto BLE's search grid.

  BLE's search answers a grid point t + k·180 s. Where its bisection behaves, that is the
  grid point whose refracted elevation is nearest −4.242°: all 101 states of the
  reference episode, and about 70 % of random states. In the rest, its bracket heuristic
  (it compares the objective at the bracket's two ends, which over a 12-hour bracket is
  not symmetric about the crossing) lands up to six grid points (18 minutes) away, and
  this function, which keeps the nearest grid point, differs from it. It takes the
  closed-form crossing (from solar.sun_state), evaluates the elevation at the four grid
  points around it, and keeps the nearest: 8 elevations per balloon instead of BLE's ~80
  (`next_sunrise_sunset` runs BLE's bisection itself, for the power layer at reset).

  Args:
    unix_time_s, latitude_deg, longitude_deg: float64 [B], the query.
    seconds_to_sunset, seconds_to_sunrise: float64 [B], closed-form times from the query.

  Returns:
    (seconds_to_sunset, seconds_to_sunrise) on the grid, float64 [B], each ≥ 0.
  """
  closed_form = np.stack([seconds_to_sunset, seconds_to_sunrise])  # [2, B]
  candidates = (np.floor(closed_form / SEARCH_STEP_S) + _CANDIDATES) * SEARCH_STEP_S  # [4, 2, B]
  elevation = _elevation(unix_time_s + candidates, latitude_deg, longitude_deg)
  best = np.abs(elevation - constants.DAYTIME_MIN_ELEVATION_DEG).argmin(axis=0)
  snapped = np.take_along_axis(candidates, best[None], axis=0)[0]
  # BLE: an event found before the query time is the next day's.
  snapped = np.where(snapped < 0.0, snapped + _DAY_S, snapped)
  return snapped[0], snapped[1]


def solar_cycle_phase(seconds_to_sunset, seconds_to_sunrise):
  """BLE's solar-cycle phase (features.compute_sunrise_time) from the next sunset and
  sunrise on its grid: π·(t − previous sunrise)/(sunset − previous sunrise) by day (the
  next sunset comes first), π + π·(t − previous sunset)/(sunrise − previous sunset) at
  night, with BLE's rounding (π × a timedelta is rounded to whole microseconds).
  """
  day = seconds_to_sunset < seconds_to_sunrise
  since = np.where(day, _DAY_S - seconds_to_sunrise, _DAY_S - seconds_to_sunset)
  span = np.where(day, seconds_to_sunset - seconds_to_sunrise,
                  seconds_to_sunrise - seconds_to_sunset) + _DAY_S
  fraction = np.round(np.pi * (since * 1e6)) / (span * 1e6)
  return np.where(day, fraction, np.pi + fraction)


def _scalar_elevation(unix_time_s, latitude_deg, longitude_deg):
  """The refracted elevation (deg) on Python floats (solar's scalar functions)."""
  m = array_math.SCALAR
  declination, equation_of_time, _ = solar.sun_terms(unix_time_s, m)
  hour_angle = solar.hour_angle_deg(unix_time_s, longitude_deg, equation_of_time, m)
  latitude = math.radians(latitude_deg)
  return solar.scalar_elevation_from_hour_angle(
      math.sin(latitude) * math.sin(declination), math.cos(latitude) * math.cos(declination),
      hour_angle)


def scalar_snap_to_search_grid(unix_time_s, latitude_deg, longitude_deg, seconds_to_sunset,
                               seconds_to_sunrise):
  """`snap_to_search_grid` for one balloon on Python floats (the one-balloon path).

  The same choice among the same four grid points, found with two or three elevations
  per event instead of four: the elevation is monotonic across the four (they span 9
  minutes around a crossing), so the nearest lies in the bracketing pair when the
  crossing falls between them, else in the pair beyond its nearer end.
  """
  target = constants.DAYTIME_MIN_ELEVATION_DEG
  snapped = []
  for seconds in (seconds_to_sunset, seconds_to_sunrise):
    first = math.floor(seconds / SEARCH_STEP_S) * SEARCH_STEP_S
    second = first + SEARCH_STEP_S
    low = _scalar_elevation(unix_time_s + first, latitude_deg, longitude_deg) - target
    high = _scalar_elevation(unix_time_s + second, latitude_deg, longitude_deg) - target
    if (low <= 0.0) != (high <= 0.0) or low == 0.0 or high == 0.0:
      best = first if abs(low) <= abs(high) else second
    elif abs(low) <= abs(high):  # the crossing lies before `first`
      before = first - SEARCH_STEP_S
      outer = _scalar_elevation(unix_time_s + before, latitude_deg, longitude_deg) - target
      best = before if abs(outer) <= abs(low) else first
    else:  # after `second`
      after = second + SEARCH_STEP_S
      outer = _scalar_elevation(unix_time_s + after, latitude_deg, longitude_deg) - target
      best = second if abs(high) <= abs(outer) else after
    snapped.append(best + _DAY_S if best < 0.0 else best)
  return snapped[0], snapped[1]


def scalar_solar_cycle_phase(seconds_to_sunset, seconds_to_sunrise):
  """`solar_cycle_phase` for one balloon on Python floats."""
  if seconds_to_sunset < seconds_to_sunrise:
    since, span = _DAY_S - seconds_to_sunrise, seconds_to_sunset - seconds_to_sunrise + _DAY_S
    return round(math.pi * (since * 1e6)) / (span * 1e6)
  since, span = _DAY_S - seconds_to_sunset, seconds_to_sunrise - seconds_to_sunset + _DAY_S
  return math.pi + round(math.pi * (since * 1e6)) / (span * 1e6)
