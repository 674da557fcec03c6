"""Compiled inner loops of the balloon's wind code, built with Numba.

These are memory passes and elementwise maths that numpy can only do as a chain
of separate calls, each a trip over the data:

- `slide`: the GP window update of `observe` (one point in, the oldest out) as
  one symmetric rank-2 update of the inverse Q, fused with writing alpha = Q y,
  then predict's float32 copy of Q while that balloon's Q is in cache (numpy
  needed seven passes from memory and a separate float32 copy per predict);
- `correlations`: exp(-r) over every (level, point) pair of a chunk of wind
  columns, r the scaled distance, in one pass (numpy needed six);
- `forecast_columns`: the forecast's trilinear-then-linear interpolation to a
  column of levels per balloon (numpy needed gathers of [N, L] index arrays);
- `posterior_means`: the GP's posterior mean at arbitrary points of each balloon
  (the planner's rollouts, planner.py), in float64.

The big product of predict stays in BLAS (wind_gp.py), which runs it near the
core's peak.

`correlations` evaluates exp with `_exp_negative`, a float32 exponential written
so the compiler can vectorise it (a call into libm's scalar exp would not be):
Cody-Waite range reduction and the degree-7 polynomial of Cephes' expf, within
3e-7 relative error (a few units in float32's last place) over [-87, 0], tested
against float64 exp.

The kernels are compiled on first use and cached beside this module
(`cache=True`), so later processes load them in well under a second.
"""

import math

import numba
import numpy as np

# Reassociation lets the compiler vectorise sums and dot products (a different order of
# summation, nothing approximate); contraction fuses multiply-adds.
_FAST = {'reassoc', 'contract', 'nsz'}

_LOG2_E = np.float32(1.4426950408889634)
# ln 2 split in two so that k ln2 is exact for the k of float32 range reduction.
_LN2_HIGH = np.float32(0.693359375)
_LN2_LOW = np.float32(-2.12194440e-4)
# Below this exp underflows float32's normal range; clamping costs < 1e-37 absolute.
_MIN_EXPONENT = np.float32(-87.0)
_EXPONENT_BITS = 23  # float32 mantissa width: 2^k is k << 23 added to the bits


@numba.njit(fastmath=_FAST, cache=True, inline='always')
def _exp_negative(x):
  """exp(x) for float32 x <= 0, as (mantissa polynomial, power-of-two exponent k).

  The caller scales by 2^k, adding k << 23 to the result's bits, in a loop of its
  own: scalar bit casts would stop the vectoriser.
  """
  x = max(x, _MIN_EXPONENT)
  k = np.floor(x * _LOG2_E + np.float32(0.5))
  f = x - k * _LN2_HIGH - k * _LN2_LOW
  y = np.float32(1.9875691500e-4)
  y = y * f + np.float32(1.3981999507e-3)
  y = y * f + np.float32(8.3334519073e-3)
  y = y * f + np.float32(4.1665795894e-2)
  y = y * f + np.float32(1.6666665459e-1)
  y = y * f + np.float32(5.0000001201e-1)
  return y * f * f + f + np.float32(1.0), np.int32(k)


@numba.njit(fastmath=_FAST, cache=True)
def exp_negative(values):
  """exp(values) for a float32 array of values <= 0: `_exp_negative` over an array (tests)."""
  out = np.empty_like(values)
  flat_in, flat_out = values.ravel(), out.ravel()
  exponents = np.empty(flat_in.size, np.int32)
  for i in range(flat_in.size):
    flat_out[i], exponents[i] = _exp_negative(flat_in[i])
  bits = flat_out.view(np.int32)
  for i in range(flat_in.size):
    bits[i] += exponents[i] << _EXPONENT_BITS
  return out


@numba.njit(fastmath=_FAST, cache=True, inline='always')
def _column_terms(query, points, c, shared, point_levels):
  """The (x, y, t) part of r^2 of column c with each point (the same for every level),
  and the points' scaled pressures, into `shared` and `point_levels`."""
  for i in range(points.shape[1]):
    dx = query[c, 0] - points[c, i, 0]
    dy = query[c, 1] - points[c, i, 1]
    dt = query[c, 2] - points[c, i, 3]
    shared[i] = dx * dx + dy * dy + dt * dt
    point_levels[i] = points[c, i, 2]


