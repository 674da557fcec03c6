"""Fixed-length segment memory of transitions, held in variables.

Every environment of the batch owns one row of `capacity` steps. `append`
writes one step for a subset of environments at their own write position, so
environments may step at different times; the memory is full when every row is.
Episodes may end and begin anywhere inside a segment: the done flags stored
with each step mark the boundaries, and advantage estimation respects them.
"""

import tensorflow as tf


class SegmentMemory(tf.Module):
  """Stores a nested structure of per-step tensors for a batch of environments."""

  def __init__(self, template, batch_size, capacity, name='memory'):
    """Creates one variable [batch_size, capacity, *shape] per template entry.

    Args:
      template: nested structure of `tf.TensorSpec`s describing one step of
        one environment.
      batch_size: number of environments.
      capacity: steps per environment in one segment.
      name: module name.
    """
    super().__init__(name=name)
    self._batch_size = batch_size
    self._capacity = capacity
    self._spec = template
    self.buffers = tf.nest.map_structure(
        lambda spec: tf.Variable(tf.zeros([batch_size, capacity] + spec.shape.as_list(),
                                          spec.dtype), trainable=False),
        template)
    self.length = tf.Variable(tf.zeros([batch_size], tf.int32), trainable=False, name='length')

  @property
  def capacity(self):
    return self._capacity

  def append(self, agent_indices, transition):
    """Writes one step for the given environments; full rows ignore the write.

    Args:
      agent_indices: int32 [N].
      transition: nested structure matching the template, each [N, *shape].

    Returns:
      The grouped assign op.
    """
    position = tf.gather(self.length, agent_indices)
    # A full row keeps its data: its write goes to its last step and writes back what is
    # there. (One gather and one select per buffer: `tf.boolean_mask` would cost a dozen
    # ops per buffer at every step.)
    has_room = position < self._capacity
    index = tf.stack([agent_indices, tf.minimum(position, self._capacity - 1)], 1)
    writes = []
    for buffer, value in zip(tf.nest.flatten(self.buffers), tf.nest.flatten(transition)):
      keep = tf.reshape(has_room, [-1] + [1] * (len(buffer.shape) - 2))
      stored = tf.gather_nd(buffer, index)  # Reads the rows only, not the whole buffer.
      writes.append(buffer.scatter_nd_update(
          index, tf.where(keep, tf.cast(value, buffer.dtype), stored)))
    with tf.control_dependencies(writes):
      return self.length.scatter_nd_add(agent_indices[:, None], tf.cast(has_room, tf.int32))

  def truncate_last(self, agent_indices):
    """Marks the last stored step of the given rows as truncated unless it ended already.

    Requires `truncated` and `terminated` entries in the template.

    Args:
      agent_indices: int32 [N].
    """
    position = tf.gather(self.length, agent_indices) - 1
    stored = position >= 0
    index = tf.stack([tf.boolean_mask(agent_indices, stored), tf.boolean_mask(position, stored)],
                     1)
    # A terminated step stays terminal; any other step becomes truncated.
    truncated = tf.logical_or(tf.gather_nd(self.buffers['truncated'], index),
                              tf.logical_not(tf.gather_nd(self.buffers['terminated'], index)))
    self.buffers['truncated'].scatter_nd_update(index, truncated)

  def is_full(self):
    return tf.reduce_all(self.length >= self._capacity)

  def data(self):
    """The stored steps as a nested structure of [batch_size, capacity, ...] tensors."""
    return tf.nest.map_structure(tf.convert_to_tensor, self.buffers)

  def clear(self):
    return self.length.assign(tf.zeros_like(self.length))
