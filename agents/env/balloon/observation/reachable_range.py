"""The reachable pressure range of each balloon, as a per-episode table (balloon.md §11).

The observation marks wind levels outside the range a balloon can reach as padding.
The highest reachable level is where a balloon with an empty ballonet floats
(P/T_amb = m_empty·R/(M_air·V0)), the lowest is the pressure at 50,000 ft; both ends are
narrowed to where a stable balloon's superpressure stays in [250, 2130] Pa, searching a
20-level column from 1000 Pa to the 50,000 ft pressure as BLE does.

BLE recomputes this every step at the balloon's position. It depends on the atmosphere,
the sun and the balloon but not on the policy, so here it is tabulated once per episode
at the station's position, every hour over 48 h, and interpolated in time.
"""

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import array_math, solar, stable_start

TABLE_SPACING_S = 3600.0
TABLE_TIMES = 49  # 0 … 48 h
_COLUMN_LEVELS = 20
_COLUMN_TOP_PA = 1000.0
_MIN_SUPERPRESSURE = constants.ENVELOPE_BUFFER_PA
_MAX_SUPERPRESSURE = constants.BURST_SUPERPRESSURE - constants.ENVELOPE_BUFFER_PA


def _batched_interp(target, xs, ys):
  """Row-wise linear interpolation with linear extrapolation; xs [B, N] increasing, target [B]."""
  num_points = xs.shape[1]
  segment = np.clip((xs < target[:, None]).sum(axis=1) - 1, 0, num_points - 2)
  rows = np.arange(len(target))
  x0, x1 = xs[rows, segment], xs[rows, segment + 1]
  y0, y1 = ys[rows, segment], ys[rows, segment + 1]
  return y0 + (target - x0) * (y1 - y0) / (x1 - x0)


def _crossing(p1, sp1, p2, sp2):
  """Pressure between p1 < p2 where the superpressure crosses 250 or 2130 Pa (BLE's rule)."""
  crosses_min = (sp1 < _MIN_SUPERPRESSURE) != (sp2 < _MIN_SUPERPRESSURE)
  threshold = np.where(crosses_min, _MIN_SUPERPRESSURE, _MAX_SUPERPRESSURE)
  with np.errstate(divide='ignore', invalid='ignore'):
    weight = np.abs((threshold - sp1) / (sp2 - sp1))
  return p1 + np.nan_to_num(weight) * (p2 - p1)


def build_table(atmosphere, start_unix_s, station_lat_deg, station_lng_deg, earth_heat):
  """Tabulates the reachable range of K balloons over their episode.

  Args:
    atmosphere: an Atmosphere of the K balloons.
    start_unix_s, station_lat_deg, station_lng_deg, earth_heat: float64 [K] per balloon.

  Returns:
    float64 [K, TABLE_TIMES, 2]: (lowest reachable pressure, highest reachable pressure)
    at times 0, 1 h, …, 48 h after the episode start.
  """
  count = atmosphere.num_balloons
  bottom = atmosphere.pressure_at_height(np.full(count, constants.ALTITUDE_MIN_M))
  column = np.linspace(_COLUMN_TOP_PA, bottom, _COLUMN_LEVELS, axis=1)          # [K, 20]
  _, column_temperature, _ = atmosphere.at_pressure(column)
  # Where an empty-ballonet balloon floats, interpolated in P/T along the column (BLE).
  float_ratio = (constants.EMPTY_MASS * constants.GAS_CONSTANT
                 / (constants.AIR_MOLAR_MASS * constants.ENVELOPE_BASE_VOLUME))
  top = _batched_interp(np.full(count, float_ratio), column / column_temperature, column)
  grid = np.concatenate([top[:, None], column], axis=1)                          # [K, 21]
  _, grid_temperature, _ = atmosphere.at_pressure(grid)
  times = start_unix_s[:, None] + TABLE_SPACING_S * np.arange(TABLE_TIMES)        # [K, 49]
  elevation, _, flux = solar.solar_position(times, station_lat_deg[:, None],
                                            station_lng_deg[:, None])
  sun_heat = stable_start.sun_heat_per_area(
      elevation[..., None], flux[..., None], grid[:, None, :])                    # [K, 49, 21]
  _, _, _, superpressure = stable_start.stable_state(
      grid[:, None, :], grid_temperature[:, None, :], sun_heat, earth_heat[:, None, None])
  safe = (superpressure >= _MIN_SUPERPRESSURE) & (superpressure <= _MAX_SUPERPRESSURE)
  top_sp, column_sp = superpressure[..., 0], superpressure[..., 1:]
  top_safe, column_safe = safe[..., 0], safe[..., 1:]
  pressures = np.broadcast_to(column[:, None, :], column_sp.shape)

  # Highest level: scan the column downwards from the float level for the first safe level.
  in_range = pressures >= top[:, None, None]
  candidates = column_safe & in_range
  first = candidates.argmax(axis=-1)
  found = candidates.any(axis=-1)
  first_in_range = in_range.argmax(axis=-1)
  previous_is_level = first > first_in_range
  take = np.maximum(first - 1, 0)[..., None]
  previous_p = np.where(previous_is_level, np.take_along_axis(pressures, take, -1)[..., 0],
                        top[:, None])
  previous_sp = np.where(previous_is_level, np.take_along_axis(column_sp, take, -1)[..., 0],
                         top_sp)
  safe_p = np.take_along_axis(pressures, first[..., None], -1)[..., 0]
  safe_sp = np.take_along_axis(column_sp, first[..., None], -1)[..., 0]
  lowest_pressure = np.where(
      top_safe, top[:, None],
      np.where(found, _crossing(previous_p, previous_sp, safe_p, safe_sp), top[:, None]))

  # Lowest level: scan the column upwards from 50,000 ft for the first safe level.
  last = _COLUMN_LEVELS - 1 - column_safe[..., ::-1].argmax(axis=-1)
  found = column_safe.any(axis=-1)
  below = np.minimum(last + 1, _COLUMN_LEVELS - 1)[..., None]
  crossing = _crossing(np.take_along_axis(pressures, last[..., None], -1)[..., 0],
                       np.take_along_axis(column_sp, last[..., None], -1)[..., 0],
                       np.take_along_axis(pressures, below, -1)[..., 0],
                       np.take_along_axis(column_sp, below, -1)[..., 0])
  bottom_safe = column_safe[..., -1]
  highest_pressure = np.where(bottom_safe | ~found, bottom[:, None], crossing)
  return np.stack([lowest_pressure, highest_pressure], axis=-1)


def lookup(table, elapsed_s):
  """Interpolates the table in time: (lowest, highest) reachable pressure, each [B]."""
  position = array_math.clip(elapsed_s / TABLE_SPACING_S, 0.0, TABLE_TIMES - 1.0)
  index = np.minimum(position.astype(np.intp), TABLE_TIMES - 2)
  weight = (position - index)[:, None]
  rows = np.arange(len(elapsed_s))
  values = table[rows, index] * (1.0 - weight) + table[rows, index + 1] * weight
  return values[:, 0], values[:, 1]
