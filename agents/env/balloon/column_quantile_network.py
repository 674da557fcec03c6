"""QR-DQN's quantile network that reads the wind column level by level (QR-DQN kind `column`).

The quantile counterpart of the column policy (column_network.py): BLE's observation is
16 ambient features and 361 levels x (uncertainty, bearing error, speed), the balloon's
own level at index 180, levels above it first. One small MLP, shared by every read level
(every `column_stride`-th), gives each level N quantiles of the return of heading for it,
from the level's winds, its signed and absolute offset from the balloon, and a
projection of the ambient features (the context MLP, `hidden_layers`):

- STAY's quantiles are those of the balloon's own level;
- UP's are those of the valid level above with the highest mean, DOWN's of the valid
  level below with the highest mean (a move with no valid level has STAY's);
- a linear map of the context adds a per-action term to every quantile.

A level is valid unless it reads as padding or unreachable (speed feature 1). Observations
should be stored and read raw (QR-DQN does not normalise them).
"""

import numpy as np
import tensorflow as tf

from agents.algorithms.parts import layers
from agents.env.balloon import constants

_AMBIENT = constants.NUM_AMBIENT_FEATURES
_LEVELS = constants.NUM_COLUMN_LEVELS
_CENTRE = constants.BALLOON_COLUMN_INDEX
_ACTIVATIONS = {'tanh': tf.tanh, 'relu': tf.nn.relu, 'elu': tf.nn.elu}


class ColumnQuantileNetwork(tf.Module):
  """Quantiles [B, 3, N] of DOWN, STAY, UP from BLE's observation [B, 1099]."""

  def __init__(self, observ_size, num_actions, num_quantiles, hidden_layers=(64,),
               activation='relu', matmul_dtype='float32', seed=0, name=None,
               column_layers=(32,), column_stride=4):
    super().__init__(name=name)
    if observ_size != constants.OBSERVATION_SIZE or num_actions != 3:
      raise ValueError(f'The column quantile network reads the balloon observation of '
                       f'{constants.OBSERVATION_SIZE} floats and 3 actions, got {observ_size} '
                       f'floats and {num_actions} actions (config key "network.kind").')
    if column_stride < 1 or _CENTRE % column_stride:
      raise ValueError(f'network.column_stride must be a positive divisor of {_CENTRE}, got '
                       f'{column_stride}.')
    self.num_actions, self.num_quantiles = num_actions, num_quantiles
    self._stride = column_stride
    self._levels = (_LEVELS - 1) // column_stride + 1
    self._centre = _CENTRE // column_stride
    act = _ACTIVATIONS[activation]
    rng = np.random.default_rng(seed)
    self.context = layers.MLP(_AMBIENT, hidden_layers, 0, 1.0, act, rng, matmul_dtype,
                                name='context')
    width = column_layers[0]
    self.level_input = layers.Dense(5, width, np.sqrt(2.0), rng, name='level_input')
    self.context_input = layers.Dense(self.context.output_size, width, np.sqrt(2.0), rng,
                                        name='context_input')
    self.column = layers.MLP(width, column_layers[1:], num_quantiles, 1.0, act, rng,
                               matmul_dtype, name='column')
    self.action_term = layers.Dense(self.context.output_size, 3 * num_quantiles, 0.01, rng,
                                      name='action_term')
    self._activation = act
    offsets = (np.arange(0, _LEVELS, column_stride, dtype=np.float32) - _CENTRE) / _CENTRE
    self._offsets = tf.constant(np.stack([offsets, np.abs(offsets)], -1))

  @tf.autograph.experimental.do_not_convert
  def __call__(self, observ):
    batch = tf.shape(observ)[0]
    levels, centre, count = self._levels, self._centre, self.num_quantiles
    context = self.context(observ[:, :_AMBIENT])
    winds = tf.reshape(observ[:, _AMBIENT:constants.OBSERVATION_SIZE],
                       [batch, _LEVELS, 3])[:, ::self._stride]
    inputs = tf.concat([winds, tf.broadcast_to(self._offsets, [batch, levels, 2])], -1)
    hidden = tf.reshape(self.level_input(tf.reshape(inputs, [-1, 5])), [batch, levels, -1])
    hidden = self._activation(hidden + self.context_input(context)[:, None])
    scores = tf.reshape(self.column(tf.reshape(hidden, [batch * levels, -1])),
                        [batch, levels, count])
    valid = winds[..., 2] < 1.0
    stay = scores[:, centre]
    up = _best_level(scores[:, :centre], valid[:, :centre], stay)
    down = _best_level(scores[:, centre + 1:], valid[:, centre + 1:], stay)
    term = tf.reshape(self.action_term(context), [batch, 3, count])
    # The balloon's actions: 0 = DOWN, 1 = STAY, 2 = UP.
    return tf.stack([down, stay, up], 1) + term


def _best_level(scores, valid, fallback):
  """The quantiles [B, N] of the valid level of highest mean; `fallback` if none is valid."""
  means = tf.where(valid, tf.reduce_mean(scores, -1), -1e9)
  best = tf.gather(scores, tf.argmax(means, -1, output_type=tf.int32), axis=1, batch_dims=1)
  return tf.where(tf.reduce_any(valid, -1)[:, None], best, fallback)
