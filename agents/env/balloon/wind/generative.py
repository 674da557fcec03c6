"""BLE's generative forecast: the "offlineskies22" VAE decoder, run in NumPy.

BLE 1.0.1 draws each episode's forecast by decoding a 64-float standard-normal
latent with a learnt decoder (`balloon_learning_environment.generative.vae.Decoder`,
weights `models/offlineskies22_decoder.msgpack` of its wheel). The decoder is four
dense layers, 64 -> 1000 -> 1000 -> 1000 -> 4410 with ReLU between; the 4410
outputs are a 7 x 7 stream function for each of 90 (pressure, time) slices,
resized linearly to 23 x 23 (half-pixel centres, edges clamped, as
`jax.image.resize`), then differenced with centred differences and the border
cropped: u = d psi / d(axis 0), v = -d psi / d(axis 1), on BLE's grid of
21 x 21 x 10 pressures x 9 times. BLE queries the field with axis 0 as x, so its
wind is not divergence-free; we keep that convention.

  decoder = Decoder.load()                 # the weights, fetched once (ble_models)
  fields = decoder(latents)                # [K, 64] -> [K, 21, 21, 10, 9, 2] (BLE's axes)

  forecast = GenerativeForecast(num_balloons)
  forecast.sample(indices, rngs)           # a latent per balloon from its generator
  u, v = forecast.query(indices, x, y, pressure, t)   # as WindForecast.query

The latents come from the episode's NumPy generator (float64 normals rounded to
float32), not BLE's JAX keys, so seed N is not BLE's seed N.
"""

import functools
import io

import numpy as np

from agents.env.balloon import ble_models
from agents.env.balloon.wind import blas_threads, wind_forecast

LATENT_SIZE = 64
HIDDEN_SIZE = 1000
FLOW_WIDTH = 7
GRID_WIDTH = 21
NUM_PRESSURES = 10
NUM_TIMES = 9
NUM_SLICES = NUM_PRESSURES * NUM_TIMES
OUTPUT_SIZE = FLOW_WIDTH * FLOW_WIDTH * NUM_SLICES
LAYERS = ('Dense_0', 'Dense_1', 'Dense_2', 'Dense_3')
# Latents decoded per matrix product (padded to it): big enough to run BLAS near its peak,
# small enough that the hidden activations stay in cache.
CHUNK = 32


def resize_matrix(size_in: int, size_out: int) -> np.ndarray:
  """The [size_out, size_in] matrix of `jax.image.resize(..., method='linear')` on one axis.

  Output sample i sits at input coordinate (i + 0.5) size_in / size_out - 0.5; its
  weights are the triangle kernel at the input samples, normalised to sum to one
  (which clamps the edges).
  """
  position = (np.arange(size_out) + 0.5) * size_in / size_out - 0.5
  weights = np.maximum(0.0, 1.0 - np.abs(position[:, None] - np.arange(size_in)[None, :]))
  return weights / weights.sum(axis=1, keepdims=True)


@functools.cache
def _grid_operators():
  """(U, V), float32 [441, 49]: the stream function's 7 x 7 to u and v on the 21 x 21 grid.

  With R the 7 -> 23 resize, D = (R[2:] - R[:-2]) / 2 (centred difference, border
  cropped) and C = R[1:-1], a slice's u = D psi C^T and v = -C psi D^T, which in
  row-major flattening are kron(D, C) psi and -kron(C, D) psi.
  """
  resize = resize_matrix(FLOW_WIDTH, GRID_WIDTH + 2)
  difference, crop = (resize[2:] - resize[:-2]) / 2.0, resize[1:-1]
  return (np.kron(difference, crop).astype(np.float32),
          (-np.kron(crop, difference)).astype(np.float32))


def read_params(data: bytes) -> list:
  """The decoder's [(kernel, bias)] (float32) from the bytes of BLE's msgpack file.

  Each array is a msgpack extension of type 1 holding (shape, dtype, buffer), under
  params/Dense_k/{kernel, bias}.

  Raises:
    ble_models.WeightsError: the bytes are not such a file (one line).
  """
  import msgpack

  def ext_hook(code, payload):
    if code != 1:
      return msgpack.ExtType(code, payload)
    shape, dtype, buffer = msgpack.unpackb(payload)
    return np.frombuffer(buffer, dtype=np.dtype(dtype)).reshape(shape)

  try:
    tree = msgpack.Unpacker(io.BytesIO(data), ext_hook=ext_hook, max_buffer_size=len(data) + 1)
    tree = next(tree)
    params = tree['params']
    layers = [(np.asarray(params[name]['kernel'], np.float32),
               np.asarray(params[name]['bias'], np.float32)) for name in LAYERS]
  except Exception as error:  # msgpack's errors, missing keys, bad shapes: not the weights
    raise ble_models.WeightsError(
        f'not the offlineskies22 decoder weights: {type(error).__name__}: {error}.') from None
  sizes = [LATENT_SIZE] + [HIDDEN_SIZE] * 3 + [OUTPUT_SIZE]
  for index, (kernel, bias) in enumerate(layers):
    expected = (sizes[index], sizes[index + 1])
    if kernel.shape != expected or bias.shape != expected[1:]:
      raise ble_models.WeightsError(
          f'not the offlineskies22 decoder weights: {LAYERS[index]} has kernel {kernel.shape} '
          f'and bias {bias.shape}, not {expected} and {expected[1:]}.')
  return layers