@numba.njit(fastmath=_FAST, cache=True)
def correlations(levels, query, points, out):
  """Kernel correlations exp(-r) between wind-column levels and window points, float32.

  Args:
    levels: float32 [C, L], the column's pressures / their length scale.
    query: float64 [C, 3], each column's scaled (x, y, t).
    points: float64 [C, n, 4], each window's scaled (x, y, pressure, t).
    out: float32 [C, L, n], filled with exp(-r), r the Euclidean distance between
      (query x, y, level, query t) and the point.
  """
  n = points.shape[1]
  shared = np.empty(n, np.float32)
  point_levels = np.empty(n, np.float32)
  exponents = np.empty(n, np.int32)
  for c in range(levels.shape[0]):
    _column_terms(query, points, c, shared, point_levels)
    for level_index in range(levels.shape[1]):
      row = out[c, level_index]
      level = levels[c, level_index]
      for i in range(n):
        dp = level - point_levels[i]
        row[i], exponents[i] = _exp_negative(-math.sqrt(dp * dp + shared[i]))
      bits = row.view(np.int32)
      for i in range(n):
        bits[i] += exponents[i] << _EXPONENT_BITS


@numba.njit(fastmath=_FAST, cache=True)
def posterior_means_float32(queries, points, valid, alpha, kernel_variance, out):
  """`posterior_means` in float32 with the vectorised `_exp_negative` (several times
  faster; within about 1e-5 of the float64 means, tested), for many query points that
  feed features rather than decisions (lookahead.py). Arguments as `posterior_means`."""
  n = points.shape[1]
  compact = np.empty((6, n), np.float32)  # each valid point's x, y, p, t, alpha u, v
  terms = np.empty(n, np.float32)
  exponents = np.empty(n, np.int32)
  for b in range(queries.shape[0]):
    count = 0
    for i in range(n):
      if valid[b, i]:
        for k in range(4):
          compact[k, count] = points[b, i, k]
        compact[4, count] = alpha[b, i, 0]
        compact[5, count] = alpha[b, i, 1]
        count += 1
    for m in range(queries.shape[1]):
      qx, qy = np.float32(queries[b, m, 0]), np.float32(queries[b, m, 1])
      qp, qt = np.float32(queries[b, m, 2]), np.float32(queries[b, m, 3])
      for i in range(count):
        dx = qx - compact[0, i]
        dy = qy - compact[1, i]
        dp = qp - compact[2, i]
        dt = qt - compact[3, i]
        terms[i], exponents[i] = _exp_negative(-np.sqrt(dx * dx + dy * dy + dp * dp + dt * dt))
      bits = terms.view(np.int32)
      for i in range(count):
        bits[i] += exponents[i] << _EXPONENT_BITS
      mean_u = np.float32(0.0)
      mean_v = np.float32(0.0)
      for i in range(count):
        mean_u += terms[i] * compact[4, i]
        mean_v += terms[i] * compact[5, i]
      out[b, m, 0] = kernel_variance * mean_u
      out[b, m, 1] = kernel_variance * mean_v


@numba.njit(fastmath=_FAST, cache=True)
def posterior_means(queries, points, valid, alpha, kernel_variance, out):
  """GP posterior means k*^T alpha at M points per balloon, in float64.

  Args:
    queries: float64 [B, M, 4], the scaled (x, y, pressure, t) of each query point.
    points: float64 [B, n, 4], each window's scaled (x, y, pressure, t).
    valid: bool [B, n], the window's used slots.
    alpha: float64 [B, n, 2], Q y of each window (zero on unused slots).
    kernel_variance: the kernel's variance (3.6^2).
    out: float64 [B, M, 2], filled with the posterior mean of (error u, error v).
  """
  for b in range(queries.shape[0]):
    for m in range(queries.shape[1]):
      mean_u = 0.0
      mean_v = 0.0
      for i in range(points.shape[1]):
        if not valid[b, i]:
          continue
        dx = queries[b, m, 0] - points[b, i, 0]
        dy = queries[b, m, 1] - points[b, i, 1]
        dp = queries[b, m, 2] - points[b, i, 2]
        dt = queries[b, m, 3] - points[b, i, 3]
        correlation = math.exp(-math.sqrt(dx * dx + dy * dy + dp * dp + dt * dt))
        mean_u += correlation * alpha[b, i, 0]
        mean_v += correlation * alpha[b, i, 1]
      out[b, m, 0] = kernel_variance * mean_u
      out[b, m, 1] = kernel_variance * mean_v


