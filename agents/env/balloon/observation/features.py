"""The 1099-float observation of a slab of balloons (balloon.md §11).

Layout per balloon: 16 ambient features, then a wind column of 361 levels × 3. The 181
real levels (5000 … 14000 Pa, 50 Pa apart) are placed so that the balloon's own level
b = round((P − 5000)/50) sits at column index 180: (180 − b) padding levels, the 181 real
levels, b padding levels. Padding and unreachable levels read (0, 1, 1); the others
(uncertainty, bearing error/π, speed/(speed + 30 m/s)) of the GP wind estimate.

Everything is computed for the whole slab at once: the column as [B, 181] arrays and
one scatter into the [B, 361, 3] block.
"""

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import array_math

LEVEL_PRESSURES = np.linspace(constants.COLUMN_MIN_PRESSURE, constants.COLUMN_MAX_PRESSURE,
                              constants.NUM_LEVELS)
_PADDING = np.array([0.0, 1.0, 1.0], np.float32)

# §11 power table for the descent cost: pressure-ratio bins (looked up with "right"
# bisection), each with state-of-charge breakpoints and the watts between them. Bins with
# two breakpoints are padded with an unreachable third.
_RATIO_BIN_EDGES = np.array([1.08, 1.11, 1.14, 1.17, 1.2, 1.23, 1.26])
_SOC_BREAKPOINTS = np.array([
    [0.3, 0.4, 0.5], [0.3, 0.4, 0.7], [0.3, 0.4, 0.6], [0.3, 0.4, 0.5],
    [0.3, 0.4, 0.5], [0.4, 0.5, np.inf], [0.5, 0.6, np.inf], [0.5, 0.6, np.inf]])
_WATTS = np.array([
    [0, 150, 175, 200], [0, 200, 200, 225], [0, 225, 225, 250], [0, 200, 225, 250],
    [0, 225, 250, 275], [0, 275, 300, 300], [0, 300, 325, 325], [0, 325, 350, 350]],
    np.float64)


def power_table_watts(pressure_ratio, state_of_charge):
  """The power table's watts for each (pressure ratio, state of charge)."""
  ratio_bin = np.searchsorted(_RATIO_BIN_EDGES, pressure_ratio, side='right')
  soc_index = (state_of_charge[:, None] >= _SOC_BREAKPOINTS[ratio_bin]).sum(axis=1)
  return _WATTS[ratio_bin, soc_index]


def descent_cost(pressure_ratio, state_of_charge):
  """Feature 14: the power table's watts rescaled from 100–300 W to [0, 1], saturated."""
  watts = power_table_watts(pressure_ratio, state_of_charge)
  return array_math.clip((watts - constants.DESCENT_COST_MIN_W)
                 / (constants.DESCENT_COST_MAX_W - constants.DESCENT_COST_MIN_W), 0.0, 1.0)


def balloon_level(pressure):
  """The balloon's level b in [0, 180]: round((P − 5000)/50) after clipping P to the column."""
  clipped = array_math.clip(pressure, constants.COLUMN_MIN_PRESSURE, constants.COLUMN_MAX_PRESSURE)
  return np.rint((clipped - constants.COLUMN_MIN_PRESSURE)
                 / constants.COLUMN_PRESSURE_STEP).astype(np.intp)


def ambient_features(out, pressure, state_of_charge, elevation_deg, solar_phase, x, y,
                     last_command, navigation_paused, excess_energy, pressure_ratio):
  """Writes features 0–15 (§11) into out[:, :16].

  Args:
    out: float32 [B, 1099] observation block.
    pressure: Pa [B]. state_of_charge: [B] in [0, 1]. elevation_deg: solar elevation [B].
    solar_phase: [B] in [0, 2π) (solar.sun_cycle). x, y: m [B].
    last_command: int [B], commanded action (0 DOWN, 1 STAY, 2 UP).
    navigation_paused, excess_energy: bool [B]. pressure_ratio: [B].
  """
  out[:, 0] = array_math.clip((pressure - constants.COLUMN_MIN_PRESSURE)
                      / (constants.COLUMN_MAX_PRESSURE - constants.COLUMN_MIN_PRESSURE), 0.0, 1.0)
  out[:, 1] = state_of_charge
  out[:, 2] = array_math.clip((elevation_deg + 90.0) / 180.0, 0.0, 1.0)
  out[:, 3] = np.sin(solar_phase)
  out[:, 4] = np.cos(solar_phase)
  heading = np.arctan2(-x, -y)  # clockwise from north, towards the station
  out[:, 5] = np.sin(heading)
  out[:, 6] = np.cos(heading)
  distance_km = np.hypot(x, y) / 1000.0
  out[:, 7] = distance_km / (distance_km + constants.DISTANCE_SQUASH_KM)
  # One-hot in the order UP, STAY, DOWN (BLE's historical order).
  out[:, 8] = last_command == constants.UP
  out[:, 9] = last_command == constants.STAY
  out[:, 10] = last_command == constants.DOWN
  out[:, 11] = navigation_paused
  out[:, 12] = ~navigation_paused
  out[:, 13] = excess_energy
  out[:, 14] = descent_cost(pressure_ratio, state_of_charge)
  out[:, 15] = pressure_ratio


