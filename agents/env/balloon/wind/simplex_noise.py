"""BLE's forecast error: the sum of five 4-D OpenSimplex noises per wind component.

In BLE's generative wind the truth is the decoded forecast plus this noise
(`SimplexWindNoise`). Each component sums five harmonics i, each an OpenSimplex
noise at (x km / sx_i + ox_i, y km / sy_i + oy_i, p Pa / sp_i + op_i,
h / st_i + ot_i), scaled by `NOISE_MAGNITUDE`, weighted by w_i and normalised as
BLE normalises it, (sum_i w_i n_i) / W * sqrt(W / sum_i w_i^2) with W = sum_i w_i.
Per episode each harmonic draws an OpenSimplex seed in [0, 1634753849) and four
offsets in [-1, 1), as BLE draws them, but from the episode's NumPy generator
(BLE splits JAX keys), so seed N is not BLE's seed N. The offsets are rounded to
float32, as BLE's are. The noise itself is `opensimplex`'s `noise4` (0.4.5.1,
bit-identical to the 0.3 `noise4d` BLE calls), evaluated in a compiled loop.

  noise = SimplexNoise(num_balloons)
  noise.sample(indices, rngs)                          # new seeds and offsets per balloon
  du, dv = noise.query(indices, x, y, pressure, t)     # pressure [N] or [N, L]
"""

import math

import numba
import numpy as np
from opensimplex import internals as opensimplex_internals

from agents.env.balloon.wind import wind_forecast

# BLE's harmonics, (weight, x scale km, y scale km, pressure scale Pa, time scale h): u then v.
# Exact, for BLE's noise to 1e-8; forecast_error.U_SCALES/V_SCALES are §10's rounded copy,
# which the procedural wind keeps.
U_HARMONICS = np.array([
    (0.1445, 702.269, 2116.987, 2587.802, 245.0),
    (0.2766, 1483.570, 752.124, 646.208, 16.39),
    (0.2627, 276.810, 147.040, 587.702, 3.836),
    (0.2137, 10214.525, 1512.216, 965.629, 41.780),
    (0.1025, 181.286, 420.942, 8500.0, 245.0),
])
V_HARMONICS = np.array([
    (0.2716, 1974.228, 2028.814, 713.697, 26.435),
    (0.2684, 699.738, 541.845, 632.116, 9.530),
    (0.2348, 217.750, 196.522, 686.825, 3.546),
    (0.1186, 47.500, 43.048, 66.553, 8.424),
    (0.1066, 3663.291, 232.023, 7499.741, 225.0),
])
NUM_HARMONICS = len(U_HARMONICS)
# BLE scales the noise so its variance matches 1.02 (m/s)^2 given OpenSimplex's variance.
OPENSIMPLEX_VARIANCE = 0.0569
NOISE_MAGNITUDE = math.sqrt(1.02 / OPENSIMPLEX_VARIANCE)
# BLE's seeds: `jax.random.choice(key, SEED_RANGE)`.
SEED_RANGE = 1634753849


def _component_factors(harmonics):
  """Per-harmonic factor: NOISE_MAGNITUDE w_i / W sqrt(W / sum w^2), as BLE combines them."""
  weights = harmonics[:, 0]
  total = weights.sum()
  return NOISE_MAGNITUDE * weights / total * math.sqrt(total / (weights ** 2).sum())


# [2 * NUM_HARMONICS]: u's harmonics then v's.
_FACTORS = np.concatenate([_component_factors(U_HARMONICS), _component_factors(V_HARMONICS)])
_SCALES = np.concatenate([U_HARMONICS, V_HARMONICS])[:, 1:]


def permutation(seed: int) -> np.ndarray:
  """OpenSimplex's permutation table (int64 [256]) for `seed`, as `OpenSimplex(seed)` builds it.

  Compiled (`opensimplex`'s own loop runs in Python, about 13 ms per table, and a reset
  builds ten per balloon); `tests/env/balloon/simplex_noise_test.py` holds it to
  `opensimplex`'s.
  """
  table = np.empty(256, np.int64)
  _permutation(np.int64(seed), table)
  return table


_LCG_MULTIPLIER = np.int64(6364136223846793005)
_LCG_INCREMENT = np.int64(1442695040888963407)


@numba.njit(cache=True)
def _permutation(seed, table):
  """OpenSimplex's shuffle of 0 ... 255 driven by a 64-bit linear congruential generator.

  int64 arithmetic wraps as `opensimplex` wraps it (ctypes' c_int64); its
  `(state + 31) % (i + 1)` is taken on unbounded integers, so here it is reduced
  term by term (numba's % has Python's sign convention).
  """
  source = np.arange(256)
  state = seed
  for _ in range(3):
    state = state * _LCG_MULTIPLIER + _LCG_INCREMENT
  for i in range(255, -1, -1):
    state = state * _LCG_MULTIPLIER + _LCG_INCREMENT
    size = i + 1
    r = (state % size + 31 % size) % size
    table[i] = source[r]
    source[r] = source[i]


