"""Tests for agents/env/balloon/wind/generative.py: BLE's wind decoder in NumPy.

The linear part (resize, differences, axes) is checked against an independent
construction on random weights, without BLE's files. BLE's own decoded field
(testdata/ble_decoder_fields.npz, from ../shared/reference/ble/generative/) is
checked where BLE's weights are on this machine (`python -m agents.env.balloon.ble_models
fetch`); without them that test skips, saying so.
"""

import os
import unittest

import msgpack
import numpy as np

from agents.env.balloon import ble_models
from agents.env.balloon.wind import generative, wind_forecast

REFERENCE = os.path.join(os.path.dirname(__file__), 'testdata', 'ble_decoder_fields.npz')
SIZES = (64, 1000, 1000, 1000, 4410)


def random_params(seed=0, scale=0.05):
  rng = np.random.default_rng(seed)
  return [((rng.standard_normal((a, b)) * scale).astype(np.float32),
           (rng.standard_normal(b) * scale).astype(np.float32))
          for a, b in zip(SIZES[:-1], SIZES[1:])]


def msgpack_bytes(params):
  """Params in BLE's msgpack layout: params/Dense_k/{kernel, bias} as extensions of type 1."""
  def ext(array):
    return msgpack.ExtType(1, msgpack.packb((list(array.shape), array.dtype.name,
                                             array.tobytes())))
  tree = {'params': {f'Dense_{k}': {'kernel': ext(kernel), 'bias': ext(bias)}
                     for k, (kernel, bias) in enumerate(params)}}
  return msgpack.packb(tree)


def resize_reference(psi, size_out):
  """jax.image.resize's linear upsampling of the first two axes, with np.interp."""
  size_in = psi.shape[0]
  position = np.clip((np.arange(size_out) + 0.5) * size_in / size_out - 0.5, 0, size_in - 1)
  rows = np.stack([np.interp(position, np.arange(size_in), column)
                   for column in psi.reshape(size_in, -1).T], axis=-1)
  rows = rows.reshape(size_out, *psi.shape[1:])
  return np.stack([np.interp(position, np.arange(size_in), rows[i, :, k])
                   for i in range(size_out) for k in range(psi.shape[2])]).reshape(
                       size_out, psi.shape[2], size_out).transpose(0, 2, 1)


class DecoderMathTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.decoder = generative.Decoder(random_params())

  def test_resize_matrix_is_linear_with_clamped_edges(self):
    matrix = generative.resize_matrix(7, 23)
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0)
    np.testing.assert_array_equal(matrix[0], np.eye(7)[0])
    np.testing.assert_array_equal(matrix[-1], np.eye(7)[-1])
    values = np.random.default_rng(1).standard_normal(7)
    position = np.clip((np.arange(23) + 0.5) * 7 / 23 - 0.5, 0, 6)
    np.testing.assert_allclose(matrix @ values, np.interp(position, np.arange(7), values),
                               atol=1e-12)

  def test_fields_are_the_stream_functions_differences(self):
    latents = np.random.default_rng(2).standard_normal((3, 64)).astype(np.float32)
    fields = self.decoder(latents)
    self.assertEqual(fields.shape, (3, 21, 21, 10, 9, 2))
    self.assertEqual(fields.dtype, np.float32)
    psi = self.decoder.stream_functions(latents)[1].astype(np.float64)   # [7, 7, 90]
    big = resize_reference(psi, 23)                                       # [23, 23, 90]
    u = (big[2:, 1:-1] - big[:-2, 1:-1]) / 2.0    # d psi / d axis 0 (BLE's "dflow_dy")
    v = -(big[1:-1, 2:] - big[1:-1, :-2]) / 2.0   # -d psi / d axis 1
    scale = np.abs(u).max()
    np.testing.assert_allclose(fields[1, ..., 0], u.reshape(21, 21, 10, 9), atol=1e-6 * scale)
    np.testing.assert_allclose(fields[1, ..., 1], v.reshape(21, 21, 10, 9), atol=1e-6 * scale)
    # A latent decodes to the same bits alone as in any batch (episodes do not depend on
    # which balloons reset with them).
    np.testing.assert_array_equal(self.decoder(latents[2]), fields[2])
    many = np.concatenate([latents[::-1], np.ones((40, 64), np.float32)])
    np.testing.assert_array_equal(self.decoder(many)[0], fields[2])

  def test_reads_bles_msgpack_layout(self):
    params = random_params(seed=3, scale=0.01)
    read = generative.read_params(msgpack_bytes(params))
    for (kernel, bias), (read_kernel, read_bias) in zip(params, read):
      np.testing.assert_array_equal(read_kernel, kernel)
      np.testing.assert_array_equal(read_bias, bias)
    with self.assertRaisesRegex(ble_models.WeightsError, 'not the offlineskies22 decoder'):
      generative.read_params(b'\x93not msgpack of the decoder')
    params[1] = (params[1][0][:10], params[1][1])
    with self.assertRaisesRegex(ble_models.WeightsError, 'Dense_1 has kernel \\(10, 1000\\)'):
      generative.read_params(msgpack_bytes(params))

  def test_bad_latents_are_named(self):
    with self.assertRaisesRegex(ValueError, 'latents \\[K, 64\\], got \\(2, 3\\)'):
      self.decoder(np.zeros((2, 3)))

  def test_generative_forecast_draws_a_latent_per_balloon(self):
    forecast = generative.GenerativeForecast(3, decoder=self.decoder)
    forecast.sample(np.array([0, 2]), [np.random.default_rng(7), np.random.default_rng(7)])
    np.testing.assert_array_equal(forecast.grid[0], forecast.grid[2])
    expected = self.decoder(np.random.default_rng(7).standard_normal(64).astype(np.float32))
    # Our grid is [T, X, Y, P, 2]; BLE's field [X, Y, P, T, 2], queried with axis 0 as x.
    np.testing.assert_array_equal(forecast.grid[0], np.moveaxis(expected, 3, 0))
    x, y = wind_forecast.GRID_X_M[[3, 15]], wind_forecast.GRID_Y_M[[8, 1]]
    pressure, t = wind_forecast.GRID_PRESSURE_PA[[2, 9]], wind_forecast.GRID_TIME_S[[4, 8]]
    u, v = forecast.query(np.array([0, 2]), x, y, pressure, t)
    np.testing.assert_allclose(u, [expected[3, 8, 2, 4, 0], expected[15, 1, 9, 8, 0]], rtol=1e-6)
    np.testing.assert_allclose(v, [expected[3, 8, 2, 4, 1], expected[15, 1, 9, 8, 1]], rtol=1e-6)


class BleDecoderTest(unittest.TestCase):
  """BLE's weights decode BLE's latent to BLE's field, where the weights are here."""

  def test_matches_bles_decoder(self):
    path = ble_models.find(ble_models.OFFLINESKIES22)
    if path is None:
      self.skipTest(f'no BLE decoder weights on this machine (`{ble_models.FETCH_COMMAND}`)')
    reference = np.load(REFERENCE)
    fields = generative.Decoder.load(path)(reference['latents'])
    np.testing.assert_allclose(fields, reference['fields'], rtol=0, atol=2e-4)


if __name__ == '__main__':
  unittest.main()
