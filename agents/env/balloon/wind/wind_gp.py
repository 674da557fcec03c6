"""Gaussian-process estimate of the forecast error from a balloon's own measurements (§11).

Each agent step a balloon measures the forecast error at its position (truth -
forecast). The wind column of its observation is the forecast plus the GP
posterior mean of those errors, and the column's uncertainty is the GP
posterior variance / 3.6^2. Spec §11:

- kernel 3.6^2 exp(-r), r the Euclidean distance after dividing by the length
  scales (357 km, 357 km, 326 Pa, 9.6 h) -- Matern nu = 1/2;
- observation noise 0.05 on the diagonal; u and v share the kernel;
- only measurements from the last 6 hours count (at most 120 points at one per
  180 s step);
- with no measurements the estimate is the forecast (mean 0) and the
  uncertainty 0 (variance 0) -- as the spec says, although the prior variance
  would be 3.6^2.

  gp = WindGP(num_balloons)
  gp.reset(indices)                                    # forget those balloons' points
  gp.observe(x, y, pressure, t, error_u, error_v)      # arrays [B], one point each
  mean_u, mean_v, variance = gp.predict(x, y, pressures, t)   # pressures [B, L]
  # or both at once, chunk by chunk (same results; predict's weights still in cache):
  mean_u, mean_v, variance = gp.observe_and_predict(x, y, pressure, t, error_u, error_v,
                                                    pressures)
  mean_u, mean_v = gp.mean_at(x, y, pressure, t)       # means only, at points [B, M]

Incremental exact inverse. BLE refits a GP from scratch every step. Here every
balloon keeps the inverse Q = (K + 0.05 I)^-1 of its window's kernel matrix in
a fixed block of `max_points` slots (unused slots hold zero rows and columns)
and updates it exactly as points come and go:

- removing slot s (Schur complement): Q <- Q - Q[:, s] Q[s, :] / Q[s, s];
- adding a point with kernel column c and prior variance d (block inverse):
  g = Q c, e = d - c.g, Q <- Q + g g^T / e, Q[s, :] = Q[:, s] = -g / e,
  Q[s, s] = 1 / e.

In the steady state (window full) both happen every step and are fused into
one symmetric rank-2 update (kernels.slide, compiled with Numba). O(n^2) per
balloon; every `refresh_interval` observations a balloon's Q is recomputed
from scratch, though tests show no drift (1e-11 after 960 steps without it).
The same kernel rewrites alpha = Q y and predict's float32 weights (below) while
the balloon's Q is in cache, so a step moves each 115 KB inverse through memory once.

Prediction. alpha = Q y gives the mean k*^T alpha; the variance is
3.6^2 - k*^T Q k*. All levels of a column share (x, y, t), so the
horizontal-and-time part of r^2 is computed once per point and only the
pressure term per level; the correlations exp(-r) over [L, n] are one compiled
pass (kernels.correlations, float32). Q is symmetric, so k*^T Q k* = 2 k*^T U k*
with U the block upper triangle of Q (16 x 16 blocks, diagonal blocks halved),
which the weights hold in float32 beside alpha: the [L, n] x [n, n] product k* Q
shrinks to 36 of its 64 block products, the block column j only as tall as the
triangle (exact; just a different order of summation; chunks of fewer than
MIN_BLOCKED_ROWS balloons multiply by all of U, zeros included). It runs as
float32 GEMM near the core's peak. Asking only for the levels actually shown
(the reachable range, or `needed`) cuts predict in proportion. Work is done in
chunks of balloons so the [chunk, L, n] blocks stay in cache, with BLAS held to
one thread (blas_threads.py). Measured: about 19 CPU us
per balloon-step for observe and 42 us for predict at L = 121 levels, n = 120,
on this project's 2-core machine (numpy alone took 27 us and 59 us).
"""

import numpy as np

from agents.env.balloon.wind import blas_threads, kernels, wind_forecast

KERNEL_VARIANCE = 3.6 ** 2
OBSERVATION_NOISE = 0.05
# Length scales of (x, y, pressure, time) in SI units (m, m, Pa, s), §11.
LENGTH_SCALES = np.array([357e3, 357e3, 326.0, 9.6 * 3600.0])
WINDOW_S = 6 * 3600.0
MAX_POINTS = 120
# Chunks of fewer balloons use the plain forms (fewer numpy calls) of predict's
# block-triangular product and observe's matrix-vector product.
MIN_BLOCKED_ROWS = 4


