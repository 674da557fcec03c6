"""QR-DQN (Dabney et al., 2018) as an in-graph algorithm: off-policy, value-based, batched.

Reads top to bottom as one training step of the batch:

1. `perform` runs the quantile network on the observations, averages each
   action's quantiles into its Q-value and acts greedily, or, while training,
   uniformly at random with probability epsilon (a linear decay over the
   training environment steps). Evaluation phases act greedily.
2. `experience` writes the transition into the in-graph `ReplayMemory` (one
   ring of rows per environment) and, every `update_every` batch steps once
   `learning_starts` environment steps are recorded, runs `update` inside the
   same fused step (a `tf.cond` on the counters; no Python in the loop).
3. `update` takes `gradient_steps` Adam steps. Each samples n-step windows
   uniformly, builds the target distribution r_t + ... + gamma^k Z'(s_{t+k}, a*)
   from the target network (a* greedy under the target network, or under the
   online one with `double_q`), cut at episode ends (bootstrapping after a
   truncation, not after a termination), and minimises the quantile Huber loss
   of the taken action's quantiles. Every `target_update_period` gradient steps
   the target network moves to the online one (a copy with tau = 1, Polyak
   averaging below).

The replay memory, both networks, Adam's moments, the random generator and the
counters are variables of the module, so a checkpoint holds the whole state
and a resumed run continues exactly. The exported SavedModel holds the online
network only (`export_policy`).
"""

import dataclasses

import gymnasium
import numpy as np
import tensorflow as tf

from agents import plugins
from agents.algorithms import algorithm
from agents.algorithms.parts import adam, layers
from agents.algorithms.qrdqn import config as config_lib
from agents.algorithms.qrdqn import replay
from agents.config_fields import ConfigError

# Methods marked `do_not_convert` use explicit `tf.cond` / `tf.while_loop`, so
# autograph need not rewrite them (tracing the fused step is faster).

METRIC_NAMES = ('loss', 'q_mean', 'gradient_norm', 'epsilon', 'replay_size', 'sampled_valid')

_ACTIVATIONS = {'tanh': tf.tanh, 'relu': tf.nn.relu, 'elu': tf.nn.elu}
# The keys of `NetworkConfig`; a `network` section's others are its kind's own.
def quantile_huber_loss(quantiles, target, kappa=1.0):
  """The quantile regression loss of Dabney et al. (2018), with a Huber core.

  Args:
    quantiles: float32 [S, N], predicted quantiles at the midpoints
      tau_i = (2i + 1) / (2N).
    target: float32 [S, M], samples of the target distribution.
    kappa: the Huber threshold.

  Returns:
    float32 [S]: sum over i of the mean over j of
    |tau_i - 1{u_ij < 0}| * Huber_kappa(u_ij) / kappa, with u_ij = target_j - quantile_i.
  """
  num_quantiles = tf.shape(quantiles)[1]
  tau = (tf.range(num_quantiles, dtype=tf.float32) + 0.5) / tf.cast(num_quantiles, tf.float32)
  error = target[:, None, :] - quantiles[:, :, None]
  absolute = tf.abs(error)
  huber = tf.where(absolute <= kappa, 0.5 * tf.square(error), kappa * (absolute - 0.5 * kappa))
  # The asymmetric weight makes quantile i the tau_i-quantile at the optimum.
  weight = tf.abs(tau[None, :, None] - tf.cast(error < 0, tf.float32))
  return tf.reduce_sum(tf.reduce_mean(weight * huber / kappa, axis=2), axis=1)


def linear_epsilon(step, start, end, decay_steps):
  """Epsilon after `step` training environment steps: linear from `start` to `end`, then flat."""
  fraction = tf.minimum(tf.cast(step, tf.float32) / float(decay_steps), 1.0)
  return start + fraction * (end - start)


class QuantileNetwork(tf.Module):
  """An MLP from the flattened observation to N quantiles per action: [B, A, N]."""

  def __init__(self, observ_size, num_actions, num_quantiles, hidden_layers=(64, 64),
               activation='relu', matmul_dtype='float32', seed=0, name=None):
    super().__init__(name=name)
    self.num_actions = num_actions
    self.num_quantiles = num_quantiles
    # Seeded: the target network built with the same seed starts as a copy.
    rng = np.random.default_rng(seed)
    self.body = layers.MLP(observ_size, hidden_layers, num_actions * num_quantiles, 1.0,
                             _ACTIVATIONS[activation], rng, matmul_dtype, name='mlp')

  def __call__(self, observ):
    return tf.reshape(self.body(observ), [-1, self.num_actions, self.num_quantiles])

  def set_layer_weights(self, weights):
    """Assigns [(kernel, bias), ...] to the hidden layers and, last, the output layer.

    Raises:
      ConfigError: the count or a shape differs from this network's (named).
    """
    layers = [*self.body.layers, self.body.head]  # pylint: disable=redefined-outer-name
    if len(weights) != len(layers):
      raise ConfigError(f"Config key 'network.initial_weights' gives {len(weights)} layers; "
                        f'the network has {len(layers)} (network.hidden_layers and the output).')
    for index, (layer, (kernel, bias)) in enumerate(zip(layers, weights)):
      for variable, value in ((layer.kernel, kernel), (layer.bias, bias)):
        if tuple(variable.shape) != np.shape(value):
          raise ConfigError(f"Config key 'network.initial_weights': layer {index} has shape "
                            f'{np.shape(value)}, the network {tuple(variable.shape)}.')
        variable.assign(np.asarray(value, np.float32))