def level_triples(x, y, wind_u, wind_v, variance, reachable, out=None, scratch=None):
  """The (uncertainty, bearing error, speed) triple of each real level, float32 [B, 181, 3].

  Args:
    x, y: balloon position (m) [B].
    wind_u, wind_v: estimated wind (forecast + GP mean error) at each level, [B, 181].
    variance: GP predictive variance [B, 181].
    reachable: bool [B, 181]; unreachable levels get the padding triple (0, 1, 1).
    out: optional float32 [B, 181, 3] to write the triples into.
    scratch: optional float64 [3, B, 181] work space. Arrays this size are allocated
      with mmap and page-faulted afresh each call; reusing buffers halves the cost.

  Returns:
    The triples (`out` if given).
  """
  shape = np.shape(wind_u)
  triples = np.empty(shape + (3,), np.float32) if out is None else out
  speed, cosine, work = np.empty((3,) + shape) if scratch is None else scratch
  tolerance = constants.BEARING_TOLERANCE
  np.multiply(wind_u, wind_u, out=speed)
  np.multiply(wind_v, wind_v, out=work)
  speed += work
  np.sqrt(speed, out=speed)
  distance = np.hypot(x, y)
  # As BLE: both unit vectors are normalised with a 1e-5 tolerance, the cosine clipped.
  station_scale = -1.0 / (distance + tolerance)
  np.multiply(wind_u, (x * station_scale)[:, None], out=cosine)
  np.multiply(wind_v, (y * station_scale)[:, None], out=work)
  cosine += work
  np.add(speed, tolerance, out=work)
  cosine /= work
  np.maximum(cosine, -1.0, out=cosine)
  np.minimum(cosine, 1.0, out=cosine)
  np.arccos(cosine, out=cosine)
  cosine *= 1.0 / np.pi
  calm = speed < tolerance
  if calm.any():
    cosine[calm] = 1.0
  at_station = distance < tolerance
  if at_station.any():
    cosine[at_station] = 0.0
  triples[..., 1] = cosine
  np.multiply(variance, 1.0 / constants.GP_PRIOR_VARIANCE, out=work)
  np.maximum(work, 0.0, out=work)
  np.minimum(work, 1.0, out=work)
  triples[..., 0] = work
  np.add(speed, constants.WIND_SPEED_SQUASH, out=work)
  np.divide(speed, work, out=work)
  triples[..., 2] = work
  np.copyto(triples, _PADDING, where=~reachable[..., None])
  return triples


_REAL_FLOATS = 3 * constants.NUM_LEVELS
_PADDING_COLUMN = np.tile(_PADDING, constants.NUM_COLUMN_LEVELS)


def place_column(out, level, triples):
  """Writes the wind column into out[:, 16:], the balloon's level at column index 180.

  Args:
    out: float32 [B, 1099], C-contiguous.
    level: int [B], the balloon's level b.
    triples: float32 [B, 181, 3] from `level_triples`.
  """
  count = len(out)
  out[:, constants.NUM_AMBIENT_FEATURES:] = _PADDING_COLUMN
  # The real levels are one contiguous run of 543 floats per balloon, starting at
  # column index 180 − b: one flat scatter writes them all.
  starts = (np.arange(count) * constants.OBSERVATION_SIZE + constants.NUM_AMBIENT_FEATURES
            + 3 * (constants.BALLOON_COLUMN_INDEX - level))
  flat = out.reshape(-1)
  flat[starts[:, None] + np.arange(_REAL_FLOATS)] = triples.reshape(count, _REAL_FLOATS)