@numba.njit(fastmath=_FAST, cache=True)
def correlations_float64(levels, query, points, out):
  """`correlations` in float64 with libm's exp (levels and out float64): slower, for
  checking the float32 path against exact results."""
  n = points.shape[1]
  shared = np.empty(n)
  point_levels = np.empty(n)
  for c in range(levels.shape[0]):
    _column_terms(query, points, c, shared, point_levels)
    for level_index in range(levels.shape[1]):
      for i in range(n):
        dp = levels[c, level_index] - point_levels[i]
        out[c, level_index, i] = math.exp(-math.sqrt(dp * dp + shared[i]))


@numba.njit(fastmath=_FAST, cache=True)
def slide(precision, weights, alpha, valid, points, errors, rows, slots, full, new_points,
          new_errors, kernel_variance, noise, block_size):
  """Puts a new point in slot `slots[r]` of balloon `rows[r]`, first removing the point
  there where `full[r]`, with one symmetric rank-2 update of its inverse Q.

  With q = Q[:, s] of the removed point (0 if none), c the new point's kernel column
  over the remaining points and g = Q' c = Q c - q (q.c) / q_ss its gain under the
  downdated inverse Q', e = d - c.g, and h = g with h[s] = -1, the new inverse is
  Q - q q^T / q_ss + h h^T / e, and row and column s hold -g / e and 1 / e exactly
  (the block-inverse formula). The same pass writes alpha = Q y, and a second one over
  the balloon's Q, still in cache, predict's float32 weights: the block upper triangle
  of Q with its diagonal blocks halved (blocks of `block_size` slots; lower blocks stay
  zero), then alpha's two columns.

  Args:
    precision: float64 [B, n, n], the inverses Q, updated in place.
    weights: float32 [B, n, n + 2], predict's copy, rewritten for the rows.
    alpha: float64 [B, n, 2], Q y, rewritten for the rows.
    valid, points, errors: the windows' slot flags [B, n], scaled points [B, n, 4]
      and measured errors [B, n, 2], updated for the new point.
    rows, slots, full: int64 [R], int64 [R], bool [R].
    new_points, new_errors: float64 [R, 4] (scaled) and [R, 2].
    kernel_variance, noise: the kernel's scale and the observation noise.
    block_size: slots per block of the weights' triangle.
  """
  n = precision.shape[1]
  removed = np.empty(n)
  cross = np.empty(n)
  gain = np.empty(n)
  errors_u = np.empty(n)     # contiguous copies: strided reads would stop the vectoriser
  errors_v = np.empty(n)
  for r in range(rows.shape[0]):
    b, s = rows[r], slots[r]
    q = precision[b]
    if full[r]:
      removed[:] = q[s]
      removed_weight = -1.0 / removed[s]
    else:
      removed[:] = 0.0
      removed_weight = 0.0
    valid[b, s] = False
    for j in range(n):
      if valid[b, j]:
        d2 = 0.0
        for k in range(4):
          d = points[b, j, k] - new_points[r, k]
          d2 += d * d
        cross[j] = kernel_variance * math.exp(-math.sqrt(d2))
      else:
        cross[j] = 0.0
    removed_cross = 0.0
    for j in range(n):
      removed_cross += removed[j] * cross[j]
    removed_cross *= removed_weight
    for i in range(n):
      total = 0.0
      row = q[i]
      for j in range(n):
        total += row[j] * cross[j]
      gain[i] = total + removed[i] * removed_cross
    gain[s] = 0.0
    schur = kernel_variance + noise
    for j in range(n):
      schur -= cross[j] * gain[j]
    added_weight = 1.0 / schur
    valid[b, s] = True
    points[b, s] = new_points[r]
    errors[b, s] = new_errors[r]
    for j in range(n):
      errors_u[j] = errors[b, j, 0]
      errors_v[j] = errors[b, j, 1]
    # h = gain with h[s] = -1; rows other than s get the rank-2 update, row and column
    # s their exact values.
    gain[s] = -1.0
    for i in range(n):
      row = q[i]
      if i == s:
        for j in range(n):
          row[j] = -gain[j] * added_weight
        row[s] = added_weight
      else:
        a = removed[i] * removed_weight
        h = gain[i] * added_weight
        for j in range(n):
          row[j] += a * removed[j] + h * gain[j]
        row[s] = -gain[i] * added_weight
      alpha_u = 0.0
      alpha_v = 0.0
      for j in range(n):
        alpha_u += row[j] * errors_u[j]
        alpha_v += row[j] * errors_v[j]
      alpha[b, i, 0] = alpha_u
      alpha[b, i, 1] = alpha_v
    # A second pass over this balloon's Q, in cache by now (shared with write_weights).
    _write_weights(q, alpha[b], weights[b], block_size)