class SimplexNoise:
  """BLE's simplex wind noise, one draw of seeds and offsets per balloon of a slab."""

  def __init__(self, num_balloons):
    """Creates a slab of zero noise; call `sample` before querying.

    Args:
      num_balloons: number of balloons B in the slab.
    """
    if num_balloons < 1:
      raise ValueError(f'SimplexNoise needs num_balloons >= 1, got {num_balloons}.')
    self.num_balloons = int(num_balloons)
    harmonics = 2 * NUM_HARMONICS
    self._perm = np.zeros((self.num_balloons, harmonics, 256), np.int64)
    self._offsets = np.zeros((self.num_balloons, harmonics, 4))
    self._seeds = np.zeros((self.num_balloons, harmonics), np.int64)
    self._sampled = np.zeros(self.num_balloons, bool)

  def sample(self, indices, rngs):
    """Draws seeds and offsets for each balloon in `indices` from its own Generator.

    Per harmonic (u's five, then v's), a seed in [0, SEED_RANGE), then four offsets
    uniform in [-1, 1) rounded to float32.

    Args:
      indices: int array [K] of balloons.
      rngs: sequence of K `numpy.random.Generator`, one per index.
    """
    indices = wind_forecast.check_indices(indices, self.num_balloons, 'SimplexNoise.sample')
    if len(rngs) != len(indices):
      raise ValueError(
          f'SimplexNoise.sample got {len(indices)} indices but {len(rngs)} generators.')
    for index, rng in zip(indices, rngs):
      seeds, offsets = [], []
      for _ in range(2 * NUM_HARMONICS):
        seeds.append(int(rng.integers(SEED_RANGE)))
        offsets.append(rng.uniform(-1.0, 1.0, 4))
      self.set_harmonics(index, seeds, np.array(offsets))

  def set_harmonics(self, index, seeds, offsets):
    """Installs given seeds [10] and offsets [10, 4] (u's harmonics, then v's) for `index`.

    For tests and for replaying BLE's own draws; offsets are rounded to float32.
    """
    seeds = np.asarray(seeds, np.int64)
    offsets = np.asarray(offsets, np.float64)
    if seeds.shape != (2 * NUM_HARMONICS,) or offsets.shape != (2 * NUM_HARMONICS, 4):
      raise ValueError(f'SimplexNoise.set_harmonics needs seeds [10] and offsets [10, 4], '
                       f'got {seeds.shape} and {offsets.shape}.')
    for harmonic, seed in enumerate(seeds):
      if seed != self._seeds[index, harmonic] or not self._sampled[index]:
        self._perm[index, harmonic] = permutation(seed)
    self._seeds[index] = seeds
    self._offsets[index] = offsets.astype(np.float32)
    self._sampled[index] = True

  def query(self, indices, x, y, pressure, t):
    """Evaluates the noise (zero for balloons never sampled).

    Args:
      indices: int array [N] of balloons, or None for all (then N = B).
      x, y: positions [N] in m relative to the station (not clamped).
      pressure: [N] or [N, L] in Pa.
      t: time [N] in s since the episode start.

    Returns:
      (du, dv), each float64 with pressure's shape, in m/s.
    """
    checked = wind_forecast.query_indices(indices, self.num_balloons, 'SimplexNoise.query')
    x, y, t, pressure = wind_forecast.check_query_shapes(
        checked, x, y, pressure, t, 'SimplexNoise.query')
    levels = np.ascontiguousarray(pressure[:, None] if pressure.ndim == 1 else pressure)
    u, v = np.empty(levels.shape), np.empty(levels.shape)
    # BLE's units: km, km, Pa and hours.
    noise_columns(self._perm, self._offsets, self._sampled, checked, x / 1000.0, y / 1000.0,
                  levels, t / 3600.0, _SCALES, _FACTORS, u, v)
    return (u[:, 0], v[:, 0]) if pressure.ndim == 1 else (u, v)


@numba.njit(cache=True)
def noise_columns(perm, offsets, sampled, rows, x_km, y_km, pressure, hours, scales, factors,
                  out_u, out_v):
  """BLE's noise at columns of points: per query row r and level l, the weighted sum of
  OpenSimplex noise4 over u's harmonics (out_u) and v's (out_v).

  Args:
    perm: int64 [B, H, 256], each harmonic's permutation table (H = 2 x 5).
    offsets: float64 [B, H, 4], each harmonic's offsets.
    sampled: bool [B]; unsampled balloons get zero.
    rows: int [N], the balloon of each query.
    x_km, y_km, hours: float64 [N]; pressure: float64 [N, L] in Pa.
    scales: float64 [H, 4], each harmonic's scales (km, km, Pa, h).
    factors: float64 [H], each harmonic's factor in the sum.
    out_u, out_v: float64 [N, L], filled.
  """
  harmonics = perm.shape[1]
  half = harmonics // 2
  for r in range(rows.shape[0]):
    b = rows[r]
    for level in range(pressure.shape[1]):
      if not sampled[b]:
        out_u[r, level] = 0.0
        out_v[r, level] = 0.0
        continue
      total_u = 0.0
      total_v = 0.0
      for h in range(harmonics):
        value = opensimplex_internals._noise4(
            x_km[r] / scales[h, 0] + offsets[b, h, 0],
            y_km[r] / scales[h, 1] + offsets[b, h, 1],
            pressure[r, level] / scales[h, 2] + offsets[b, h, 2],
            hours[r] / scales[h, 3] + offsets[b, h, 3], perm[b, h])
        if h < half:
          total_u += factors[h] * value
        else:
          total_v += factors[h] * value
      out_u[r, level] = total_u
      out_v[r, level] = total_v
