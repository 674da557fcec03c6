"""An in-graph algorithm that records every call `simulate` makes, for tests (yours too).

Like BatchPPO's mock algorithm, it acts with zeros and learns nothing; what it
offers is `calls`, the ordered list of (method, data) pairs recorded from
inside the graph with `tf.numpy_function`, so a test can check exactly which
environments began or ended an episode on which step, and what transitions
`experience` saw. It also records the value of an optional `is_training`
variable at every `perform`, to check the Loop's phases.
"""

import numpy as np
import tensorflow as tf

from agents.algorithms import algorithm


class MockAlgorithm(algorithm.InGraphAlgorithm):
  """Acts with zeros and records its calls."""

  def __init__(self, batch_env, is_training=None, name='mock_algorithm'):
    """Creates the recorder.

    Args:
      batch_env: the `InGraphBatchEnv`, for the action shape and dtype.
      is_training: optional bool Variable whose value `perform` records.
      name: module name.
    """
    super().__init__(name=name)
    self._action_shape = tuple(batch_env.action_space.shape)
    self._action_dtype = tf.as_dtype(batch_env.action_space.dtype)
    self._is_training = is_training
    self._recorder = _Recorder()  # A plain object, so tf.Module does not track the list.
    self.episodes_begun = tf.Variable(tf.zeros([len(batch_env)], tf.int32), trainable=False)

  def begin_episode(self, agent_indices):
    self.episodes_begun.scatter_nd_add(agent_indices[:, None], tf.ones_like(agent_indices))
    return self._record('begin', agent_indices)

  def perform(self, agent_indices, observ):
    is_training = self._is_training if self._is_training is not None else tf.constant(False)
    self._record('perform', agent_indices, is_training)
    count = tf.shape(agent_indices)[:1]
    return tf.zeros(tf.concat([count, self._action_shape], 0), self._action_dtype)

  def experience(self, agent_indices, observ, action, reward, terminated, truncated,
                 next_observ):
    return self._record('experience', agent_indices, observ, action, reward, terminated,
                        truncated, next_observ)

  def end_episode(self, agent_indices):
    return self._record('end', agent_indices)

  @property
  def calls(self):
    """The recorded (method, data) pairs, in call order."""
    return self._recorder.calls

  def calls_of(self, method):
    """Returns the recorded data of every call of one method, in order."""
    return [data for name, data in self.calls if name == method]

  def _record(self, method, *tensors):
    def record(*arrays):
      arrays = [np.array(array) for array in arrays]
      self.calls.append((method, arrays[0].tolist() if len(arrays) == 1 else arrays))
      return np.int32(0)
    return tf.numpy_function(record, list(tensors), tf.int32, stateful=True)


class _Recorder:
  """Holds the recorded calls."""

  def __init__(self):
    self.calls = []


class MockLearner(algorithm.InGraphAlgorithm):
  """Acts with zeros and takes one Keras Adam step on every `end_episode`.

  Its weights and optimiser slots change with every finished episode, so a
  checkpoint test can check that all of them come back exactly. The optimiser
  is built in the constructor, as the interface requires.
  """

  def __init__(self, batch_env, learning_rate=0.1, name='mock_learner'):
    """Creates the weight, the optimiser and the episode counter.

    Args:
      batch_env: the `InGraphBatchEnv`, for the action shape and dtype.
      learning_rate: Adam's step size.
      name: module name.
    """
    super().__init__(name=name)
    self._action_shape = tuple(batch_env.action_space.shape)
    self._action_dtype = tf.as_dtype(batch_env.action_space.dtype)
    self.weight = tf.Variable(0.0, name='weight')
    self.optimizer = tf.keras.optimizers.Adam(learning_rate)
    self.optimizer.build([self.weight])
    self.episode_return = tf.Variable(tf.zeros([len(batch_env)]), trainable=False)
    self.updates = tf.Variable(0, dtype=tf.int64, trainable=False, name='updates')

  def begin_episode(self, agent_indices):
    count = tf.shape(agent_indices)[:1]
    return self.episode_return.scatter_nd_update(agent_indices[:, None], tf.zeros(count))

  def perform(self, agent_indices, observ):
    count = tf.shape(agent_indices)[:1]
    return tf.zeros(tf.concat([count, self._action_shape], 0), self._action_dtype)

  def experience(self, agent_indices, observ, action, reward, terminated, truncated,
                 next_observ):
    return self.episode_return.scatter_nd_add(agent_indices[:, None], reward)

  def end_episode(self, agent_indices):
    target = tf.reduce_mean(tf.gather(self.episode_return, agent_indices))
    with tf.GradientTape() as tape:
      loss = tf.square(self.weight - target)
    self.optimizer.apply_gradients([(tape.gradient(loss, self.weight), self.weight)])
    tf.summary.scalar('loss', loss)
    return self.updates.assign_add(1)