@numba.njit(fastmath=_FAST, cache=True, inline='always')
def _write_weights(q, alpha, out, block_size):
  """Predict's weights of one balloon from its Q [n, n] and alpha [n, 2] into out [n, n + 2]:
  each row of Q from its diagonal block on (that block halved), then alpha's two entries;
  entries left of the diagonal block are not touched (they stay zero)."""
  n = q.shape[0]
  for i in range(n):
    start = (i // block_size) * block_size
    # Slices, not offset indices: the compiler cannot tell start + j >= 0, and the
    # negative-index check it then keeps stops the vectoriser (5x slower).
    row = q[i, start:]
    out_row = out[i, start:n]
    for j in range(row.shape[0]):
      out_row[j] = row[j]
    diagonal = out_row[:block_size]
    for j in range(diagonal.shape[0]):
      diagonal[j] *= 0.5
    out[i, n] = alpha[i, 0]
    out[i, n + 1] = alpha[i, 1]


@numba.njit(fastmath=_FAST, cache=True)
def write_weights(precision, alpha, weights, rows, block_size):
  """Rewrites predict's float32 weights (see `slide`) of balloons `rows` from Q and alpha."""
  for b in rows:
    weights[b] = 0.0
    _write_weights(precision[b], alpha[b], weights[b], block_size)


@numba.njit(cache=True)
def forecast_columns(grid, rows, corner, weight, pressure, start, spacing, out_u, out_v):
  """Interpolates forecast grids to query columns: trilinear in (t, x, y) to the grid's
  pressure column, then linear in pressure (wind_forecast.WindForecast.query).

  Args:
    grid: float32 [B, T, X, Y, P, 2], the forecast fields.
    rows: int [N], the balloon of each query.
    corner: int [N, 3], the lower grid index in (t, x, y) of each query.
    weight: float64 [N, 3], the interpolation weight towards the upper index.
    pressure: float64 [N, L], query pressures (clamped to the pressure grid here).
    start, spacing: the pressure grid's first level and spacing.
    out_u, out_v: float64 [N, L], filled with the interpolated wind.
  """
  size = grid.shape[4]
  column = np.empty((size, 2))
  for r in range(rows.shape[0]):
    column[:] = 0.0
    for dt in range(2):
      wt = weight[r, 0] if dt else 1.0 - weight[r, 0]
      for dx in range(2):
        wx = weight[r, 1] if dx else 1.0 - weight[r, 1]
        for dy in range(2):
          wy = weight[r, 2] if dy else 1.0 - weight[r, 2]
          cell = grid[rows[r], corner[r, 0] + dt, corner[r, 1] + dx, corner[r, 2] + dy]
          w = wt * wx * wy
          for k in range(size):
            column[k, 0] += w * cell[k, 0]
            column[k, 1] += w * cell[k, 1]
    for level in range(pressure.shape[1]):
      position = min(max((pressure[r, level] - start) / spacing, 0.0), size - 1.0)
      index = min(int(position), size - 2)
      frac = position - index
      out_u[r, level] = column[index, 0] + frac * (column[index + 1, 0] - column[index, 0])
      out_v[r, level] = column[index, 1] + frac * (column[index + 1, 1] - column[index, 1])
