"""Returns and advantages of PPO over time-major segments [T, B].

A segment may hold several episodes of varied lengths per environment: the
`terminated` and `truncated` flags of step t say that the episode ended after
it. `next_value[t]` is the value of the observation that followed step t (for
an ended episode, its final observation, before the reset), so:

- a terminated step gets no bootstrap (a terminal state has value 0);
- a truncated step bootstraps from `next_value`, because a time limit is not a
  terminal state;
- the last step of the segment bootstraps from `next_value` as well;
- in every case the recursion stops at an episode end, so nothing leaks from
  the next episode into this one.
"""

import tensorflow as tf


def _reverse_scan(fn, elems, initial):
  return tf.scan(fn, elems, initializer=initial, reverse=True)


def transpose(tensor, perm=None):
  """`tf.transpose`, with booleans moved as floats: TensorFlow's oneDNN build transposes
  booleans only on CPUs with AVX-512 and otherwise logs an error line (then falls back to
  Eigen). The result is the same. (`tf.where`, not `tf.cast`: grappler moves a cast to
  the far side of a transpose, which would transpose the booleans again.)"""
  if tensor.dtype != tf.bool:
    return tf.transpose(tensor, perm)
  return tf.transpose(tf.where(tensor, 1.0, 0.0), perm) > 0.5


def lambda_advantage(reward, value, next_value, terminated, truncated, discount, lambda_):
  """Generalised advantage estimation, GAE(lambda).

  Args:
    reward: float [T, B].
    value: float [T, B], value of the observation each action was chosen on.
    next_value: float [T, B], value of the observation after each step.
    terminated: bool [T, B].
    truncated: bool [T, B].
    discount: scalar discount factor gamma.
    lambda_: scalar GAE lambda.

  Returns:
    float [T, B] advantages; advantage + value is the lambda-return target.
  """
  reward = tf.convert_to_tensor(reward, tf.float32)
  value = tf.convert_to_tensor(value, tf.float32)
  next_value = tf.convert_to_tensor(next_value, tf.float32)
  not_terminal = 1.0 - tf.cast(terminated, tf.float32)
  not_done = 1.0 - tf.cast(tf.logical_or(terminated, truncated), tf.float32)
  # TD error: bootstrap from the next observation unless the state was terminal
  # (on truncation next_value is the final observation's value).
  delta = reward + discount * not_terminal * next_value - value

  def step(next_advantage, elems):
    delta_t, not_done_t = elems
    return delta_t + discount * lambda_ * not_done_t * next_advantage

  return _reverse_scan(step, (delta, not_done), tf.zeros_like(reward[0]))


def explained_variance(prediction, target):
  """1 - Var[target - prediction] / Var[target]; 1 is perfect, 0 is the mean."""
  target_var = tf.math.reduce_variance(target)
  return 1.0 - tf.math.divide_no_nan(tf.math.reduce_variance(target - prediction), target_var)
