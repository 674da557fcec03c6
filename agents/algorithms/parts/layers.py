"""Dense layers and multi-layer perceptrons with orthogonal initial weights.

Shared by PPO's networks, QR-DQN's and the environments' own networks. Hidden
layers use gain sqrt(2); the caller chooses the output layer's gain (0.01 for a
policy's logits, 1 for a value), a standard PPO implementation detail. A layer's
`init` may instead be a function `(shape, rng) -> kernel`: `glorot_uniform` and
`variance_scaling` are BatchPPO's (TensorFlow 1's `fully_connected` defaults and its
policy output layer).
"""

import numpy as np
import tensorflow as tf


def orthogonal(shape, gain, rng):
  """An orthogonal [in, out] float32 matrix scaled by `gain`, drawn from `rng`."""
  flat = rng.standard_normal((max(shape), min(shape)))
  q, r = np.linalg.qr(flat)
  q *= np.sign(np.diag(r))
  if shape[0] < shape[1]:
    q = q.T
  return (gain * q[:shape[0], :shape[1]]).astype(np.float32)


def glorot_uniform(shape, rng):
  """A [in, out] float32 kernel uniform in +-sqrt(6 / (in + out)) (Glorot and Bengio, 2010)."""
  limit = np.sqrt(6.0 / (shape[0] + shape[1]))
  return rng.uniform(-limit, limit, shape).astype(np.float32)


def variance_scaling(factor):
  """The init `(shape, rng) -> kernel` of TensorFlow 1's `variance_scaling_initializer(factor)`.

  Fan-in mode, truncated normal: standard deviation sqrt(1.3 * factor / in), draws
  beyond two standard deviations drawn again.
  """
  def init(shape, rng):
    values = rng.standard_normal(shape)
    while (outside := np.abs(values) > 2.0).any():
      values[outside] = rng.standard_normal(int(outside.sum()))
    return (np.sqrt(1.3 * factor / shape[0]) * values).astype(np.float32)
  return init


def initial_kernel(shape, init, rng):
  """The initial kernel of shape [in, out]: orthogonal of gain `init` (a number), or
  `init(shape, rng)` (a function)."""
  return init(shape, rng) if callable(init) else orthogonal(shape, init, rng)


class Dense(tf.Module):
  """Affine layer with orthogonal initial weights and an optional activation.

  With `matmul_dtype='bfloat16'` the product runs in bfloat16 (oneDNN's
  AVX-512 BF16 kernels, about twice float32's speed on this CPU) on copies of
  the inputs and the kernel; the kernel itself (the master weights), the bias,
  the activation, the gradients and Adam stay float32.
  """

  def __init__(self, in_size, out_size, gain, rng, activation=None, matmul_dtype='float32',
               name=None):
    super().__init__(name=name)
    # `gain`: an orthogonal init's gain, or an init function (see `initial_kernel`).
    self.kernel = tf.Variable(initial_kernel((in_size, out_size), gain, rng), name='kernel')
    self.bias = tf.Variable(tf.zeros([out_size]), name='bias')
    self._activation = activation
    self._matmul_dtype = tf.as_dtype(matmul_dtype)

  def __call__(self, inputs):
    if self._matmul_dtype == tf.float32:
      product = tf.matmul(inputs, self.kernel)
    else:
      product = tf.cast(tf.matmul(tf.cast(inputs, self._matmul_dtype),
                                  tf.cast(self.kernel, self._matmul_dtype)), tf.float32)
    outputs = product + self.bias
    return self._activation(outputs) if self._activation else outputs


class MLP(tf.Module):
  """Stack of hidden `Dense` layers followed by a linear output layer.

  `matmul_dtype` applies to the hidden layers only: the output layer (logits,
  value) always multiplies in float32. `output_gain` and `hidden_init` are a gain
  or an init function (see `initial_kernel`); `hidden_init` None is orthogonal of
  gain sqrt(2).
  """

  def __init__(self, in_size, hidden_sizes, out_size, output_gain, activation, rng,
               matmul_dtype='float32', name=None, hidden_init=None):
    super().__init__(name=name)
    self.layers = []
    size = in_size
    for index, hidden in enumerate(hidden_sizes):
      self.layers.append(Dense(size, hidden, np.sqrt(2.0) if hidden_init is None else hidden_init,
                               rng, activation, matmul_dtype, name=f'hidden{index}'))
      size = hidden
    self.output_size = size
    self.head = Dense(size, out_size, output_gain, rng, name='output') if out_size else None

  def __call__(self, inputs):
    for layer in self.layers:
      inputs = layer(inputs)
    return self.head(inputs) if self.head is not None else inputs


def apply_over_leading_axes(fn, inputs):
  """Applies a [N, F] -> [N, G] function to [..., F], keeping the leading axes."""
  shape = tf.shape(inputs)
  outputs = fn(tf.reshape(inputs, [-1, inputs.shape[-1]]))
  return tf.reshape(outputs, tf.concat([shape[:-1], tf.shape(outputs)[-1:]], 0))
