"""Streaming normalisation of observations and rewards, held in variables.

`StreamingNormalize` keeps a running count, mean and sum of squared deviations
and merges each new batch with Chan et al.'s parallel update, so its statistics
equal numpy's mean and variance of everything it has seen. Observations are
centred, scaled and clipped; rewards are only scaled (see `RewardScale`).
"""

import tensorflow as tf


class StreamingNormalize(tf.Module):
  """Normalises tensors by the running mean and standard deviation of the data seen."""

  def __init__(self, shape, center=True, scale=True, clip=10.0, epsilon=1e-8, name=None):
    """Creates the statistics variables.

    Args:
      shape: shape of one item (without the batch axis).
      center: subtract the running mean.
      scale: divide by the running standard deviation.
      clip: clip the result to [-clip, clip]; None or 0 disables clipping.
      epsilon: added to the variance before taking the square root.
      name: name of the module (and its variables).
    """
    super().__init__(name=name)
    self._center = center
    self._scale = scale
    self._clip = float(clip) if clip else None
    self._epsilon = epsilon
    self.count = tf.Variable(0.0, dtype=tf.float64, trainable=False, name='count')
    self.mean = tf.Variable(tf.zeros(shape, tf.float32), trainable=False, name='mean')
    self.sum_squares = tf.Variable(tf.zeros(shape, tf.float32), trainable=False,
                                   name='sum_squares')

  def update(self, batch):
    """Merges a batch [N, *shape] into the running statistics."""
    batch = tf.convert_to_tensor(batch, tf.float32)
    batch_count = tf.cast(tf.shape(batch)[0], tf.float64)
    batch_mean = tf.reduce_mean(batch, 0)
    batch_sum_squares = tf.reduce_sum(tf.square(batch - batch_mean), 0)
    total = self.count + batch_count
    # Chan et al.: merge two (count, mean, M2) summaries without revisiting data.
    weight = tf.cast(tf.math.divide_no_nan(batch_count, total), tf.float32)
    cross = tf.cast(tf.math.divide_no_nan(self.count * batch_count, total), tf.float32)
    delta = batch_mean - self.mean
    return tf.group(
        self.mean.assign_add(weight * delta),
        self.sum_squares.assign_add(batch_sum_squares + tf.square(delta) * cross),
        self.count.assign(total))

  def variance(self):
    """Population variance of the data seen (1 before any data arrives)."""
    count = tf.cast(self.count, tf.float32)
    return tf.where(count > 1, self.sum_squares / tf.maximum(count, 1.0),
                    tf.ones_like(self.sum_squares))

  def std(self):
    return tf.sqrt(self.variance() + self._epsilon)

  def transform(self, value):
    """Centres, scales and clips `value` with the current statistics."""
    value = tf.convert_to_tensor(value, tf.float32)
    if self._center:
      value -= self.mean
    if self._scale:
      value /= self.std()
    if self._clip:
      value = tf.clip_by_value(value, -self._clip, self._clip)
    return value


class RewardScale(tf.Module):
  """Scales rewards by the running standard deviation of the discounted return.

  The "reward scaling" detail of PPO implementations (as in Gymnasium's
  NormalizeReward): dividing by the std of the return, not of the reward, keeps
  value targets near unit size whatever the reward density.
  """

  def __init__(self, batch_size, discount, clip=10.0, name=None):
    super().__init__(name=name)
    self._discount = discount
    self.returns = tf.Variable(tf.zeros([batch_size], tf.float32), trainable=False,
                               name='returns')
    self.normalize = StreamingNormalize((), center=False, scale=True, clip=clip,
                                        name='return_normalize')

  def update(self, agent_indices, reward, done):
    """Accumulates the discounted return of the given agents and updates the std."""
    returns = tf.gather(self.returns, agent_indices) * self._discount + reward
    update = self.normalize.update(returns)
    with tf.control_dependencies([update]):
      # An ended episode starts its return from zero.
      return self.returns.scatter_nd_update(
          agent_indices[:, None], tf.where(done, tf.zeros_like(returns), returns))

  def transform(self, reward):
    return self.normalize.transform(reward)
