"""The replay memory of QR-DQN: a ring buffer of TensorFlow variables, one ring per environment.

Every array is time-major per environment, `[rows, num_envs, ...]`, so the
steps of one environment are consecutive rows and an n-step target reads a
window of rows. Observations are stored once: the observation after a
transition is the next row's. Each row holds

- `observ`: the observation the row's action was chosen on (in the storage
  dtype, e.g. float16 for large observations);
- `action`, `reward`, `terminated`: the transition taken from it;
- `valid`: whether the row holds a transition at all.

An invalid row holds an observation only: the final observation of an episode
(written after its last transition, so a truncated episode can bootstrap from
it), or the observation an episode was abandoned on by a forced reset (a new
Loop phase). n-step windows stop at invalid rows and at terminal transitions
(`n_step_targets`).

How a step is written: `append` writes each environment's transition at its
cursor, and its next observation, provisionally, in the row after. If the
episode went on, the cursor moves one row, and the next `append` overwrites the
provisional row with the same observation and its transition. If the episode
ended, the cursor moves two rows, keeping the final observation. A forced
reset (`close_open_rows`) keeps the provisional row the same way.
"""

import tensorflow as tf

from agents import tensorflow_start


def n_step_targets(reward, valid, terminated, discount):
  """n-step returns of windows of consecutive rows, cut at episode ends.

  Args:
    reward: float32 [S, n], rows t..t+n-1 of each sampled window.
    valid: bool [S, n], whether each row holds a transition.
    terminated: bool [S, n], whether each row's transition ended in a terminal state.
    discount: gamma.

  Returns:
    (returns [S], steps [S] int32, bootstrap_discount [S]): the discounted sum of
    the rewards of the window's transitions up to the first episode end; the
    number of those transitions k, so that the observation to bootstrap from is
    row t+k (the next observation, or a final one kept after a truncation); and
    gamma^k, or 0 when the window ends in a terminal state (no bootstrap).
  """
  n = reward.shape[1]
  continues = tf.cast(tf.logical_and(valid, tf.logical_not(terminated)), tf.float32)
  # A row is part of the return when every row before it continued the episode.
  alive_before = tf.math.cumprod(continues, axis=1, exclusive=True)
  included = alive_before * tf.cast(valid, tf.float32)
  powers = tf.pow(tf.constant(discount, tf.float32), tf.range(n, dtype=tf.float32))
  returns = tf.reduce_sum(included * powers * reward, axis=1)
  steps = tf.cast(tf.reduce_sum(included, axis=1), tf.int32)
  ends_terminal = tf.reduce_max(included * tf.cast(terminated, tf.float32), axis=1)
  bootstrap_discount = tf.pow(tf.constant(discount, tf.float32),
                              tf.cast(steps, tf.float32)) * (1.0 - ends_terminal)
  return returns, steps, bootstrap_discount