def build_network(network_config, kind_options, observ_size, num_actions, num_quantiles, seed,
                  name):
  """The quantile network of `network_config.kind` (`plugins.QUANTILE_NETWORKS`).

  Args:
    network_config: a `NetworkConfig`.
    kind_options: the keys the kind adds to the `network` section (a mapping).
    observ_size, num_actions, num_quantiles: the network's shapes.
    seed: seed of the initial weights.
    name: module name.
  """
  entry = config_lib.NetworkConfig.kinds.get(network_config.kind)
  network_class = plugins.import_path(entry.network, f'network kind {network_config.kind!r}')
  return network_class(observ_size, num_actions, num_quantiles,
                       hidden_layers=tuple(network_config.hidden_layers),
                       activation=network_config.activation,
                       matmul_dtype=network_config.matmul_dtype, seed=seed, name=name,
                       **kind_options)


def load_initial_weights(network_config):
  """The [(kernel, bias), ...] that `network.initial_weights` names.

  Raises:
    ConfigError: one line naming the key: the kind is not `mlp`, or the function fails
      (its message, e.g. how to fetch missing weights).
  """
  spec = network_config.initial_weights
  if network_config.kind != 'mlp':
    raise ConfigError(f"Config key 'network.initial_weights' = {spec!r} needs network.kind "
                      f'mlp, got {network_config.kind!r}.')
  function = plugins.import_path(spec, "Config key 'network.initial_weights'")
  try:
    return function()
  except (ValueError, OSError) as error:
    raise ConfigError(f"Config key 'network.initial_weights' = {spec!r}: {error}") from None


