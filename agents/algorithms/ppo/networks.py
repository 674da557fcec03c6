"""Policy and value networks of PPO, as `tf.Module`s.

Every network has the same interface, which `agents.algorithms.ppo.ppo.PPO` calls:

- `policy(observ [N, O], state [N, S]) -> (params [N, P], new_state [N, S])`
- `policy_sequence(observ [N, T, O], state [N, S], reset [N, T]) -> params [N, T, P]`,
  the same policy over whole sequences, resetting the state where `reset` is
  true (an episode began there); used by the update.
- `value(observ [..., O]) -> [...]`, always feed-forward (as in BatchPPO, the
  recurrent policy keeps a feed-forward value function).
- `distribution(params)`, the action distribution built from the parameters;
  `action_dtype` and `action_shape` say what one action looks like.

Box actions use a diagonal Gaussian whose log std is a state-independent
variable; Discrete actions use a categorical. Weights use orthogonal
initialisation (gain sqrt(2) for hidden layers, 0.01 for the policy output,
1 for the value output), a standard PPO implementation detail.

Four keys of the `network` section make the feed-forward and recurrent policies
BatchPPO's networks instead (its configs set them): `mean_activation: tanh` squashes
the Gaussian's mean, `std_transform: softplus` makes the std the softplus of its
variable, `initializer: glorot` starts the hidden layers and the value output from
Glorot-uniform weights, and `init_output_factor` starts the policy output layer from
BatchPPO's variance-scaling draw.
"""

import gymnasium
import numpy as np
import tensorflow as tf

from agents import plugins
from agents.algorithms.parts.layers import (
  MLP,
  Dense,
  apply_over_leading_axes,
  glorot_uniform,
  orthogonal,
  variance_scaling,
)
from agents.algorithms.ppo import config as config_lib
from agents.algorithms.ppo import distributions, utility

_ACTIVATIONS = {'tanh': tf.tanh, 'relu': tf.nn.relu, 'elu': tf.nn.elu}
assert tuple(_ACTIVATIONS) == config_lib.ACTIVATIONS


class GRUCell(tf.Module):
  """Gated recurrent unit (Cho et al., 2014)."""

  def __init__(self, in_size, units, rng, name=None):
    super().__init__(name=name)
    self.units = units
    self.input_kernel = tf.Variable(orthogonal((in_size, 3 * units), 1.0, rng))
    self.state_kernel = tf.Variable(
        np.concatenate([orthogonal((units, units), 1.0, rng) for _ in range(3)], 1))
    self.bias = tf.Variable(tf.zeros([3 * units]))

  def __call__(self, inputs, state):
    x_update, x_reset, x_candidate = tf.split(tf.matmul(inputs, self.input_kernel) + self.bias,
                                              3, -1)
    u_update, u_reset, u_candidate = tf.split(self.state_kernel, 3, -1)
    update = tf.sigmoid(x_update + tf.matmul(state, u_update))
    reset = tf.sigmoid(x_reset + tf.matmul(state, u_reset))
    candidate = tf.tanh(x_candidate + tf.matmul(reset * state, u_candidate))
    return (1.0 - update) * state + update * candidate


class PolicyValueNetwork(tf.Module):
  """Shared parts: value MLP, the distribution head, the feed-forward policy."""

  recurrent = False

  # pylint: disable-next=unused-argument
  def __init__(self, observ_size, action_space, policy_layers, value_layers, activation,
               init_std, seed, name, matmul_dtype='float32', mean_activation='none',
               std_transform='exp', initializer='orthogonal', init_output_factor=None):
    super().__init__(name=name)
    _check_choice('mean_activation', mean_activation, config_lib.MEAN_ACTIVATIONS)
    _check_choice('std_transform', std_transform, config_lib.STD_TRANSFORMS)
    _check_choice('initializer', initializer, config_lib.INITIALIZERS)
    _check_choice('matmul_dtype', matmul_dtype, config_lib.MATMUL_DTYPES)
    self._mean_tanh = mean_activation == 'tanh'
    self._softplus_std = std_transform == 'softplus'
    # Hidden layers: None is orthogonal of gain sqrt(2) (see layers.MLP).
    self._hidden_init = glorot_uniform if initializer == 'glorot' else None
    # The policy output layer's init: a gain of the orthogonal init, or BatchPPO's draw.
    self._policy_output_init = (0.01 if init_output_factor is None
                                else variance_scaling(init_output_factor))
    self._matmul_dtype = matmul_dtype
    if activation not in _ACTIVATIONS:
      raise ValueError(f'Unknown activation {activation!r}; expected one of '
                       f'{sorted(_ACTIVATIONS)} (config key "activation").')
    self._rng = np.random.default_rng(seed)
    self._activation = _ACTIVATIONS[activation]
    if isinstance(action_space, gymnasium.spaces.Box):
      self.distribution_class = distributions.DiagonalGaussian
      self.action_shape = tuple(action_space.shape)
      self.action_dtype = tf.float32
      self._head_size = int(np.prod(action_space.shape))
      if self._softplus_std:  # BatchPPO's: std = softplus(variable).
        self.before_softplus_std = tf.Variable(
            np.full([self._head_size], np.log(np.expm1(init_std)), np.float32),
            name='before_softplus_std')
      else:
        self.log_std = tf.Variable(np.full([self._head_size], np.log(init_std), np.float32),
                                   name='log_std')
    elif isinstance(action_space, gymnasium.spaces.Discrete):
      self.distribution_class = distributions.Categorical
      self.action_shape = ()
      self.action_dtype = tf.int32
      self._head_size = int(action_space.n)
    else:
      raise ValueError(f'Unsupported action space {action_space}; PPO supports Box and '
                       'Discrete.')
    self.value_mlp = MLP(observ_size, value_layers, 1, self._hidden_init or 1.0,
                         self._activation, self._rng, matmul_dtype, name='value',
                         hidden_init=self._hidden_init)
    self.state_size = 1

  def value(self, observ):
    return apply_over_leading_axes(self.value_mlp, observ)[..., 0]

  def distribution(self, params):
    return self.distribution_class.from_params(params)

  def _head_to_params(self, head):
    if self.distribution_class is not distributions.DiagonalGaussian:
      return head
    if self._mean_tanh:
      head = tf.tanh(head)
    # State-independent std: one learned variable, broadcast over the batch.
    log_std = (tf.math.log(tf.nn.softplus(self.before_softplus_std)) if self._softplus_std
               else self.log_std)
    return tf.concat([head, tf.zeros_like(head) + log_std], -1)

  def initial_state(self, batch_size):
    return tf.zeros([batch_size, self.state_size])


