"""Wind forecast fields (spec §10): the procedural forecast grid and the static field.

The forecast is the prior the agent's features use; the truth the balloon drifts
in is forecast + `ForecastError` (forecast_error.py). Both classes hold a slab of
B balloons and answer queries for many balloons, and for whole pressure
columns, in one vectorised call:

  forecast = WindForecast(num_balloons)
  forecast.sample(indices, rngs)                     # new field per balloon
  u, v = forecast.query(indices, x, y, pressure, t)  # x, y, t [N]; pressure [N] or [N, L]

Grid (§10): x, y in -500 ... 500 km every 50 km (21 x 21), pressure 5000 ...
14000 Pa every 1000 Pa (10), time 0 ... 48 h every 6 h (9). Queries interpolate
linearly in all four axes, clamp x, y and pressure to the grid, and reflect
time back and forth over 0-48 h.

The generator is ours (BLE decodes a VAE trained on reanalysis, §15). A field is
the sum of three non-divergent parts, each derived from a stream function psi
(u = -d psi/dy, v = d psi/dx), times a per-field amplitude:

1. A zonal-mean wind U(p, t), the same over the whole 1000 km box (psi = -U y).
   It carries most of the variance of u, which is what makes std u >> std v
   in the target table (8.7 vs 0.9 m/s at 5000 Pa). U is a Gaussian process
   over (pressure, time) with squared-exponential correlations: a Gaussian
   fits the target correlations of u across pressure (0.90 at 1 kPa, 0.39 at
   3 kPa) and time (0.996 at 6 h, 0.94 at 24 h).
2. Eddies: psi a Gaussian process with separable squared-exponential
   correlations in (t, p, x, y), longer in y than in x (so mostly v) and short
   in pressure (so the direction turns from level to level).
3. Jets: the same construction, short in y and long in x (almost pure u), to
   decorrelate u over hundreds of km.

Parts 2 and 3 are drawn on the grid as a Kronecker product of small matrix
square roots (no FFT) and differenced with centred differences; as these
commute, the grid's discrete divergence D_x u + D_y v is exactly zero. Per-level
stds are calibrated so the pooled per-level stds of u and v match the §10 table.
The wind benchmark (docs/benchmarks.md) measures every §10 statistic beside its target;
over its 300 fields the per-level stds and speeds are within 7 % of the table
and the correlations, per-field speeds and directional diversity within a few
percent, except that u is smoother at grid scale than BLE's fields (0.998
against 0.98 between points 50 km apart).
"""

import functools

import numpy as np

from agents.env.balloon.wind import blas_threads, kernels

# Grid axes of §10, in SI units (m, Pa, s).
GRID_SPACING_M = 50e3
GRID_X_M = np.linspace(-500e3, 500e3, 21)
GRID_Y_M = GRID_X_M
GRID_PRESSURE_PA = np.linspace(5000.0, 14000.0, 10)
GRID_PRESSURE_SPACING_PA = 1000.0
GRID_TIME_S = np.linspace(0.0, 48 * 3600.0, 9)
GRID_TIME_SPACING_S = 6 * 3600.0
GRID_SHAPE = (len(GRID_TIME_S), len(GRID_X_M), len(GRID_Y_M), len(GRID_PRESSURE_PA))

# Generator calibration: the wind benchmark (docs/benchmarks.md) measures it against
# the §10 table. Per grid level (5000 ... 14000 Pa): the std of the zonal-mean u
# and of the eddy v (m/s), fitted over 3000 fields so the pooled per-level stds
# match the table.
ZONAL_STD_MPS = np.array([8.12, 6.01, 5.32, 5.3, 5.7, 6.58, 7.8, 8.95, 9.7, 10.07])
EDDY_V_STD_MPS = np.array([0.77, 1.35, 1.8, 2.05, 2.68, 3.36, 4.05, 4.49, 4.99, 5.18])
# Zonal mean: squared-exponential correlation lengths in pressure and time. A
# Gaussian of 2.2 kPa alone gives the target 0.90 / 0.39 at 1 / 3 kPa; the
# shorter eddies pull the pooled value down, so the zonal part is a bit longer.
ZONAL_PRESSURE_SCALE_PA = 2300.0
ZONAL_TIME_SCALE_S = 67 * 3600.0
# Eddies: longer in y than in x, so they add more to v than to u (std u of the
# eddies = EDDY_X / EDDY_Y x std v), and short in pressure, which turns the wind
# direction from level to level (the §10 directional diversity).
EDDY_X_SCALE_M = 450e3
EDDY_Y_SCALE_M = 900e3
EDDY_PRESSURE_SCALE_PA = 700.0
EDDY_TIME_SCALE_S = 80 * 3600.0
# Jets: zonal bands (short in y, long in x, so almost pure u) that decorrelate
# u over hundreds of km (target 0.88 at 500 km) while keeping its long
# correlation in pressure. Their u std is JET_U_OVER_ZONAL x the zonal std.
JET_U_OVER_ZONAL = 0.4
JET_X_SCALE_M = 2500e3
JET_Y_SCALE_M = 350e3
JET_PRESSURE_SCALE_PA = 2300.0
JET_TIME_SCALE_S = EDDY_TIME_SCALE_S
# Per-field amplitude exp(s N(0, 1) - s^2) (mean square 1) widens the spread of
# the per-field mean speed (target p10 / p90 4.8 / 11.1 m/s).
FIELD_AMPLITUDE_LOG_STD = 0.12