class WindGP:
  """Batched GP over the forecast errors each balloon of a slab has measured (§11)."""

  def __init__(self, num_balloons, max_points=MAX_POINTS, refresh_interval=MAX_POINTS,
               chunk_size=16, predict_dtype=np.float32, max_blas_threads=1,
               block_size=16):
    """Creates a slab with no measurements.

    Args:
      num_balloons: number of balloons B in the slab.
      max_points: window capacity per balloon; when full the oldest point drops.
      refresh_interval: recompute a balloon's inverse from scratch after this
        many observations (0 or None: never).
      chunk_size: balloons processed together (keeps the work in cache).
      predict_dtype: float type of predict's [chunk, L, n] kernel block and
        its products with Q. float32 is about twice as fast (the slab of 256
        steps about 45 % slower with float64). Against float64 its errors reach
        2.5e-3 (m/s)^2 in variance (2e-4 in the uncertainty feature) when a balloon
        holds altitude for 48 h, 1.3e-3 (1e-4) with random actions; the bearing
        feature moves by up to 7e-5 (tests/env/balloon/wind_gp_precision_test.py). The cause is Q
        itself rounded to float32 (entries up to 1/0.05 = 20, whose products with
        the correlations cancel to ~0.08), not the final sum. The
        window's state and its updates are always float64.
      max_blas_threads: BLAS threads during the GP's calls (None: leave BLAS as it
        is). Its matrices are small (120 x 120 per balloon), and a threaded
        BLAS spends more on waking threads than it gains (blas_threads.py).
      block_size: slots per block of predict's block-triangular product with Q
        (16: AVX-512 float32 width, fastest measured on this project's machine).
    """
    if num_balloons < 1:
      raise ValueError(f'WindGP needs num_balloons >= 1, got {num_balloons}.')
    if max_points < 1:
      raise ValueError(f'WindGP needs max_points >= 1, got {max_points}.')
    if chunk_size < 1:
      raise ValueError(f'WindGP needs chunk_size >= 1, got {chunk_size}.')
    self.num_balloons = int(num_balloons)
    self.max_points = int(max_points)
    self._refresh_interval = int(refresh_interval or 0)
    self._chunk_size = int(chunk_size)
    self._blas_threads = max_blas_threads
    self._dtype = np.dtype(predict_dtype)
    if self._dtype not in (np.float32, np.float64):
      raise ValueError(f'WindGP predict_dtype must be float32 or float64, got {self._dtype}.')
    b, n = self.num_balloons, self.max_points
    self._points = np.zeros((b, n, 4))          # scaled (x, y, p, t) of each slot
    self._times = np.zeros((b, n))              # raw t (s), for the 6 h window
    self._errors = np.zeros((b, n, 2))          # measured (error_u, error_v)
    self._valid = np.zeros((b, n), bool)
    self._precision = np.zeros((b, n, n))       # Q = (K + noise I)^-1 on valid slots
    self._alpha = np.zeros((b, n, 2))           # Q @ errors
    # predict's copy of Q and alpha in predict_dtype: the block upper triangle of Q with
    # its diagonal blocks halved (lower blocks zero), then alpha (kernels.slide).
    self._weights = np.zeros((b, n, n + 2), self._dtype)
    self._since_refresh = np.zeros(b, np.int64)
    self._scratch_buffer = None
    self._block_size = int(block_size)
    if self._block_size < 1:
      raise ValueError(f'WindGP needs block_size >= 1, got {block_size}.')
    self._block_edges = [*range(0, n, self._block_size), n]
    self._correlations = (kernels.correlations if self._dtype == np.float32
                          else kernels.correlations_float64)

  @property
  def num_points(self):
    """Number of measurements in each balloon's window, int [B]."""
    return self._valid.sum(axis=1)

  def reset(self, indices=None):
    """Forgets all measurements of the balloons in `indices` (None: all)."""
    indices = wind_forecast.query_indices(indices, self.num_balloons, 'WindGP.reset')
    self._valid[indices] = False
    self._precision[indices] = 0.0
    self._alpha[indices] = 0.0
    self._weights[indices] = 0.0
    self._errors[indices] = 0.0
    self._since_refresh[indices] = 0


  def observe(self, x, y, pressure, t, error_u, error_v, indices=None):
    """Adds one measurement per balloon and slides its 6-hour window.

    Points more than 6 hours older than t are dropped first; if the window is
    then still full, its oldest point is dropped.

    Args:
      x, y, pressure, t: position (m, m, Pa) and time (s) of the measurements.
      error_u, error_v: measured forecast errors (truth - forecast) in m/s.
      indices: balloons that measure (None: all), each listed once. Every
        array has one entry per measuring balloon.
    """
    if indices is not None:
      indices = wind_forecast.check_indices(indices, self.num_balloons, 'WindGP.observe')
      if len(np.unique(indices)) != len(indices):
        raise ValueError('WindGP.observe: a balloon index appears twice in indices.')
    rows = np.arange(self.num_balloons) if indices is None else indices
    new_points, times, new_errors = self._check_observation(
        len(rows), x, y, pressure, t, error_u, error_v, 'WindGP.observe')
    with blas_threads.limit_blas_threads(self._blas_threads):
      for start in range(0, len(rows), self._chunk_size):
        part = slice(start, start + self._chunk_size)
        self._observe_chunk(rows[part], new_points[part], times[part], new_errors[part])

  def predict(self, x, y, pressures, t, needed=None):
    """Posterior of the forecast error over a pressure column per balloon.

    Args:
      x, y, t: position (m) and time (s) of each balloon, [B].
      pressures: query pressures [B, L] in Pa.
      needed: optional bool [B, L], the levels the caller will use. Work is
        skipped for levels no balloon of a chunk needs; skipped levels read
        mean 0 and variance 3.6^2 (the prior). Levels are cheapest to skip when
        the needed ones are contiguous in each column (e.g. a reachable range).

    Returns:
      (mean_error_u, mean_error_v, variance), each float64 [B, L]. The variance
      is in (m/s)^2, within [0, 3.6^2]; it is 0 for a balloon with no
      measurements (§11: the estimate is then the forecast, uncertainty 0).
    """
    query, levels, needed = self._check_prediction(x, y, pressures, t, needed, 'WindGP.predict')
    mean, variance = self._empty_prediction(levels.shape)
    with blas_threads.limit_blas_threads(self._blas_threads):
      for start in range(0, self.num_balloons, self._chunk_size):
        part = slice(start, start + self._chunk_size)
        self._predict_chunk(part, query, levels, needed, mean, variance)
    return self._finish_prediction(mean, variance)

  def observe_and_predict(self, x, y, pressure, t, error_u, error_v, pressures, needed=None):
    """`observe` for every balloon, then `predict` at the same (x, y, t).

    Same results as the two calls, but done chunk by chunk, so the predict
    weights that observe has just written for a chunk (58 KB per balloon at 120
    points) are still in cache -- the usual agent step: measure where the
    balloon is, then build its wind column there.

    Args:
      x, y, pressure, t, error_u, error_v: as in `observe`, [B].
      pressures, needed: as in `predict`, [B, L].

    Returns:
      As `predict`.
    """
    where = 'WindGP.observe_and_predict'
    new_points, times, new_errors = self._check_observation(
        self.num_balloons, x, y, pressure, t, error_u, error_v, where)
    query, levels, needed = self._check_prediction(x, y, pressures, t, needed, where)
    mean, variance = self._empty_prediction(levels.shape)
    rows = np.arange(self.num_balloons)
    with blas_threads.limit_blas_threads(self._blas_threads):
      for start in range(0, self.num_balloons, self._chunk_size):
        part = slice(start, start + self._chunk_size)
        self._observe_chunk(rows[part], new_points[part], times[part], new_errors[part])
        self._predict_chunk(part, query, levels, needed, mean, variance)
    return self._finish_prediction(mean, variance)

  def mean_at(self, x, y, pressure, t, float32=False):
    """Posterior mean of the forecast error at M arbitrary points per balloon.

    The same mean as `predict`'s, in float64, at points that need not share (x, y, t)
    (a planner's rollouts: planner.py); no variance.

    Args:
      x, y, pressure, t: float arrays [B, M]: positions (m, m, Pa) and times (s).
      float32: compute in float32 with a vectorised exponential
        (`kernels.posterior_means_float32`, about 10x faster, within about 1e-5 m/s).

    Returns:
      (mean_error_u, mean_error_v), each float64 [B, M]; 0 for a balloon with no
      measurements.
    """
    arrays = [np.asarray(a, np.float64) for a in (x, y, pressure, t)]
    shape = arrays[0].shape
    if len(shape) != 2 or shape[0] != self.num_balloons or any(
        array.shape != shape for array in arrays):
      raise ValueError(f'WindGP.mean_at: x, y, pressure and t must share a shape '
                       f'({self.num_balloons}, M), got {[a.shape for a in arrays]}.')
    queries = np.stack(arrays, axis=-1) / LENGTH_SCALES
    out = np.empty((*shape, 2))
    means = kernels.posterior_means_float32 if float32 else kernels.posterior_means
    means(queries, self._points, self._valid, self._alpha, KERNEL_VARIANCE, out)
    return out[..., 0], out[..., 1]

  def _check_observation(self, count, x, y, pressure, t, error_u, error_v, where):
    """Validates measurement arrays; returns scaled points, times and errors."""
    arrays = [np.asarray(a, np.float64) for a in (x, y, pressure, t, error_u, error_v)]
    for name, array in zip(('x', 'y', 'pressure', 't', 'error_u', 'error_v'), arrays):
      if array.shape != (count,):
        raise ValueError(f'{where}: {name} must have shape ({count},), got {array.shape}.')
    x, y, pressure, t, error_u, error_v = arrays
    new_points = np.stack([x, y, pressure, t], axis=-1) / LENGTH_SCALES
    return new_points, t, np.stack([error_u, error_v], axis=-1)

  def _check_prediction(self, x, y, pressures, t, needed, where):
    """Validates query arrays; returns scaled (x, y, t) [B, 3], levels [B, L], needed."""
    b = self.num_balloons
    x, y, t = (np.asarray(a, np.float64) for a in (x, y, t))
    pressures = np.asarray(pressures, np.float64)
    for name, array in (('x', x), ('y', y), ('t', t)):
      if array.shape != (b,):
        raise ValueError(f'{where}: {name} must have shape ({b},), got {array.shape}.')
    if pressures.ndim != 2 or pressures.shape[0] != b:
      raise ValueError(f'{where}: pressures must have shape ({b}, L), got {pressures.shape}.')
    if needed is not None:
      needed = np.asarray(needed, bool)
      if needed.shape != pressures.shape:
        raise ValueError(f'{where}: needed must have shape {pressures.shape}, '
                         f'got {needed.shape}.')
    query = np.stack([x, y, t], axis=-1) / LENGTH_SCALES[[0, 1, 3]]
    levels = (pressures / LENGTH_SCALES[2]).astype(self._dtype)
    return query, levels, needed

  @staticmethod
  def _empty_prediction(shape):
    return np.zeros((*shape, 2)), np.full(shape, KERNEL_VARIANCE)

  def _finish_prediction(self, mean, variance):
    # §11: with no measurements the uncertainty is 0 (and the mean already 0).
    variance[~self._valid.any(axis=1)] = 0.0
    return mean[..., 0], mean[..., 1], variance

  def _predict_chunk(self, part, query, levels, needed, mean, variance):
    """Fills mean[part] and variance[part] (a slice of balloons)."""
    band = slice(0, levels.shape[1])
    if needed is not None:
      used = np.flatnonzero(needed[part].any(axis=0))
      if not len(used):
        return
      band = slice(used[0], used[-1] + 1)
    points = self._points[part]
    correlation, product = self._scratch(points.shape[0], band.stop - band.start)
    # correlation = cross-kernel / 3.6^2. Unused slots need no mask: their rows and
    # columns of Q, and so their entries of alpha, are zero.
    self._correlations(np.ascontiguousarray(levels[part, band]), query[part], points,
                       correlation)
    # var = 3.6^2 - k*^T Q k*, and k*^T Q k* = 2 k*^T U k* for U the block upper triangle
    # of Q with its diagonal blocks halved (Q is symmetric), which `self._weights` holds.
    # k* U is built block column by block column, each block column only as tall as the
    # triangle: at 16-slot blocks and 120 slots 36 of 64 block products, a little over
    # half the flops of k* Q. alpha rides as two more columns of the last block (whose
    # column is full height), giving the mean.
    n = self.max_points
    weights = self._weights[part]
    # A chunk of a few balloons spends more on the blocks' extra numpy calls than they
    # save; it multiplies by all of U at once (its lower blocks are zero).
    edges = self._block_edges if points.shape[0] >= MIN_BLOCKED_ROWS else (0, n)
    for low, high in zip(edges[:-1], edges[1:]):
      # The last block column is full height: it takes alpha's two columns along.
      stop = n + 2 if high == n else high
      np.matmul(correlation[..., :high], weights[:, :high, low:stop], out=product[..., low:stop])
    # Cross-kernels are 3.6^2 correlations: mean = 3.6^2 c^T alpha, k*^T Q k* = 2 3.6^4 c^T U c.
    mean[part, band] = KERNEL_VARIANCE * product[..., n:]
    explained = 2.0 * KERNEL_VARIANCE ** 2 * np.einsum('cln,cln->cl', product[..., :n],
                                                        correlation)
    variance[part, band] = np.clip(KERNEL_VARIANCE - explained, 0.0, KERNEL_VARIANCE)

  def _scratch(self, num_rows, num_levels):
    """Work arrays [num_rows, num_levels, max_points] (correlations) and
    [num_rows, num_levels, max_points + 2] (products with Q and alpha), reused across calls
    (fresh MB-sized arrays would be page-faulted in every chunk)."""
    n = self.max_points
    size = num_rows * num_levels * n
    wide = num_rows * num_levels * (n + 2)
    if self._scratch_buffer is None or self._scratch_buffer.shape[1] < wide:
      self._scratch_buffer = np.empty((2, wide), self._dtype)
    return (self._scratch_buffer[0, :size].reshape(num_rows, num_levels, n),
            self._scratch_buffer[1, :wide].reshape(num_rows, num_levels, n + 2))

  def _observe_chunk(self, rows, new_points, new_times, new_errors):
    """observe() for a chunk of balloons `rows` (an index array)."""
    times = self._times[rows]
    # Drop every point older than the 6 h window: none or one per balloon when
    # observe is called every step, so this loop rarely runs more than once.
    while True:
      valid = self._valid[rows]
      expired = valid & (new_times[:, None] - times > WINDOW_S)
      has_expired = expired.any(axis=1)
      if not has_expired.any():
        break
      which = np.flatnonzero(has_expired)
      self._remove(rows[which], expired[which].argmax(axis=1))
    full = valid.all(axis=1)
    oldest = np.where(valid, times, np.inf).argmin(axis=1)
    first_free = (~valid).argmax(axis=1)
    slots = np.where(full, oldest, first_free)
    self._slide(rows, slots, full, new_points, new_times, new_errors)
    self._since_refresh[rows] += 1
    if self._refresh_interval:
      due = rows[self._since_refresh[rows] >= self._refresh_interval]
      if len(due):
        self._refresh(due)

  def _slide(self, rows, slots, full, new_points, new_times, new_errors):
    """Puts a new point in slot `slots[i]` of balloon `rows[i]` (an index array), first
    removing the point there where `full[i]`: one symmetric rank-2 update of Q, with
    alpha and predict's weights rewritten in the same pass (kernels.slide)."""
    kernels.slide(self._precision, self._weights, self._alpha, self._valid, self._points,
                     self._errors, rows, slots, full, new_points, new_errors, KERNEL_VARIANCE,
                     OBSERVATION_NOISE, self._block_size)
    self._times[rows, slots] = new_times

  def _remove(self, rows, slots):
    """Removes slot `slots[i]` of balloon `rows[i]` (Schur-complement downdate)."""
    precision = self._precision[rows]
    arange = np.arange(len(rows))
    column = precision[arange, :, slots]
    pivot = column[arange, slots]
    precision -= column[:, :, None] * (column / pivot[:, None])[:, None, :]
    precision[arange, slots, :] = 0.0
    precision[arange, :, slots] = 0.0
    self._precision[rows] = precision
    self._valid[rows, slots] = False
    self._errors[rows, slots] = 0.0
    self._alpha[rows] = np.matmul(precision, self._errors[rows])
    kernels.write_weights(self._precision, self._alpha, self._weights, rows, self._block_size)

  def _refresh(self, rows):
    """Recomputes Q from scratch for balloons `rows` (bounds accumulated round-off)."""
    valid = self._valid[rows]
    points = self._points[rows]
    distance = np.sqrt(((points[:, :, None, :] - points[:, None, :, :]) ** 2).sum(-1))
    both_valid = valid[:, :, None] & valid[:, None, :]
    kernel = np.where(both_valid, KERNEL_VARIANCE * np.exp(-distance), 0.0)
    # Unused slots get an identity block so the matrix stays invertible, then zeroed.
    diagonal = np.where(valid, OBSERVATION_NOISE, 1.0)
    kernel += diagonal[:, :, None] * np.eye(self.max_points)
    precision = np.linalg.inv(kernel) * both_valid
    self._precision[rows] = precision
    self._alpha[rows] = np.matmul(precision, self._errors[rows])
    kernels.write_weights(self._precision, self._alpha, self._weights, rows, self._block_size)
    self._since_refresh[rows] = 0