class QRDQN(algorithm.InGraphAlgorithm):
  """QR-DQN over a batch of environments with a Discrete action space."""

  Config = config_lib.QRDQNConfig
  NetworkConfig = config_lib.NetworkConfig

  def __init__(self, num_envs, observation_space, action_space, config=None,
               network_config=None, *, network_options=None, seed=0, is_training=None,
               name='qrdqn', **hyperparameters):
    """Creates the networks, the replay memory, Adam and the counters.

    Args:
      num_envs: number of environments B.
      observation_space: gymnasium Box of one environment (flattened).
      action_space: gymnasium Discrete of one environment.
      config: a `QRDQNConfig`; None takes the defaults.
      network_config: a `NetworkConfig`; None takes the defaults.
      network_options: the keys `network_config.kind` adds to the `network` section.
      seed: seed of the weights, the exploration and the replay sampling.
      is_training: optional bool Variable (the `Loop`'s): explore and learn
        (True) or act greedily without recording (False); None creates one, True.
      name: module name.
      **hyperparameters: fields of `QRDQNConfig` that replace those of `config`.

    Raises:
      ConfigError: the action space is not Discrete, or the replay memory is too small.
    """
    super().__init__(name=name)
    if not isinstance(action_space, gymnasium.spaces.Discrete):
      raise ConfigError(f'QR-DQN needs a discrete action space, got {action_space}.')
    config = dataclasses.replace(config or config_lib.QRDQNConfig(), **hyperparameters)
    network_config = network_config or config_lib.NetworkConfig()
    config_lib.check_replay(num_envs, config)
    self.config = config
    self._observ_size = int(np.prod(observation_space.shape))
    self._num_actions = int(action_space.n)
    # The network scores actions 0..n-1; the space's actions start at `start`.
    self._action_start = int(action_space.start)

    # The initial weights are read first: a missing file fails at once, before two
    # networks (7 x 600 units for Perciatelli44) are built and initialised for nothing.
    weights = (load_initial_weights(network_config) if network_config.initial_weights
               else None)
    self.online_network, self.target_network = (
        build_network(network_config, dict(network_options or {}), self._observ_size,
                      self._num_actions, config.num_quantiles, seed, network_name)
        for network_name in ('online', 'target'))
    if weights is not None:
      for network in (self.online_network, self.target_network):
        network.set_layer_weights(weights)
    self.memory = replay.ReplayMemory(
        config_lib.rows_per_env(num_envs, config.replay_capacity), num_envs,
        self._observ_size, tf.as_dtype(config.replay_dtype))
    self.optimizer = adam.Adam(self.online_network.trainable_variables, config.learning_rate,
                               config.max_grad_norm or None, epsilon=config.adam_epsilon)
    self.generator = tf.random.Generator.from_seed(seed)
    self.training = (is_training if is_training is not None
                     else tf.Variable(True, trainable=False, name='is_training'))
    self.env_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name='env_steps')
    self.batch_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name='batch_steps')
    self.num_updates = tf.Variable(0, dtype=tf.int64, trainable=False, name='num_updates')
    self.metrics = {name: tf.Variable(0.0, trainable=False, name=name) for name in METRIC_NAMES}

  @classmethod
  def from_config(cls, config, observation_space, action_space, is_training=None):
    """Builds QR-DQN with the run config's `algorithm` section and the network of its
    `network` section (the network kind's own keys as `network_options`)."""
    options = config.network_options
    return cls(config.environment.num_agents, observation_space, action_space,
               config.algorithm, config.network,
               network_options=dataclasses.asdict(options) if options is not None else {},
               seed=config.seed, is_training=is_training)

  def export_policy(self, observation_space):
    """The greedy policy as a SavedModel-ready module: the online network only."""
    return ExportedPolicy(self, observation_space)

  def _flatten_observ(self, observ):
    return tf.reshape(tf.cast(observ, tf.float32), [-1, self._observ_size])

  def quantiles(self, observ, network=None):
    """float32 [N, A, num_quantiles] of raw observations (online network by default)."""
    network = network or self.online_network
    return network(self._flatten_observ(observ))

  def q_values(self, observ, network=None):
    """float32 [N, A]: the mean of each action's quantiles (online network by default)."""
    return tf.reduce_mean(self.quantiles(observ, network), axis=2)

  def greedy_action(self, observ):
    """int32 [N]: the environment's action of highest Q-value."""
    return tf.argmax(self.q_values(observ), axis=1, output_type=tf.int32) + self._action_start

  def epsilon(self):
    """The current exploration rate of training phases."""
    return linear_epsilon(self.env_steps, self.config.epsilon_start, self.config.epsilon_end,
                          self.config.epsilon_decay_steps)

  @tf.autograph.experimental.do_not_convert
  def begin_episode(self, agent_indices):
    # An episode abandoned by a forced reset keeps its last observation as a
    # final one, so its last transitions still bootstrap correctly.
    return self.memory.close_open_rows(tf.convert_to_tensor(agent_indices, tf.int32))

  @tf.autograph.experimental.do_not_convert
  def perform(self, agent_indices, observ):
    greedy = self.greedy_action(observ)

    def explore():
      # Epsilon-greedy: a uniformly random action with probability epsilon.
      count = tf.shape(greedy)
      random_action = self._action_start + tf.minimum(tf.cast(
          tf.floor(self.generator.uniform(count) * self._num_actions), tf.int32),
          self._num_actions - 1)
      return tf.where(self.generator.uniform(count) < self.epsilon(), random_action, greedy)

    return tf.cond(self.training, explore, lambda: greedy)

  @tf.autograph.experimental.do_not_convert
  def experience(self, agent_indices, observ, action, reward, terminated, truncated,
                 next_observ):
    """Records the transition and maybe learns (when training); returns whether it learnt."""
    return tf.cond(self.training,
                   lambda: self._record(agent_indices, observ, action, reward, terminated,
                                        truncated, next_observ),
                   lambda: tf.constant(False))

  def _record(self, agent_indices, observ, action, reward, terminated, truncated, next_observ):
    agent_indices = tf.convert_to_tensor(agent_indices, tf.int32)
    terminated = tf.cast(terminated, tf.bool)
    ended = tf.logical_or(terminated, tf.cast(truncated, tf.bool))
    append = self.memory.append(
        agent_indices, self._flatten_observ(observ),
        tf.cast(action, tf.int32) - self._action_start, tf.cast(reward, tf.float32),
        terminated, ended, self._flatten_observ(next_observ))
    with tf.control_dependencies([append]):
      env_steps = self.env_steps.assign_add(tf.cast(tf.size(agent_indices), tf.int64))
      batch_steps = self.batch_steps.assign_add(1)
    should_update = tf.logical_and(env_steps >= self.config.learning_starts,
                                   batch_steps % self.config.update_every == 0)
    return tf.cond(should_update, self.update, lambda: tf.constant(False))

  @tf.autograph.experimental.do_not_convert
  def end_episode(self, agent_indices):
    # The replay memory keeps episode boundaries in its rows; nothing to do.
    del agent_indices

  @tf.autograph.experimental.do_not_convert
  def update(self):
    """Takes `gradient_steps` gradient steps on replayed windows; returns True."""
    zero = tf.constant(0.0)

    def gradient_step(index, loss, q_mean, norm, valid):
      step = self.train_step()
      return (index + 1, loss + step['loss'], q_mean + step['q_mean'],
              norm + step['gradient_norm'], valid + step['sampled_valid'])

    steps = self.config.gradient_steps
    _, *totals = tf.while_loop(lambda index, *_: index < steps, gradient_step,
                               (tf.constant(0), zero, zero, zero, zero))
    metrics = dict(zip(('loss', 'q_mean', 'gradient_norm', 'sampled_valid'),
                       [total / steps for total in totals]))
    metrics.update(epsilon=self.epsilon(), replay_size=tf.cast(self.memory.size(), tf.float32))
    for name, value in metrics.items():
      self.metrics[name].assign(value)
    algorithm.write_update_summaries('qrdqn', metrics, self.num_updates)
    return tf.constant(True)

  @tf.autograph.experimental.do_not_convert
  def train_step(self):
    """One Adam step on a uniformly sampled batch of n-step windows; returns its metrics."""
    config = self.config
    sample = self.memory.sample(self.generator, config.batch_size, config.n_step)
    returns, steps, bootstrap_discount = replay.n_step_targets(
        sample['reward'] * config.reward_scale, sample['valid'], sample['terminated'],
        config.discount)
    # A window must start on a transition (not on an observation-only row).
    mask = tf.cast(tf.logical_and(sample['usable'], sample['valid'][:, 0]), tf.float32)
    observ = self.memory.observations(sample['env'], sample['start'])
    bootstrap_observ = self.memory.observations(sample['env'],
                                                sample['start'] + tf.cast(steps, tf.int64))
    next_quantiles = self.target_network(bootstrap_observ)
    chooser = self.online_network if config.double_q else self.target_network
    next_action = tf.argmax(self.q_values(bootstrap_observ, chooser), axis=1,
                            output_type=tf.int32)
    next_quantiles = tf.gather(next_quantiles, next_action, axis=1, batch_dims=1)
    target = tf.stop_gradient(returns[:, None] + bootstrap_discount[:, None] * next_quantiles)
    variables = self.online_network.trainable_variables
    with tf.GradientTape() as tape:
      quantiles = tf.gather(self.online_network(observ), sample['action'], axis=1, batch_dims=1)
      per_sample = quantile_huber_loss(quantiles, target, config.huber_kappa)
      loss = tf.reduce_sum(mask * per_sample) / tf.maximum(tf.reduce_sum(mask), 1.0)
    gradient_norm = self.optimizer.apply(tape.gradient(loss, variables))
    with tf.control_dependencies([gradient_norm]):
      updates = self.num_updates.assign_add(1)
      target_update = tf.cond(updates % config.target_update_period == 0,
                              self.update_target, lambda: tf.constant(False))
    with tf.control_dependencies([target_update]):
      return dict(loss=tf.identity(loss), gradient_norm=gradient_norm,
                  q_mean=tf.reduce_mean(quantiles),
                  sampled_valid=tf.reduce_mean(mask))

  def update_target(self):
    """Moves the target network to the online one: tau * online + (1 - tau) * target."""
    tau = self.config.target_update_tau
    assigns = [target.assign(online if tau == 1.0 else tau * online + (1.0 - tau) * target)
               for online, target in zip(self.online_network.trainable_variables,
                                         self.target_network.trainable_variables)]
    with tf.control_dependencies(assigns):
      return tf.constant(True)



class ExportedPolicy(tf.Module):
  """The greedy policy of a QR-DQN, for `tf.saved_model.save`.

  Holds the online network only (not the replay memory, the target network or
  Adam) and has, on batches of observations [N, *obs_shape]:

  - `action(observ) -> int32 [N]`, the greedy action (shifted by the space's start);
  - `q_values(observ) -> float32 [N, A]`, the means of the action's quantiles;
  - `quantiles(observ) -> float32 [N, A, num_quantiles]`.
  """

  def __init__(self, qrdqn, observation_space):
    super().__init__(name='exported_policy')
    # The algorithm is reached through closures so only the network is saved.
    self.network = qrdqn.online_network
    spec = tf.TensorSpec([None, *observation_space.shape], tf.float32, name='observ')
    # Plain ops, as in the training step: no autograph rewrite (a faster export).
    self.action = tf.function(qrdqn.greedy_action, input_signature=(spec,), autograph=False)
    self.q_values = tf.function(qrdqn.q_values, input_signature=(spec,), autograph=False)
    self.quantiles = tf.function(qrdqn.quantiles, input_signature=(spec,), autograph=False)
