"""A user's algorithm, outside the package: a linear softmax policy with a one-step policy gradient.

Train it without editing `agents` (this folder on PYTHONPATH):

    python -m agents.scripts.train --config=cartpole --logdir=logdir \
        --algorithm=linear_softmax:LinearSoftmax --set algorithm.learning_rate=0.05
"""

import dataclasses

import gymnasium
import numpy as np
import tensorflow as tf

from agents.algorithms import algorithm
from agents.config_fields import param


@dataclasses.dataclass(frozen=True)
class LinearSoftmaxConfig:
  """The `algorithm` section of a run of LinearSoftmax."""
  learning_rate: float = param(0.01, 'step size of the policy gradient', low=0, low_open=True)
  baseline_decay: float = param(0.99, 'decay of the running reward baseline', low=0, high=1,
                                high_open=True)


class LinearSoftmax(algorithm.InGraphAlgorithm):
  """Logits = observ @ weights; each step, weights += lr * (reward - baseline) * grad log pi."""

  Config = LinearSoftmaxConfig

  def __init__(self, batch_size, observation_space, action_space, config, seed=0,
               is_training=None):
    super().__init__(name='linear_softmax')
    if not isinstance(action_space, gymnasium.spaces.Discrete):
      raise TypeError(f'LinearSoftmax needs a Discrete action space, got {action_space}.')
    self._config = config
    self._start = int(action_space.start)
    self._is_training = (is_training if is_training is not None
                         else tf.Variable(True, trainable=False))
    size = int(np.prod(observation_space.shape))
    # Every variable is created here, so a checkpoint restores all of them.
    self.weights = tf.Variable(tf.zeros([size, int(action_space.n)]), name='weights')
    self.baseline = tf.Variable(0.0, trainable=False, name='baseline')
    self.generator = tf.random.Generator.from_seed(seed)

  def _logits(self, observ):
    observ = tf.cast(observ, tf.float32)
    return tf.matmul(tf.reshape(observ, [tf.shape(observ)[0], -1]), self.weights)

  def begin_episode(self, agent_indices):
    return None  # The policy keeps no per-episode state.

  def perform(self, agent_indices, observ):
    logits = self._logits(observ)
    uniform = self.generator.uniform(tf.shape(logits), 1e-12, 1.0)
    sample = tf.argmax(logits - tf.math.log(-tf.math.log(uniform)), -1, output_type=tf.int32)
    greedy = tf.argmax(logits, -1, output_type=tf.int32)
    return tf.where(self._is_training, sample, greedy) + self._start

  def experience(self, agent_indices, observ, action, reward, terminated, truncated,
                 next_observ):
    def learn():
      reward_ = tf.cast(reward, tf.float32)
      with tf.GradientTape() as tape:
        log_probs = tf.nn.log_softmax(self._logits(observ))
        taken = tf.gather(log_probs, tf.cast(action, tf.int32) - self._start, batch_dims=1)
        loss = -tf.reduce_mean(taken * (reward_ - self.baseline))
      gradient = tape.gradient(loss, self.weights)
      step = self.weights.assign_sub(self._config.learning_rate * gradient)
      decay = self._config.baseline_decay
      with tf.control_dependencies([step]):
        self.baseline.assign(decay * self.baseline + (1.0 - decay) * tf.reduce_mean(reward_))
      return tf.constant(True)

    # Learn only in training phases; an eval phase just acts.
    return tf.cond(self._is_training, learn, lambda: tf.constant(False))

  def end_episode(self, agent_indices):
    return None
