"""The deterministic policy of PPO, packaged for `tf.saved_model.save`.

The module holds only the network and the observation normaliser (not the
training memory or the optimiser) and has these functions, all on batches:

- feed-forward policy: `action(observ [N, *obs_shape]) -> action [N, ...]`,
  the deterministic action (Gaussian mean clipped to the bounds, or the most
  likely discrete action shifted by the space's start), normalisation included;
- recurrent policy: `action(observ, state) -> {'action', 'state'}` and
  `initial_state(batch_size) -> state`;
- `value(observ [N, *obs_shape]) -> [N]`.
"""

import functools

import tensorflow as tf


class ExportedPolicy(tf.Module):
  """The deterministic policy of a PPO algorithm; see the module docstring."""

  def __init__(self, algorithm, observation_space):
    super().__init__(name='exported_policy')
    # Only the network and the normaliser become part of the SavedModel; the
    # algorithm is reached through closures so its memory and optimiser stay out.
    self.network = algorithm.network
    self.observ_normalize = algorithm.observ_normalize
    network = self.network
    observ_spec = tf.TensorSpec([None, *observation_space.shape], tf.float32, name='observ')

    def action(observ):
      params, _ = network.policy(algorithm.normalize_observ(observ),
                                 network.initial_state(tf.shape(observ)[0]))
      return algorithm.env_action(network.distribution(params).mode())

    def recurrent_action(observ, state):
      params, state = network.policy(algorithm.normalize_observ(observ), state)
      return {'action': algorithm.env_action(network.distribution(params).mode()),
              'state': state}

    def value(observ):
      return network.value(algorithm.normalize_observ(observ))

    # PPO's network code branches on Python values only (as its training step, which
    # autograph does not rewrite either): no rewrite, a faster export.
    function = functools.partial(tf.function, autograph=False)
    if network.recurrent:
      state_spec = tf.TensorSpec([None, network.state_size], tf.float32, name='state')
      self.action = function(recurrent_action, input_signature=(observ_spec, state_spec))
      self.initial_state = function(
          network.initial_state, input_signature=(tf.TensorSpec([], tf.int32,
                                                                name='batch_size'),))
    else:
      self.action = function(action, input_signature=(observ_spec,))
    self.value = function(value, input_signature=(observ_spec,))