class ReplayMemory(tf.Module):
  """Per-environment rings of transitions; see the module docstring.

  Attributes:
    observ, action, reward, terminated, valid: Variables [rows, num_envs, ...].
    cursor: int64 Variable [num_envs], rows each environment has written (its
      next row is `cursor % rows`).
    open_row: bool Variable [num_envs], the row at the cursor holds a
      provisional next observation of an episode still running.
  """

  def __init__(self, rows, num_envs, observ_size, observ_dtype=tf.float32, name='replay'):
    """Creates the variables.

    Args:
      rows: rows of each environment's ring.
      num_envs: environments of the batch.
      observ_size: floats of one flattened observation.
      observ_dtype: storage dtype of the observations.
      name: module name.
    """
    super().__init__(name=name)
    if tf.as_dtype(observ_dtype) == tf.float16:
      tensorflow_start.quiet_float16_start()
    self.rows = rows
    self.num_envs = num_envs
    self.observ = tf.Variable(tf.zeros([rows, num_envs, observ_size], observ_dtype),
                              trainable=False, name='observ')
    self.action = tf.Variable(tf.zeros([rows, num_envs], tf.int32), trainable=False,
                              name='action')
    self.reward = tf.Variable(tf.zeros([rows, num_envs]), trainable=False, name='reward')
    self.terminated = tf.Variable(tf.zeros([rows, num_envs], tf.bool), trainable=False,
                                  name='terminated')
    self.valid = tf.Variable(tf.zeros([rows, num_envs], tf.bool), trainable=False, name='valid')
    self.cursor = tf.Variable(tf.zeros([num_envs], tf.int64), trainable=False, name='cursor')
    self.open_row = tf.Variable(tf.zeros([num_envs], tf.bool), trainable=False,
                                name='open_row')

  def _positions(self, agent_indices, offset):
    """[N, 2] (row, env) indices of the rows `offset` after the given environments' cursors."""
    rows = (tf.gather(self.cursor, agent_indices) + offset) % self.rows
    return tf.stack([tf.cast(rows, tf.int32), agent_indices], axis=1)

  def append(self, agent_indices, observ, action, reward, terminated, ended, next_observ):
    """Writes one transition per given environment; see the module docstring.

    Args:
      agent_indices: int32 [N].
      observ: [N, observ_size], the observations the actions were chosen on.
      action: int32 [N].
      reward: float32 [N].
      terminated: bool [N].
      ended: bool [N], the episode ended (terminated or truncated).
      next_observ: [N, observ_size], the observations after the step.

    Returns:
      The op that finishes the write.
    """
    count = tf.shape(agent_indices)[0]
    here = self._positions(agent_indices, 0)
    after = self._positions(agent_indices, 1)
    dtype = self.observ.dtype
    writes = [
        self.observ.scatter_nd_update(here, tf.cast(observ, dtype)),
        self.action.scatter_nd_update(here, action),
        self.reward.scatter_nd_update(here, reward),
        self.terminated.scatter_nd_update(here, terminated),
        self.valid.scatter_nd_update(here, tf.ones([count], tf.bool))]
    with tf.control_dependencies(writes):
      # The provisional row: an observation only, until the next transition fills it.
      provisional = [
          self.observ.scatter_nd_update(after, tf.cast(next_observ, dtype)),
          self.valid.scatter_nd_update(after, tf.zeros([count], tf.bool))]
    with tf.control_dependencies(provisional):
      index = agent_indices[:, None]
      return tf.group(
          self.cursor.scatter_nd_add(index, 1 + tf.cast(ended, tf.int64)),
          self.open_row.scatter_nd_update(index, tf.logical_not(ended)))

  def close_open_rows(self, agent_indices):
    """Keeps the provisional rows of abandoned episodes as their final observations."""
    index = agent_indices[:, None]
    step = tf.cast(tf.gather(self.open_row, agent_indices), tf.int64)
    return tf.group(self.cursor.scatter_nd_add(index, step),
                    self.open_row.scatter_nd_update(index, tf.zeros_like(agent_indices,
                                                                         tf.bool)))

  def start_rows(self, n_step):
    """(first, count) per environment: the rows that may start an n-step window.

    A window reads rows t..t+n_step, all written and none overwritten, so t runs
    from the oldest kept row to `n_step` rows before the provisional one.
    """
    newest = self.cursor  # The provisional (or next free) row.
    first = tf.maximum(newest + 1 - self.rows, 0)
    count = tf.maximum(newest - n_step - first + 1, 0)
    return first, count

  def size(self):
    """Transitions and observations held over all environments (int64)."""
    return tf.reduce_sum(tf.minimum(self.cursor, self.rows))

  def sample(self, generator, batch_size, n_step):
    """Samples n-step windows uniformly: an environment, then one of its start rows.

    Args:
      generator: a `tf.random.Generator`.
      batch_size: windows to sample.
      n_step: rows of transitions per window (one more row is read for the
        bootstrap observation).

    Returns:
      dict of 'env' [S], 'start' [S] (absolute row counts, not yet modulo the ring),
      'usable' bool [S] (the environment had a window to sample), and the
      windows' 'reward', 'valid', 'terminated' [S, n_step], 'action' [S].
    """
    first, count = self.start_rows(n_step)
    env = tf.cast(tf.floor(generator.uniform([batch_size]) * self.num_envs), tf.int32)
    env = tf.minimum(env, self.num_envs - 1)
    env_count = tf.gather(count, env)
    offset = tf.cast(tf.floor(generator.uniform([batch_size], dtype=tf.float64) *
                              tf.cast(env_count, tf.float64)), tf.int64)
    start = tf.gather(first, env) + tf.minimum(offset, tf.maximum(env_count - 1, 0))
    window = start[:, None] + tf.range(n_step, dtype=tf.int64)[None]
    window_index = tf.stack([tf.cast(window % self.rows, tf.int32),
                             tf.broadcast_to(env[:, None], tf.shape(window))], axis=-1)
    start_index = window_index[:, 0]
    return dict(
        env=env, start=start, usable=env_count > 0,
        reward=tf.gather_nd(self.reward, window_index),
        valid=tf.gather_nd(self.valid, window_index),
        terminated=tf.gather_nd(self.terminated, window_index),
        action=tf.gather_nd(self.action, start_index))

  def observations(self, env, rows):
    """float32 [S, observ_size]: the observations at absolute rows `rows` of environments `env`."""
    index = tf.stack([tf.cast(rows % self.rows, tf.int32), env], axis=1)
    return tf.cast(tf.gather_nd(self.observ, index), tf.float32)
