"""Smooth random forecast-error field (spec §10): truth = forecast + error.

BLE sums five 4-D OpenSimplex noises per wind component, each with its own
length scales in x, y (km), pressure (Pa) and time (h), combined as
sum_i w_i n_i / sqrt(sum_i w_i^2). We use the same scales and weights with our
own smooth gradient noise (a listed deviation, §15): each n_i is a random
Fourier feature sum

  n_i(z) = sqrt(2 / K) sum_k cos(omega_k . z / l_i + phi_k),
  omega_k ~ N(0, I), phi_k ~ U(0, 2 pi),

which is a stationary process with unit variance and squared-exponential
correlation exp(-|d / l_i|^2 / 2). Simplex noise of "scale" s decorrelates over
roughly a third of s (its kernel radius is ~0.6-0.8 lattice units, half-power
near 0.4), so the correlation length is l_i = CORRELATION_PER_SCALE * s_i.
The sum is scaled to ERROR_STD_MPS (about 1.05 m/s per component, §10).

  error = ForecastError(num_balloons)
  error.sample(indices, rngs)                          # new field per balloon
  du, dv = error.query(indices, x, y, pressure, t)     # pressure [N] or [N, L]
"""

import numpy as np

from agents.env.balloon.wind import wind_forecast

# (weight; x scale km, y scale km, pressure scale Pa, time scale h), §10: the rounded values
# of BLE's harmonics (simplex_noise.U_HARMONICS, V_HARMONICS hold the exact ones). The
# procedural wind and the models trained in it are defined by these; do not derive them.
U_SCALES = np.array([
    (0.1445, 702.0, 2117.0, 2588.0, 245.0),
    (0.2766, 1484.0, 752.0, 646.0, 16.4),
    (0.2627, 277.0, 147.0, 588.0, 3.84),
    (0.2137, 10215.0, 1512.0, 966.0, 41.8),
    (0.1025, 181.0, 421.0, 8500.0, 245.0),
])
V_SCALES = np.array([
    (0.2716, 1974.0, 2029.0, 714.0, 26.4),
    (0.2684, 700.0, 542.0, 632.0, 9.53),
    (0.2348, 218.0, 197.0, 687.0, 3.55),
    (0.1186, 47.5, 43.0, 66.6, 8.42),
    (0.1066, 3663.0, 232.0, 7500.0, 225.0),
])
ERROR_STD_MPS = 1.05
CORRELATION_PER_SCALE = 0.35
FEATURES_PER_SCALE = 24
# Converts a (x km, y km, pressure Pa, time h) scale row to SI units (m, Pa, s).
_TO_SI = np.array([1e3, 1e3, 1.0, 3600.0])


class ForecastError:
  """Smooth random forecast-error fields, one per balloon of a slab (§10)."""

  def __init__(self, num_balloons, features_per_scale=FEATURES_PER_SCALE):
    """Creates a slab of zero error fields; call `sample` before querying.

    Args:
      num_balloons: number of balloons B in the slab.
      features_per_scale: random Fourier features K per noise scale.
    """
    if num_balloons < 1:
      raise ValueError(f'ForecastError needs num_balloons >= 1, got {num_balloons}.')
    if features_per_scale < 1:
      raise ValueError(f'ForecastError needs features_per_scale >= 1, got {features_per_scale}.')
    self.num_balloons = int(num_balloons)
    self._features_per_scale = int(features_per_scale)
    scales = np.stack([U_SCALES, V_SCALES])                      # [2, 5, 5]
    weights = scales[..., 0]
    # Per-feature amplitude: error_std * w_i / sqrt(sum w^2) * sqrt(2 / K).
    amplitude = (ERROR_STD_MPS * weights / np.sqrt((weights ** 2).sum(-1, keepdims=True))
                 * np.sqrt(2.0 / features_per_scale))
    self._amplitude = np.repeat(amplitude, features_per_scale, axis=-1)       # [2, F]
    length = CORRELATION_PER_SCALE * scales[..., 1:] * _TO_SI                 # [2, 5, 4]
    self._inverse_length = np.repeat(1.0 / length, features_per_scale, axis=1)  # [2, F, 4]
    num_features = self._amplitude.shape[-1]
    # Frequencies (already divided by the length scales) and phases per balloon;
    # Until sampled, a balloon's field is zero (`_sampled` masks it: float32 cosines of
    # the placeholder phases are only approximately zero).
    self._frequency = np.zeros((self.num_balloons, 2, num_features, 4))
    self._phase = np.full((self.num_balloons, 2, num_features), np.pi / 2)
    self._sampled = np.zeros(self.num_balloons)

  def sample(self, indices, rngs):
    """Draws a new error field for each balloon in `indices` from its own Generator.

    Args:
      indices: int array [K] of balloons.
      rngs: sequence of K `numpy.random.Generator`, one per index.
    """
    indices = wind_forecast.check_indices(indices, self.num_balloons, 'ForecastError.sample')
    if len(rngs) != len(indices):
      raise ValueError(
          f'ForecastError.sample got {len(indices)} indices but {len(rngs)} generators.')
    shape = self._frequency.shape[1:]
    for index, rng in zip(indices, rngs):
      self._frequency[index] = rng.standard_normal(shape) * self._inverse_length
      self._phase[index] = rng.uniform(0.0, 2 * np.pi, shape[:-1])
      self._sampled[index] = 1.0

  def query(self, indices, x, y, pressure, t):
    """Evaluates the error field.

    Args:
      indices: int array [N] of balloons, or None for all (then N = B).
      x, y: positions [N] in m relative to the station (not clamped).
      pressure: [N] or [N, L] in Pa.
      t: time [N] in s since the episode start.

    Returns:
      (du, dv), each float64 with pressure's shape, in m/s.
    """
    # The whole slab reads its arrays in place: a fancy-indexed copy of the
    # frequencies (8 KB per balloon) cost more than the cosines.
    checked = wind_forecast.query_indices(indices, self.num_balloons, 'ForecastError.query')
    rows = slice(None) if indices is None else checked
    x, y, t, pressure = wind_forecast.check_query_shapes(
        checked, x, y, pressure, t, 'ForecastError.query')
    frequency = self._frequency[rows]                                       # [N, 2, F, 4]
    # The phase from (x, y, t) is shared by every level of a column.
    base = (frequency[..., 0] * x[:, None, None] + frequency[..., 1] * y[:, None, None]
            + frequency[..., 3] * t[:, None, None] + self._phase[rows])     # [N, 2, F]
    if pressure.ndim == 1:
      phase = base + frequency[..., 2] * pressure[:, None, None]
      error = np.einsum('ncf,cf->nc', _cosine(phase), self._amplitude)
      error *= self._sampled[rows, None]
      return error[:, 0], error[:, 1]
    phase = base[:, None] + frequency[:, None, ..., 2] * pressure[:, :, None, None]  # [N,L,2,F]
    error = np.einsum('nlcf,cf->nlc', _cosine(phase), self._amplitude)
    error *= self._sampled[rows, None, None]
    return error[..., 0], error[..., 1]


def _cosine(phase):
  """cos of float64 phases, reduced to [-pi, pi] in float64 and then evaluated in float32.

  numpy's float64 cos has no vectorised path and took about 17 ns per value on this
  project's machine (the phases here reach hundreds of radians), its float32 cos about
  0.5 ns. After the exact-enough float64 reduction the float32 result is within 2e-7 of
  the float64 cosine, far below the field's metres per second.
  """
  turns = np.rint(phase * (0.5 / np.pi))
  return np.cos((phase - turns * (2.0 * np.pi)).astype(np.float32))