class WindForecast:
  """Procedural forecast grids (§10), one per balloon of a slab."""

  def __init__(self, num_balloons):
    """Creates a slab of zero fields; call `sample` before querying.

    Args:
      num_balloons: number of balloons B in the slab.
    """
    if num_balloons < 1:
      raise ValueError(f'WindForecast needs num_balloons >= 1, got {num_balloons}.')
    self.num_balloons = int(num_balloons)
    # [B, T, X, Y, P, (u, v)]: the (u, v) column of one grid corner is contiguous,
    # so a query gathers 8 corners x 10 levels x 2 components per balloon.
    self._grid = np.zeros((self.num_balloons, *GRID_SHAPE, 2), np.float32)

  @property
  def grid(self):
    """The fields, float32 [B, T=9, X=21, Y=21, P=10, 2 (u, v)] in m/s (read-only view)."""
    view = self._grid.view()
    view.flags.writeable = False
    return view

  def sample(self, indices, rngs):
    """Draws a new field for each balloon in `indices` from its own Generator.

    Args:
      indices: int array [K] of balloons.
      rngs: sequence of K `numpy.random.Generator`, one per index.
    """
    indices = check_indices(indices, self.num_balloons, 'WindForecast.sample')
    if len(rngs) != len(indices):
      raise ValueError(
          f'WindForecast.sample got {len(indices)} indices but {len(rngs)} generators.')
    # One field per episode reset, so a loop over the balloons being reset is fine.
    with blas_threads.limit_blas_threads(1):
      for index, rng in zip(indices, rngs):
        self._grid[index] = generate_field(rng)

  def set_field(self, index, field):
    """Installs a given field (e.g. hand-made for tests) for balloon `index`.

    Args:
      index: balloon index.
      field: array [9, 21, 21, 10, 2] in m/s ([T, X, Y, P, (u, v)]).
    """
    field = np.asarray(field)
    if field.shape != self._grid.shape[1:]:
      raise ValueError(
          f'WindForecast.set_field expected shape {self._grid.shape[1:]}, got {field.shape}.')
    self._grid[index] = field

  def query(self, indices, x, y, pressure, t):
    """Interpolates the forecast wind (§10).

    Args:
      indices: int array [N] of balloons, or None for all (then N = B).
      x, y: positions [N] in m relative to the station; clamped to +-500 km.
      pressure: [N] or [N, L] (a column per balloon) in Pa; clamped to
        5000 ... 14000 Pa.
      t: time [N] in s since the episode start; reflected over 0-48 h.

    Returns:
      (u, v), each float64 with pressure's shape, in m/s.
    """
    indices = query_indices(indices, self.num_balloons, 'WindForecast.query')
    x, y, t, pressure = check_query_shapes(indices, x, y, pressure, t, 'WindForecast.query')
    time_index, time_weight = _axis_position(_reflect_time(t), 0.0, GRID_TIME_SPACING_S, 9)
    x_index, x_weight = _axis_position(x, GRID_X_M[0], GRID_SPACING_M, 21)
    y_index, y_weight = _axis_position(y, GRID_Y_M[0], GRID_SPACING_M, 21)
    # Trilinear in (t, x, y) to a 10-level column per query, then linear in pressure:
    # every level of a column shares (t, x, y), so the 8 corners are gathered once.
    # Contiguous, so the one compiled specialisation serves every caller.
    levels = np.ascontiguousarray(pressure[:, None] if pressure.ndim == 1 else pressure)
    u, v = np.empty(levels.shape), np.empty(levels.shape)
    kernels.forecast_columns(
        self._grid, indices, np.stack([time_index, x_index, y_index], axis=1),
        np.stack([time_weight, x_weight, y_weight], axis=1), levels, GRID_PRESSURE_PA[0],
        GRID_PRESSURE_SPACING_PA, u, v)
    return (u[:, 0], v[:, 0]) if pressure.ndim == 1 else (u, v)


