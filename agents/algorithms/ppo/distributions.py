"""Action distributions of the PPO policy: a diagonal Gaussian and a categorical.

Each distribution is rebuilt from one flat parameter tensor (`params`), which is
what the memory stores for every step, so the update can compute the KL
divergence between the policy that acted and the current one. Only what PPO
needs is implemented: sampling from a `tf.random.Generator` (whose state is a
checkpointed variable), the mode, log-probabilities, entropy and the KL
divergence in closed form.
"""

import math

import tensorflow as tf

_LOG_2PI = math.log(2.0 * math.pi)


class DiagonalGaussian:
  """Gaussian with diagonal covariance over the last axis of `mean`."""

  def __init__(self, mean, log_std):
    self.mean = tf.convert_to_tensor(mean, tf.float32)
    self.log_std = tf.broadcast_to(tf.convert_to_tensor(log_std, tf.float32), tf.shape(self.mean))

  @classmethod
  def from_params(cls, params):
    """Rebuilds the distribution from `params` = concat([mean, log_std], -1)."""
    mean, log_std = tf.split(params, 2, axis=-1)
    return cls(mean, log_std)

  @property
  def params(self):
    """The flat parameters [..., 2 * action_size] that `from_params` reads."""
    return tf.concat([self.mean, self.log_std], -1)

  def sample(self, generator):
    noise = generator.normal(tf.shape(self.mean), dtype=tf.float32)
    return self.mean + tf.exp(self.log_std) * noise

  def mode(self):
    return self.mean

  def log_prob(self, value):
    z = (tf.cast(value, tf.float32) - self.mean) * tf.exp(-self.log_std)
    return tf.reduce_sum(-0.5 * tf.square(z) - self.log_std - 0.5 * _LOG_2PI, -1)

  def entropy(self):
    return tf.reduce_sum(self.log_std + 0.5 * (1.0 + _LOG_2PI), -1)

  def kl(self, other):
    """KL(self || other), summed over action dimensions."""
    var_ratio = tf.exp(2.0 * (self.log_std - other.log_std))
    mean_term = tf.square((self.mean - other.mean) * tf.exp(-other.log_std))
    return tf.reduce_sum(0.5 * (var_ratio + mean_term - 1.0) - (self.log_std - other.log_std), -1)


class Categorical:
  """Categorical distribution over the last axis of `logits`."""

  def __init__(self, logits):
    self.logits = tf.convert_to_tensor(logits, tf.float32)

  @classmethod
  def from_params(cls, params):
    return cls(params)

  @property
  def params(self):
    return self.logits

  def _log_probs(self):
    return tf.nn.log_softmax(self.logits, -1)

  def sample(self, generator):
    # Gumbel-max trick: argmax(logits + Gumbel noise) is an exact categorical
    # sample and only needs uniform noise from the checkpointed generator.
    uniform = generator.uniform(tf.shape(self.logits), minval=1e-12, maxval=1.0)
    return tf.argmax(self.logits - tf.math.log(-tf.math.log(uniform)), -1, output_type=tf.int32)

  def mode(self):
    return tf.argmax(self.logits, -1, output_type=tf.int32)

  def log_prob(self, value):
    value = tf.cast(value, tf.int32)
    return tf.gather(self._log_probs(), value, axis=-1, batch_dims=len(value.shape))

  def entropy(self):
    log_probs = self._log_probs()
    return -tf.reduce_sum(tf.exp(log_probs) * log_probs, -1)

  def kl(self, other):
    """KL(self || other) = sum p * (log p - log q)."""
    log_p, log_q = self._log_probs(), other._log_probs()
    return tf.reduce_sum(tf.exp(log_p) * (log_p - log_q), -1)
