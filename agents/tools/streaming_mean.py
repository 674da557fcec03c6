"""Mean of a stream of tensors, accumulated in TensorFlow variables.

Summaries of training often average a value over many steps (episode returns of
all environments that finished during a phase). The sum and count live in
`tf.Variable`s, so the mean can be updated inside a `tf.function` and survives
checkpoints like the rest of the algorithm state.
"""

import tensorflow as tf


class StreamingMean(tf.Module):
  """Running mean over the first axis of submitted batches."""

  def __init__(self, shape=(), dtype=tf.float32, name='streaming_mean'):
    """Creates the accumulators.

    Args:
      shape: Shape of one value (the batches submitted have shape [N, *shape]).
      dtype: Dtype of the values.
      name: Name of the module and prefix of its variables.
    """
    super().__init__(name=name)
    self._dtype = tf.as_dtype(dtype)
    with self.name_scope:
      self._sum = tf.Variable(tf.zeros(shape, self._dtype), trainable=False, name='sum')
      self._count = tf.Variable(0, dtype=tf.int64, trainable=False, name='count')

  @property
  def value(self):
    """The mean of all values submitted since the last clear (zeros when none)."""
    return self._sum / tf.cast(tf.maximum(self._count, 1), self._dtype)

  @property
  def count(self):
    """Number of values submitted since the last clear."""
    return self._count.read_value()

  def submit(self, values):
    """Adds a batch of values.

    Args:
      values: Tensor of shape [N, *shape].

    Returns:
      The update operation (useful as a control dependency in graph code).
    """
    values = tf.convert_to_tensor(values, self._dtype)
    tf.debugging.assert_rank(values, self._sum.shape.rank + 1,
                             message='StreamingMean.submit expects a batch [N, *shape]')
    return tf.group(
        self._sum.assign_add(tf.reduce_sum(values, 0)),
        self._count.assign_add(tf.shape(values, out_type=tf.int64)[0]))

  def clear(self):
    """Returns the current mean and resets the accumulators."""
    value = self.value
    with tf.control_dependencies([value]):
      self._sum.assign(tf.zeros_like(self._sum))
      self._count.assign(0)
    return value
