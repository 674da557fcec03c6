"""A balloon policy that reads the wind column as a column of levels (network kind `column`).

The balloon's observation (balloon.md §11) is 16 ambient features and a wind column of
361 levels × (uncertainty, bearing error, speed), centred so that the balloon's own
level is index 180: levels above it (lower pressure) come first, levels below it last.
A flat MLP must learn the same judgement of a wind separately at every index. This
policy judges every level with one small MLP shared across levels, the way the
station seeker scores levels, but learns the judgement by reinforcement:

1. A context MLP (`policy_layers`) encodes the 16 ambient features (distance and
   heading to the station, battery, pressure, sun, ...).
2. Each level's input is its three wind features and its signed and absolute offset
   from the balloon; the first column layer adds a projection of the context, so a
   level's score can depend on, say, the distance to the station. The shared MLP
   (`column_layers`) gives every level a score.
3. The three logits pool the scores the way the actions reach the levels: UP is the
   log-mean-exp of the scores of the valid levels above the balloon, DOWN that of the
   valid levels below, STAY the score of the balloon's own level. A level is valid
   unless it reads as padding or unreachable (speed feature 1). A small linear map of
   the context adds to the three logits.

With `column_value: true` the value function reads the column the way the policy does:
its own level-shared encoder (the level's features and offsets, plus a projection of the
ambient features) is pooled over the valid levels (mean and max) and at the balloon's
level, and an MLP (`value_layers`) reads the pools and the ambient features. Otherwise
it is the flat MLP over the whole observation that every network kind has.

With `column_stride: k` the policy reads every k-th level (k divides 180, so the
balloon's own level is read): winds change little over 50 Pa, and k = 4 (200 Pa)
learnt like k = 1 at a quarter of the column's cost.

With the environment's `lookahead` option (lookahead.py) the observation carries, after
BLE's 1099 floats, a block of per-level features of the hours ahead, placed as the column
is: every level's input then holds its block features too (the option's stride must
divide `column_stride`, so that every read level has them).

The observation should reach this network unnormalised (`algorithm.normalize_observ:
false`): its features are already in [0, 1], and per-index normalisation would give
each level its own scale, which the shared MLP cannot undo.
"""

import gymnasium
import numpy as np
import tensorflow as tf

from agents.algorithms.parts import layers
from agents.algorithms.ppo import networks
from agents.env.balloon import constants

_AMBIENT = constants.NUM_AMBIENT_FEATURES
_LEVELS = constants.NUM_COLUMN_LEVELS
_CENTRE = constants.BALLOON_COLUMN_INDEX
# Logit of a move with no valid level on its side: about e^-10 of the others' weight.
_NO_LEVEL_LOGIT = -10.0