class FeedForwardPolicy(PolicyValueNetwork):
  """Feed-forward policy for Box (Gaussian) or Discrete (categorical) actions."""

  def __init__(self, observ_size, action_space, policy_layers=(64, 64), value_layers=(64, 64),
               activation='tanh', init_std=1.0, seed=0, matmul_dtype='float32',
               name='feed_forward_policy', **kwargs):
    super().__init__(observ_size, action_space, policy_layers, value_layers, activation,
                     init_std, seed, name, matmul_dtype, **_style(kwargs))
    self.policy_mlp = MLP(observ_size, policy_layers, self._head_size, self._policy_output_init,
                          self._activation, self._rng, matmul_dtype, name='policy',
                          hidden_init=self._hidden_init)

  def policy(self, observ, state):
    return self._head_to_params(self.policy_mlp(observ)), state

  def policy_sequence(self, observ, state, reset):
    del state, reset  # A feed-forward policy has no memory across steps.
    return self._head_to_params(apply_over_leading_axes(self.policy_mlp, observ))


class RecurrentPolicy(PolicyValueNetwork):
  """Policy with hidden layers, then a GRU, then a linear head (BatchPPO's recurrent_gaussian)."""

  recurrent = True

  def __init__(self, observ_size, action_space, policy_layers=(64,), value_layers=(64, 64),
               activation='tanh', init_std=1.0, seed=0, gru_units=64, matmul_dtype='float32',
               name='recurrent_policy', **kwargs):
    super().__init__(observ_size, action_space, policy_layers, value_layers, activation,
                     init_std, seed, name, matmul_dtype, **_style(kwargs))
    self.encoder = MLP(observ_size, policy_layers, 0, 1.0, self._activation, self._rng,
                       matmul_dtype, name='encoder', hidden_init=self._hidden_init)
    self.cell = GRUCell(self.encoder.output_size, gru_units, self._rng, name='gru')
    self.head = Dense(gru_units, self._head_size, self._policy_output_init, self._rng,
                      name='head')
    self.state_size = gru_units

  def policy(self, observ, state):
    state = self.cell(self.encoder(observ), state)
    return self._head_to_params(self.head(state)), state

  def policy_sequence(self, observ, state, reset):
    """The policy's parameters over whole sequences [N, T, P] (see the module docstring)."""
    features = apply_over_leading_axes(self.encoder, observ)

    def step(previous, elems):
      feature, reset_t = elems
      # An episode that begins here starts from the zero state.
      previous = tf.where(reset_t[:, None], tf.zeros_like(previous), previous)
      return self.cell(feature, previous)

    time_major = (tf.transpose(features, [1, 0, 2]), utility.transpose(reset, [1, 0]))
    states = tf.scan(step, time_major, initializer=state)
    head = apply_over_leading_axes(self.head, tf.transpose(states, [1, 0, 2]))
    return self._head_to_params(head)


_STYLE_KEYS = ('mean_activation', 'std_transform', 'initializer', 'init_output_factor')


def _style(kwargs):
  """The keys of `kwargs` that choose between this package's and BatchPPO's network (the
  network section's other keys, of other kinds, are not this network's)."""
  return {key: kwargs[key] for key in _STYLE_KEYS if key in kwargs}


def _check_choice(key, value, choices):
  if value not in choices:
    raise ValueError(f'Unknown {key} {value!r}; expected one of {choices} '
                     f'(config key "network.{key}").')


def make_network(kind, observation_space, action_space, seed=0, **kwargs):
  """Builds the network registered under `kind` for the given spaces.

  Args:
    kind: a network kind of `agents.plugins.NETWORKS` (config key "network.kind").
    observation_space: a gymnasium Box; observations are flattened.
    action_space: a gymnasium Box or Discrete.
    seed: seed of the initial weights.
    **kwargs: the keys of the config's `network` section but `kind` (the kind's own
      keys included).

  Returns:
    The network module.

  Raises:
    PluginError: the kind is not registered (a `ValueError` naming "network.kind").
  """
  network_class = plugins.import_path(plugins.NETWORKS.get(kind).network,
                                      f'network kind {kind!r}')
  observ_size = int(np.prod(observation_space.shape))
  return network_class(observ_size, action_space, seed=seed, **kwargs)
