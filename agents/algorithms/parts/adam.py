"""Adam with gradient-norm clipping, as a `tf.Module` of plain variables.

A small optimiser of our own rather than a Keras one: its moments are ordinary
`tf.Variable`s owned by the algorithm, so checkpoints restore the optimiser
state exactly and the update traces into the fused step without Keras.
"""

import tensorflow as tf


class Adam(tf.Module):
  """Adam (Kingma & Ba, 2015) over a fixed list of variables."""

  def __init__(self, variables, learning_rate, max_grad_norm=None, beta1=0.9, beta2=0.999,
               epsilon=1e-5, name='adam'):
    """Creates the moment variables.

    Args:
      variables: the trainable variables to optimise.
      learning_rate: step size, a float.
      max_grad_norm: clip the global gradient norm to this value; None disables.
      beta1: decay of the first moment.
      beta2: decay of the second moment.
      epsilon: added to the root of the second moment (1e-5 as in PPO
        implementations, not Adam's 1e-8).
      name: module name.
    """
    super().__init__(name=name)
    self._variables = list(variables)
    self._learning_rate = learning_rate
    self._max_grad_norm = max_grad_norm
    self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
    self.iterations = tf.Variable(0, dtype=tf.int64, trainable=False, name='iterations')
    self.first_moments = [tf.Variable(tf.zeros_like(v), trainable=False) for v in self._variables]
    self.second_moments = [tf.Variable(tf.zeros_like(v), trainable=False)
                           for v in self._variables]

  def apply(self, gradients):
    """Clips the gradients by their global norm and takes one Adam step.

    Args:
      gradients: one gradient per variable (None counts as zero).

    Returns:
      The global gradient norm before clipping.
    """
    gradients = [tf.zeros_like(v) if g is None else g
                 for g, v in zip(gradients, self._variables)]
    global_norm = tf.linalg.global_norm(gradients)
    if self._max_grad_norm:
      # Gradient clipping: rescale all gradients together when their norm is large.
      gradients, _ = tf.clip_by_global_norm(gradients, self._max_grad_norm, global_norm)
    step = tf.cast(self.iterations.assign_add(1), tf.float32)
    learning_rate = tf.constant(self._learning_rate, tf.float32)
    beta1_power = tf.pow(self._beta1, step)
    beta2_power = tf.pow(self._beta2, step)
    for variable, gradient, first, second in zip(self._variables, gradients,
                                                 self.first_moments, self.second_moments):
      # One fused kernel per variable (the same update as m/v with bias
      # correction, written out in the test): a few ops instead of a dozen.
      tf.raw_ops.ResourceApplyAdam(
          var=variable.handle, m=first.handle, v=second.handle, beta1_power=beta1_power,
          beta2_power=beta2_power, lr=learning_rate,
          beta1=tf.constant(self._beta1, tf.float32), beta2=tf.constant(self._beta2, tf.float32),
          epsilon=tf.constant(self._epsilon, tf.float32), grad=gradient)
    return global_norm