class ColumnPolicy(networks.PolicyValueNetwork):
  """Feed-forward balloon policy with a level-shared MLP over the wind column."""

  def __init__(self, observ_size, action_space, policy_layers=(64,), value_layers=(64, 64),
               activation='tanh', init_std=1.0, seed=0, matmul_dtype='float32',
               column_layers=(32, 32), column_stride=1, column_value=False, value_stride=1,
               name='column_policy', **unused):
    extra = observ_size - constants.OBSERVATION_SIZE
    if extra < 0 or extra % _LEVELS:
      raise ValueError(f'The column network reads the balloon observation of '
                       f'{constants.OBSERVATION_SIZE} floats, and a whole number of '
                       f'features per level of its {_LEVELS} after them (the lookahead '
                       f'option), got {observ_size} (config key "network.kind").')
    if not (isinstance(action_space, gymnasium.spaces.Discrete) and action_space.n == 3):
      raise ValueError(f'The column network needs the balloon actions Discrete(3) '
                       f'(DOWN, STAY, UP), got {action_space} (config key "network.kind").')
    if not column_layers:
      raise ValueError('The column network needs at least one column layer '
                       '(config key "network.column_layers").')
    if column_stride < 1 or _CENTRE % column_stride:
      raise ValueError(f'network.column_stride must be a positive divisor of {_CENTRE}, so '
                       f'that the balloon\'s own level is read; got {column_stride}.')
    super().__init__(observ_size, action_space, policy_layers, value_layers, activation,
                     init_std, seed, name, matmul_dtype)
    self._stride = column_stride
    self._block_features = extra // _LEVELS
    level_inputs = 5 + self._block_features
    self._levels = (_LEVELS - 1) // column_stride + 1
    self._centre = _CENTRE // column_stride
    rng = self._rng
    self.context = layers.MLP(_AMBIENT, policy_layers, 0, 1.0, self._activation, rng,
                                matmul_dtype, name='context')
    width = column_layers[0]
    # The first column layer is split: per-level inputs and a context projection that
    # is computed once per balloon and broadcast over its levels.
    self.level_input = layers.Dense(level_inputs, width, np.sqrt(2.0), rng, name='level_input')
    self.context_input = layers.Dense(self.context.output_size, width, np.sqrt(2.0), rng,
                                        matmul_dtype=matmul_dtype, name='context_input')
    self.column = layers.MLP(width, column_layers[1:], 1, 0.01, self._activation, rng,
                               matmul_dtype, name='column')
    if column_value:
      # Replaces the flat value MLP the base class built.
      self.value_level_input = layers.Dense(level_inputs, width, np.sqrt(2.0), rng,
                                              name='value_level_input')
      self.value_context_input = layers.Dense(_AMBIENT, width, np.sqrt(2.0), rng,
                                                name='value_context_input')
      self.value_mlp = layers.MLP(3 * width + _AMBIENT, value_layers, 1, 1.0,
                                    self._activation, rng, matmul_dtype, name='value')
    elif value_stride > 1:
      # Replaces the flat value MLP the base class built: it reads every k-th level.
      self.value_mlp = layers.MLP(
          _AMBIENT + ((_LEVELS - 1) // value_stride + 1) * (3 + self._block_features),
          value_layers, 1, 1.0, self._activation, rng, matmul_dtype, name='value')
    self._column_value = column_value
    self._value_stride = 1 if column_value else value_stride
    self.action_bias = layers.Dense(self.context.output_size, 3, 0.01, rng,
                                      name='action_bias')
    offsets = (np.arange(0, _LEVELS, column_stride, dtype=np.float32) - _CENTRE) / _CENTRE
    self._offsets = tf.constant(np.stack([offsets, np.abs(offsets)], -1))
    # The observation's indices of the read levels' winds and block features: one gather
    # reads them (a strided slice of the column costs more).
    self._wind_indices = tf.constant(_level_indices(_AMBIENT, 3, column_stride))
    self._block_indices = tf.constant(_level_indices(
        constants.OBSERVATION_SIZE, self._block_features, column_stride))
    self._value_indices = tf.constant(np.concatenate([
        np.arange(_AMBIENT), _level_indices(_AMBIENT, 3, value_stride).ravel(),
        _level_indices(constants.OBSERVATION_SIZE, self._block_features, value_stride).ravel()]))

  def _read_levels(self, observ):
    """The read levels' inputs [batch, levels, 5 + block features] and validity [batch, levels]."""
    batch = tf.shape(observ)[0]
    winds = tf.gather(observ, self._wind_indices, axis=1)
    offsets = tf.broadcast_to(self._offsets, [batch, self._levels, 2])
    parts = [winds, offsets]
    if self._block_features:
      parts.append(tf.gather(observ, self._block_indices, axis=1))
    return tf.concat(parts, -1), winds[..., 2] < 1.0

  def _encode_levels(self, level_dense, inputs, context_projection):
    """A level-shared first layer: each level's inputs plus its balloon's context."""
    hidden = level_dense(tf.reshape(inputs, [-1, inputs.shape[-1]]))
    hidden = tf.reshape(hidden, [tf.shape(inputs)[0], self._levels, -1])
    return self._activation(hidden + context_projection[:, None])

  # No tensor-dependent Python control flow here, so autograph need not rewrite it.
  @tf.autograph.experimental.do_not_convert
  def _logits(self, observ):
    batch = tf.shape(observ)[0]
    context = self.context(observ[:, :_AMBIENT])
    levels, centre = self._levels, self._centre
    inputs, valid = self._read_levels(observ)
    hidden = self._encode_levels(self.level_input, inputs, self.context_input(context))
    hidden = tf.reshape(hidden, [batch * levels, -1])
    scores = tf.reshape(self.column(hidden), [batch, levels])
    up = _log_mean_exp(scores[:, :centre], valid[:, :centre])
    down = _log_mean_exp(scores[:, centre + 1:], valid[:, centre + 1:])
    stay = scores[:, centre]
    # The balloon's actions: 0 = DOWN, 1 = STAY, 2 = UP.
    return tf.stack([down, stay, up], -1) + self.action_bias(context)

  def policy(self, observ, state):
    return self._logits(observ), state

  def value(self, observ):
    if self._value_stride > 1:
      return layers.apply_over_leading_axes(self._strided_value_of, observ)[..., 0]
    if not self._column_value:
      return super().value(observ)
    return layers.apply_over_leading_axes(self._column_value_of, observ)[..., 0]

  @tf.autograph.experimental.do_not_convert
  def _strided_value_of(self, observ):
    # The ambient features, then every k-th level's features (winds, then block).
    return self.value_mlp(tf.gather(observ, self._value_indices, axis=1))

  @tf.autograph.experimental.do_not_convert
  def _column_value_of(self, observ):
    ambient = observ[:, :_AMBIENT]
    inputs, valid = self._read_levels(observ)
    hidden = self._encode_levels(self.value_level_input, inputs,
                                 self.value_context_input(ambient))
    mean = _valid_mean(hidden, valid)
    # tanh features lie in (-1, 1): -1 stands in for "no valid level".
    peak = tf.reduce_max(tf.where(valid[..., None], hidden, -1.0), 1)
    return self.value_mlp(tf.concat([ambient, mean, peak, hidden[:, self._centre]], -1))

  def policy_sequence(self, observ, state, reset):
    del state, reset  # Feed-forward: no memory across steps.
    return layers.apply_over_leading_axes(self._logits, observ)


def _level_indices(start, features, stride):
  """The indices [levels, features] of every `stride`-th level's `features` floats in an
  observation whose per-level block of `features` floats per level starts at `start`."""
  levels = np.arange(0, _LEVELS, stride)
  return (start + levels[:, None] * features + np.arange(features)).astype(np.int32)


def _valid_mean(hidden, valid):
  """The mean over the valid levels of features [batch, levels, width]; 0 if none."""
  weights = tf.cast(valid, tf.float32)[..., None]
  return tf.math.divide_no_nan(tf.reduce_sum(hidden * weights, 1), tf.reduce_sum(weights, 1))


def _log_mean_exp(scores, valid):
  """log(mean(exp(scores))) over the valid entries of each row; `_NO_LEVEL_LOGIT` if none."""
  count = tf.reduce_sum(tf.cast(valid, tf.float32), -1)
  total = tf.reduce_logsumexp(tf.where(valid, scores, -1e9), -1)
  return tf.where(count > 0, total - tf.math.log(tf.maximum(count, 1.0)), _NO_LEVEL_LOGIT)