class StaticWind:
  """The static field of §10, for tests and comparisons (no forecast error).

  u, v = (+10, 0) m/s below 8000 Pa, (0, +10) below 10000 Pa, (-10, 0) below
  12000 Pa, else (0, -10), everywhere and at all times.
  """

  BOUNDARIES_PA = np.array([8000.0, 10000.0, 12000.0])
  WINDS_MPS = np.array([[10.0, 0.0], [0.0, 10.0], [-10.0, 0.0], [0.0, -10.0]])

  def __init__(self, num_balloons):
    """Args: num_balloons: number of balloons B in the slab."""
    if num_balloons < 1:
      raise ValueError(f'StaticWind needs num_balloons >= 1, got {num_balloons}.')
    self.num_balloons = int(num_balloons)

  def sample(self, indices, rngs):  # pylint: disable=unused-argument
    """No-op: the static field has no randomness (kept for the common interface)."""
    check_indices(indices, self.num_balloons, 'StaticWind.sample')

  def query(self, indices, x, y, pressure, t):
    """Returns (u, v) with pressure's shape; see `WindForecast.query` for arguments."""
    indices = query_indices(indices, self.num_balloons, 'StaticWind.query')
    x, y, t, pressure = check_query_shapes(indices, x, y, pressure, t, 'StaticWind.query')
    # "Below 8000 Pa" is pressure < 8000 Pa, so 8000 Pa itself is in the second band.
    band = np.searchsorted(self.BOUNDARIES_PA, pressure, side='right')
    wind = self.WINDS_MPS[band]
    return wind[..., 0], wind[..., 1]


def generate_field(rng):
  """Draws one forecast field (see the module docstring for the construction).

  Args:
    rng: a `numpy.random.Generator`.

  Returns:
    float32 [9, 21, 21, 10, 2] ([T, X, Y, P, (u, v)]) in m/s.
  """
  with blas_threads.limit_blas_threads(1):
    return _generate_field(rng)


def _generate_field(rng):
  roots = _generator_roots()
  num_times, num_x, num_y, num_levels = GRID_SHAPE
  # Zonal mean U(t, p): a unit-variance GP over (t, p), then scaled per level.
  zonal = roots['zonal'] @ rng.standard_normal(num_times * num_levels)
  zonal = zonal.reshape(num_times, num_levels) * ZONAL_STD_MPS
  eddy_u, eddy_v = _stream_function_wind(rng, *roots['eddy'])
  jet_u, jet_v = _stream_function_wind(rng, *roots['jet'])
  # Per-level factors keep each part non-divergent: they do not depend on x or y.
  eddy_scale = EDDY_V_STD_MPS / roots['eddy_v_unit_std']
  jet_scale = JET_U_OVER_ZONAL * ZONAL_STD_MPS / roots['jet_u_unit_std']
  amplitude = np.exp(FIELD_AMPLITUDE_LOG_STD * rng.standard_normal()
                     - FIELD_AMPLITUDE_LOG_STD ** 2)
  field = np.empty((num_times, num_x, num_y, num_levels, 2), np.float32)
  field[..., 0] = amplitude * (eddy_u * eddy_scale + jet_u * jet_scale
                               + zonal[:, None, None, :])
  field[..., 1] = amplitude * (eddy_v * eddy_scale + jet_v * jet_scale)
  return field


def _stream_function_wind(rng, time_root, pressure_root, x_root, y_root):
  """Non-divergent wind [T, X, Y, P] from a separable Gaussian-process stream function.

  psi is drawn on a grid one point wider on each side in x and y, as white
  noise multiplied along each axis by the square root of that axis's
  correlation matrix; u = -D_y psi and v = D_x psi with centred differences,
  so D_x u + D_y v = 0 exactly on the grid.
  """
  noise = rng.standard_normal((time_root.shape[0], pressure_root.shape[0],
                               x_root.shape[0], y_root.shape[0]))
  psi = np.einsum('ta,pb,xc,yd,abcd->txyp', time_root, pressure_root, x_root, y_root, noise,
                  optimize=True)
  u = -(psi[:, 1:-1, 2:] - psi[:, 1:-1, :-2]) / (2 * GRID_SPACING_M)
  v = (psi[:, 2:, 1:-1] - psi[:, :-2, 1:-1]) / (2 * GRID_SPACING_M)
  return u, v