class Decoder:
  """BLE's wind-field decoder: latents [K, 64] -> fields [K, 21, 21, 10, 9, 2] float32."""

  def __init__(self, params):
    """Args: params: [(kernel, bias)] of the four dense layers (`read_params`)."""
    self._params = [(np.ascontiguousarray(kernel, np.float32), np.asarray(bias, np.float32))
                    for kernel, bias in params]

  @classmethod
  def load(cls, path=None) -> 'Decoder':
    """The decoder of BLE's weights (see `ble_models.ensure`), read once per file."""
    return _load(ble_models.ensure(ble_models.OFFLINESKIES22, path))

  def stream_functions(self, latents):
    """The MLP's output as stream functions, float32 [K, 7, 7, 90] (the 4410 in C order)."""
    hidden = np.asarray(latents, np.float32)
    for index, (kernel, bias) in enumerate(self._params):
      hidden = hidden @ kernel + bias
      if index < len(self._params) - 1:
        np.maximum(hidden, 0.0, out=hidden)
    return hidden.reshape(-1, FLOW_WIDTH, FLOW_WIDTH, NUM_SLICES)

  def __call__(self, latents):
    """Decodes latents [K, 64] (or [64]) into BLE's fields [K, 21, 21, 10, 9, 2] (or one).

    Axes: x (-500 ... 500 km), y, pressure (5000 ... 14000 Pa), time (0 ... 48 h),
    (u, v) in m/s.
    """
    latents = np.asarray(latents, np.float32)
    single = latents.ndim == 1
    latents = latents.reshape(-1, LATENT_SIZE) if single else latents
    if latents.ndim != 2 or latents.shape[1] != LATENT_SIZE:
      raise ValueError(f'Decoder needs latents [K, {LATENT_SIZE}], got {latents.shape}.')
    fields = np.empty((len(latents), GRID_WIDTH, GRID_WIDTH, NUM_PRESSURES, NUM_TIMES, 2),
                      np.float32)
    to_u, to_v = _grid_operators()
    with blas_threads.limit_blas_threads(1):
      self._decode(latents, fields, to_u, to_v)
    return fields[0] if single else fields

  def _decode(self, latents, fields, to_u, to_v):
    # Always CHUNK rows per product (the last chunk padded with zeros): BLAS picks its
    # kernel by shape, and other shapes round differently (by up to 5e-5 m/s), so a
    # field would depend on how many balloons were reset with it. At a fixed shape a
    # row's result does not depend on the other rows.
    padded = np.zeros((CHUNK, LATENT_SIZE), np.float32)
    for start in range(0, len(latents), CHUNK):
      count = min(CHUNK, len(latents) - start)
      padded[:count] = latents[start:start + count]
      padded[count:] = 0.0
      psi = self.stream_functions(padded)[:count]
      psi = psi.reshape(count, FLOW_WIDTH * FLOW_WIDTH, NUM_SLICES)
      chunk = fields[start:start + count]
      # The 90 slices are pressure-major: slice k is (pressure k // 9, time k % 9).
      chunk[..., 0] = np.matmul(to_u, psi).reshape(chunk.shape[:-1])
      chunk[..., 1] = np.matmul(to_v, psi).reshape(chunk.shape[:-1])


@functools.lru_cache(maxsize=2)
def _load(path):
  with open(path, 'rb') as file:
    return Decoder(read_params(file.read()))


def to_grid(fields):
  """BLE's axes [K, X, Y, P, T, 2] to our forecast grid's [K, T, X, Y, P, 2]."""
  return np.ascontiguousarray(np.moveaxis(fields, 4, 1))


class GenerativeForecast(wind_forecast.WindForecast):
  """BLE's decoded forecast fields, one per balloon of a slab, queried as `WindForecast`."""

  def __init__(self, num_balloons, decoder=None):
    """Creates a slab of zero fields; call `sample` before querying.

    Args:
      num_balloons: number of balloons B in the slab.
      decoder: a `Decoder` (None: `Decoder.load()` at the first `sample`, fetching the
        weights if needed, so a slab built only for its spaces needs none).
    """
    super().__init__(num_balloons)
    self._decoder = decoder

  def sample(self, indices, rngs):
    """Decodes a new field for each balloon in `indices`: a latent from its Generator.

    Args:
      indices: int array [K] of balloons.
      rngs: sequence of K `numpy.random.Generator`, one per index.
    """
    indices = wind_forecast.check_indices(indices, self.num_balloons,
                                          'GenerativeForecast.sample')
    if len(rngs) != len(indices):
      raise ValueError(f'GenerativeForecast.sample got {len(indices)} indices but '
                       f'{len(rngs)} generators.')
    if not len(indices):
      return
    if self._decoder is None:
      self._decoder = Decoder.load()
    latents = np.stack([rng.standard_normal(LATENT_SIZE) for rng in rngs]).astype(np.float32)
    self._grid[indices] = to_grid(self._decoder(latents))