@functools.cache
def _generator_roots():
  """Matrix square roots of the generator's correlation matrices (computed once)."""
  pressure, times = GRID_PRESSURE_PA, GRID_TIME_S
  extended_x = np.arange(len(GRID_X_M) + 2) * GRID_SPACING_M
  root = _squared_exponential_root

  def difference_std(length_scale):
    # Std of the centred difference (psi(x + h) - psi(x - h)) / 2h of a unit GP.
    spacing = GRID_SPACING_M
    return np.sqrt(2 - 2 * np.exp(-2 * spacing ** 2 / length_scale ** 2)) / (2 * spacing)

  return {
      'zonal': np.kron(root(times, ZONAL_TIME_SCALE_S), root(pressure, ZONAL_PRESSURE_SCALE_PA)),
      'eddy': (root(times, EDDY_TIME_SCALE_S), root(pressure, EDDY_PRESSURE_SCALE_PA),
               root(extended_x, EDDY_X_SCALE_M), root(extended_x, EDDY_Y_SCALE_M)),
      'eddy_v_unit_std': difference_std(EDDY_X_SCALE_M),
      'jet': (root(times, JET_TIME_SCALE_S), root(pressure, JET_PRESSURE_SCALE_PA),
              root(extended_x, JET_X_SCALE_M), root(extended_x, JET_Y_SCALE_M)),
      'jet_u_unit_std': difference_std(JET_Y_SCALE_M),
  }


def _squared_exponential_root(points, length_scale):
  """Symmetric square root S of the correlation exp(-d^2 / 2 l^2): S @ S = C.

  The correlation matrix of a smooth kernel is numerically singular, so the
  root comes from its eigendecomposition with negative round-off clipped.
  """
  distance = points[:, None] - points[None, :]
  correlation = np.exp(-0.5 * (distance / length_scale) ** 2)
  eigenvalues, eigenvectors = np.linalg.eigh(correlation)
  return (eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))) @ eigenvectors.T


def _reflect_time(t):
  """Reflects time back and forth over the 0-48 h grid (§10): 50 h reads 46 h."""
  period = 2 * GRID_TIME_S[-1]
  phase = np.mod(t, period)
  return np.where(phase > GRID_TIME_S[-1], period - phase, phase)


def _axis_position(value, start, spacing, size):
  """Lower grid index and interpolation weight along one axis, clamped to the grid."""
  position = np.clip((value - start) / spacing, 0.0, size - 1)
  index = np.minimum(position.astype(np.intp), size - 2)
  return index, position - index


def check_indices(indices, num_balloons, where):
  """Validates a 1-D int array of balloon indices; `where` names the caller in errors."""
  indices = np.asarray(indices)
  if indices.ndim != 1 or (indices.size and not np.issubdtype(indices.dtype, np.integer)):
    raise TypeError(f'{where}: indices must be a 1-D int array, got {indices.dtype} '
                    f'with shape {indices.shape}.')
  indices = indices.astype(np.intp)
  if indices.size and (indices.min() < 0 or indices.max() >= num_balloons):
    raise IndexError(f'{where}: indices must lie in [0, {num_balloons}), got '
                     f'{indices.min()} ... {indices.max()}.')
  return indices


def query_indices(indices, num_balloons, where):
  """Like `check_indices`, with None meaning every balloon of the slab."""
  if indices is None:
    return np.arange(num_balloons)
  return check_indices(indices, num_balloons, where)


def check_query_shapes(indices, x, y, pressure, t, where):
  """Converts query arguments to float64 and checks them against the indices."""
  count = len(indices)
  x, y, t = (np.asarray(a, np.float64) for a in (x, y, t))
  pressure = np.asarray(pressure, np.float64)
  for name, array in (('x', x), ('y', y), ('t', t)):
    if array.shape != (count,):
      raise ValueError(f'{where}: {name} must have shape ({count},), got {array.shape}.')
  if pressure.ndim not in (1, 2) or pressure.shape[0] != count:
    raise ValueError(f'{where}: pressure must have shape ({count},) or ({count}, L), '
                     f'got {pressure.shape}.')
  return x, y, t, pressure
