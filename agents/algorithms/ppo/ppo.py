"""BatchPPO: proximal policy optimisation as an in-graph algorithm.

Reads top to bottom as one training iteration:

1. `perform` normalises the observations with the streaming statistics, runs
   the policy and samples an action (the mode when not training). Box actions
   are clipped to the bounds for the environment, but the unclipped sample is
   what the memory stores, so log-probabilities stay correct. With
   `normalize_ranges` (BatchPPO's range normalisation) bounded observations are
   first mapped to [-1, 1], and the policy acts in [-1, 1], mapped onto the
   action bounds.
2. `experience` stores the transition in the fixed-length `SegmentMemory`,
   together with the value of the observation and of the next observation
   (needed to bootstrap on truncation), updates the observation normaliser and
   the reward scale, and runs `update` inside the same fused step when the
   memory is full.
3. `update` computes GAE(lambda) advantages, then runs several epochs of Adam
   over shuffled mini-batches (feed-forward policy) or shuffled chunks of whole
   environment rows (recurrent policy), with BatchPPO's adaptive KL penalty or
   the clipped surrogate, a value loss and an optional entropy bonus, and
   finally adapts the KL penalty.

Summaries go through `tf.summary` (a no-op without a default writer); the last
update's metrics are also kept in variables (`metrics`) so a driver can log
them without a summary writer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
import tensorflow as tf

from agents.algorithms import algorithm
from agents.algorithms.parts import adam
from agents.algorithms.ppo import config as config_lib
from agents.algorithms.ppo import exported_policy, memory, networks, normalize, utility

# Methods marked `do_not_convert` use explicit `tf.cond` and no Python control
# flow on tensors, so autograph need not rewrite them; skipping the rewrite
# makes tracing the fused step seconds faster; `update` writes its loops as
# `tf.while_loop` for the same reason.
#
METRIC_NAMES = (
    'policy_loss', 'value_loss', 'entropy', 'kl', 'kl_penalty', 'clip_fraction',
    'explained_variance', 'gradient_norm', 'advantage_mean', 'return_mean', 'observ_mean',
    'observ_std', 'reward_scale_std')


def adapt_kl_penalty(penalty: tf.Tensor, kl: tf.Tensor, kl_target: float) -> tf.Tensor:
  """BatchPPO's adaptive KL penalty: x1.5 above 1.3 target, /1.5 below 0.7 target.

  Args:
    penalty: current penalty coefficient (scalar tensor).
    kl: mean KL divergence between the policy before and after the update.
    kl_target: desired KL divergence per update.

  Returns:
    The new penalty coefficient.
  """
  penalty = tf.convert_to_tensor(penalty, tf.float32)
  return tf.where(kl > 1.3 * kl_target, penalty * 1.5,
                  tf.where(kl < 0.7 * kl_target, penalty / 1.5, penalty))


def kl_penalty_loss(kl: tf.Tensor, penalty: tf.Tensor, kl_target: float, cutoff_factor: float,
                    cutoff_coef: float) -> tf.Tensor:
  """Adaptive penalty term plus BatchPPO's quadratic cutoff above `cutoff_factor * kl_target`."""
  threshold = cutoff_factor * kl_target
  cutoff = cutoff_coef * tf.square(tf.nn.relu(kl - threshold))
  return penalty * kl + cutoff


def _finite_bounds(space: gymnasium.Space) -> tuple[tf.Tensor, tf.Tensor] | None:
  """(low, high), flattened, of a Box whose bounds are all finite (and apart), which
  `normalize_ranges` maps to [-1, 1]; None for any other space, left as it is (BatchPPO's
  rule: a space with one unbounded or degenerate dimension is not mapped)."""
  if not isinstance(space, gymnasium.spaces.Box):
    return None
  low = np.asarray(space.low, np.float64).ravel()
  high = np.asarray(space.high, np.float64).ravel()
  if not (np.isfinite(low).all() and np.isfinite(high).all() and (high > low).all()):
    return None
  return tf.constant(low, tf.float32), tf.constant(high, tf.float32)


class PPO(algorithm.InGraphAlgorithm):
  """Proximal policy optimisation over a batch of environments."""

  Config = config_lib.PPOConfig
  NetworkConfig = config_lib.NetworkConfig

  def __init__(self, batch_size: int, observation_space: gymnasium.Space,
               action_space: gymnasium.Space, network: tf.Module,
               config: config_lib.PPOConfig | None = None, *, seed: int = 0,
               is_training: tf.Variable | None = None, name: str = 'ppo',
               **hyperparameters: Any) -> None:
    """Creates the variables of the algorithm.

    Args:
      batch_size: number of environments B.
      observation_space: gymnasium Box of one environment (flattened).
      action_space: gymnasium Box or Discrete of one environment.
      network: a network from `agents.algorithms.ppo.networks` for these spaces.
      config: a `PPOConfig`; None takes the defaults.
      seed: seed of the action sampling and shuffling generator.
      is_training: optional bool Variable (the `Loop`'s) that says whether to
        sample and learn (True) or act by the mode without learning (False);
        None creates one, set to True.
      name: module name.
      **hyperparameters: fields of `PPOConfig` that replace those of `config`.
    """
    super().__init__(name=name)
    config = dataclasses.replace(config or config_lib.PPOConfig(), **hyperparameters)
    self.config = config
    if config.policy_objective not in config_lib.POLICY_OBJECTIVES:
      raise ValueError(f'Unknown policy_objective {config.policy_objective!r}; expected one of '
                       f'{config_lib.POLICY_OBJECTIVES}.')
    config_lib.check_minibatches(batch_size, config.segment_length, config.num_minibatches,
                                 network.recurrent)
    self._batch_size = batch_size
    self._network = network
    self._observ_size = int(np.prod(observation_space.shape))  # type: ignore[arg-type]  # a Box's
    self._action_space = action_space
    self._action_low = self._action_high = None
    self._action_start = 0
    # BatchPPO's range normalisation: (low, high) of a space it maps to [-1, 1], or None.
    self._observ_range = _finite_bounds(observation_space) if config.normalize_ranges else None
    self._action_range = _finite_bounds(action_space) if config.normalize_ranges else None
    if isinstance(action_space, gymnasium.spaces.Box):
      self._action_low = tf.constant(action_space.low, tf.float32)
      self._action_high = tf.constant(action_space.high, tf.float32)
    elif isinstance(action_space, gymnasium.spaces.Discrete):
      # The categorical samples indices 0..n-1; the space's actions start at `start`.
      self._action_start = int(action_space.start)

    self.observ_normalize = normalize.StreamingNormalize(
        [self._observ_size], center=True, scale=True, clip=config.observ_clip,
        name='observ_normalize')
    self.reward_scale = normalize.RewardScale(batch_size, config.discount, clip=config.reward_clip,
                                              name='reward_scale')
    self.generator = tf.random.Generator.from_seed(seed)
    self.training = (is_training if is_training is not None
                     else tf.Variable(True, trainable=False, name='is_training'))
    self.kl_penalty = tf.Variable(float(config.kl_init_penalty), trainable=False,
                                  name='kl_penalty')
    self.num_updates: tf.Variable = tf.Variable(0, dtype=tf.int64, trainable=False,
                                                name='num_updates')
    self.metrics = {name: tf.Variable(0.0, trainable=False, name=name) for name in METRIC_NAMES}

    params_size = self._params_size()
    state_size = network.state_size
    action_spec = tf.TensorSpec(network.action_shape, network.action_dtype)
    # Per-environment values cached by `perform` for `experience`.
    self._policy_state = tf.Variable(tf.zeros([batch_size, state_size]), trainable=False)
    self._last_state = tf.Variable(tf.zeros([batch_size, state_size]), trainable=False)
    self._last_params = tf.Variable(tf.zeros([batch_size, params_size]), trainable=False)
    self._last_action = tf.Variable(
        tf.zeros([batch_size, *network.action_shape], network.action_dtype), trainable=False)
    self._episode_start = tf.Variable(tf.ones([batch_size], tf.bool), trainable=False)
    self.memory = memory.SegmentMemory({
        'observ': tf.TensorSpec([self._observ_size], tf.float32),
        'action': action_spec,
        'params': tf.TensorSpec([params_size], tf.float32),
        'reward': tf.TensorSpec([], tf.float32),
        'terminated': tf.TensorSpec([], tf.bool),
        'truncated': tf.TensorSpec([], tf.bool),
        'value': tf.TensorSpec([], tf.float32),
        'next_value': tf.TensorSpec([], tf.float32),
        'state': tf.TensorSpec([state_size], tf.float32),
        'reset': tf.TensorSpec([], tf.bool),
    }, batch_size, config.segment_length)
    self.optimizer = adam.Adam(network.trainable_variables, config.learning_rate,
                               config.max_grad_norm)
    # The update but its summaries, compiled by XLA into one kernel launch (`jit_compile`;
    # the policy step and the store of a transition measured no faster compiled), or
    # traced op by op.
    self._train_compiled = (tf.function(self._train, jit_compile=True, autograph=False)
                            if config.jit_compile else self._train)

  @classmethod
  def from_config(cls, config: Any, observation_space: gymnasium.Space,
                  action_space: gymnasium.Space, is_training: tf.Variable | None = None) -> PPO:
    """Builds the network of the run config's `network` section (the kind's own keys
    included) and PPO with its `algorithm` section."""
    options = config.network_options
    network = networks.make_network(
        observation_space=observation_space, action_space=action_space, seed=config.seed,
        **dataclasses.asdict(config.network),
        **(dataclasses.asdict(options) if options is not None else {}))
    return cls(config.environment.num_agents, observation_space, action_space, network,
               config.algorithm, seed=config.seed, is_training=is_training)

  def export_policy(self, observation_space: gymnasium.Space) -> tf.Module:
    """The deterministic policy as a SavedModel-ready module: network and normaliser only."""
    return exported_policy.ExportedPolicy(self, observation_space)

  @property
  def network(self) -> tf.Module:
    return self._network

  def _params_size(self) -> int:
    params, _ = self._network.policy(tf.zeros([1, self._observ_size]),
                                     self._network.initial_state(1))
    return int(params.shape[-1])

  def _flatten_observ(self, observ: tf.Tensor) -> tf.Tensor:
    observ = tf.reshape(tf.cast(observ, tf.float32), [-1, self._observ_size])
    if self._observ_range is None:
      return observ
    low, high = self._observ_range
    return 2.0 * (observ - low) / (high - low) - 1.0

  def normalize_observ(self, observ: tf.Tensor) -> tf.Tensor:
    """Flattens and (if configured) normalises a batch of raw observations."""
    observ = self._flatten_observ(observ)
    return self.observ_normalize.transform(observ) if self.config.normalize_observ else observ

  def env_action(self, action: tf.Tensor) -> tf.Tensor:
    """The environment's action for a sample: Box clipped to its bounds (with
    `normalize_ranges`, clipped to [-1, 1] and mapped onto them), Discrete shifted by the
    space's `start`."""
    if self._action_low is None:
      return action + self._action_start if self._action_start else action
    if self._action_range is not None:
      low, high = self._action_range
      return low + (tf.clip_by_value(action, -1.0, 1.0) + 1.0) * 0.5 * (high - low)
    return tf.clip_by_value(action, self._action_low, self._action_high)

  @tf.autograph.experimental.do_not_convert
  def begin_episode(self, agent_indices: tf.Tensor) -> None:
    agent_indices = tf.convert_to_tensor(agent_indices, tf.int32)
    # Recurrent state starts from zero in every episode.
    zero_state = tf.zeros([tf.shape(agent_indices)[0], self._network.state_size])
    index = agent_indices[:, None]
    self._policy_state.scatter_nd_update(index, zero_state)
    self._episode_start.scatter_nd_update(index, tf.ones_like(agent_indices, tf.bool))
    self.reward_scale.returns.scatter_nd_update(index, tf.zeros_like(agent_indices, tf.float32))
    # An episode abandoned by a forced reset (phase change, resume) ends here
    # as if truncated, so advantages do not flow into the next episode.
    self.memory.truncate_last(agent_indices)

  @tf.autograph.experimental.do_not_convert
  def perform(self, agent_indices: tf.Tensor, observ: tf.Tensor) -> tf.Tensor:
    agent_indices = tf.convert_to_tensor(agent_indices, tf.int32)
    index = agent_indices[:, None]
    state = tf.gather(self._policy_state, agent_indices)
    params, new_state = self._network.policy(self.normalize_observ(observ), state)
    distribution = self._network.distribution(params)
    action = tf.cond(self.training, lambda: distribution.sample(self.generator),
                     distribution.mode)
    with tf.control_dependencies([
        self._last_state.scatter_nd_update(index, state),
        self._policy_state.scatter_nd_update(index, new_state),
        self._last_params.scatter_nd_update(index, params),
        # The memory keeps the unclipped sample: its log-probability is what
        # the policy actually assigned.
        self._last_action.scatter_nd_update(index, action)]):
      return tf.identity(self.env_action(action))

  @tf.autograph.experimental.do_not_convert
  def experience(self, agent_indices: tf.Tensor, observ: tf.Tensor, action: tf.Tensor,
                 reward: tf.Tensor, terminated: tf.Tensor, truncated: tf.Tensor,
                 next_observ: tf.Tensor) -> tf.Tensor:
    """Records the transition (when training); returns whether an update ran."""
    del action  # The unclipped sample cached by `perform` is stored instead.
    return tf.cond(self.training,
                   lambda: self._record(agent_indices, observ, reward, terminated, truncated,
                                        next_observ),
                   lambda: tf.constant(False))

  def _record(self, agent_indices: tf.Tensor, observ: tf.Tensor, reward: tf.Tensor,
              terminated: tf.Tensor, truncated: tf.Tensor, next_observ: tf.Tensor) -> tf.Tensor:
    agent_indices = tf.convert_to_tensor(agent_indices, tf.int32)
    reward = tf.cast(reward, tf.float32)
    terminated = tf.cast(terminated, tf.bool)
    truncated = tf.cast(truncated, tf.bool)
    observ = self._flatten_observ(observ)
    count = tf.shape(observ)[0]
    # Normalise both observations with the statistics the policy acted on,
    # before they are updated with this step.
    normalized = self.normalize_observ(tf.concat([observ, self._flatten_observ(next_observ)], 0))
    values = self._network.value(normalized)
    transition = {
        'observ': normalized[:count],
        'action': tf.gather(self._last_action, agent_indices),
        'params': tf.gather(self._last_params, agent_indices),
        'reward': reward,
        'terminated': terminated,
        'truncated': truncated,
        'value': values[:count],
        # Value of the observation after the step: the bootstrap on
        # truncation and at the end of the segment.
        'next_value': values[count:],
        'state': tf.gather(self._last_state, agent_indices),
        'reset': tf.gather(self._episode_start, agent_indices),
    }
    append = self.memory.append(agent_indices, transition)
    statistics = [
        self._episode_start.scatter_nd_update(agent_indices[:, None],
                                              tf.zeros_like(agent_indices, tf.bool)),
        self.reward_scale.update(agent_indices, reward, tf.logical_or(terminated, truncated))]
    if self.config.normalize_observ:
      statistics.append(self.observ_normalize.update(observ))
    with tf.control_dependencies([append] + statistics):
      # The update runs inside the fused step, as soon as the memory is full.
      return tf.cond(self.memory.is_full(), self.update, lambda: tf.constant(False))

  @tf.autograph.experimental.do_not_convert
  def end_episode(self, agent_indices: tf.Tensor) -> None:
    # Segment memory keeps episode boundaries in its done flags; nothing to do.
    del agent_indices

  @tf.function(autograph=False)
  def update(self) -> tf.Tensor:
    """Trains on the full memory, adapts the KL penalty and clears the memory.

    Returns:
      True, so that `experience` can tell whether an update ran.
    """
    # The shuffles are drawn here, outside XLA: XLA's Philox draws other numbers than
    # TensorFlow's kernels, and the same seed should shuffle alike whether compiled or not.
    # (Rows are samples, or whole environment rows for a recurrent policy.)
    rows = self._batch_size if self._network.recurrent else (
        self._batch_size * self.config.segment_length)
    orders = tf.stack([tf.argsort(self.generator.uniform([rows]))
                       for _ in range(self.config.update_epochs)])
    metrics = self._train_compiled(orders)
    algorithm.write_update_summaries('ppo', metrics, self.num_updates)
    self.num_updates.assign_add(1)
    with tf.control_dependencies([self.memory.clear()]):
      return tf.constant(True)

  def _train(self, orders: tf.Tensor) -> dict[str, tf.Tensor]:
    """The update but its summaries and shuffles: advantages, the epochs (rows in the
    order of `orders` [epochs, rows]), the KL penalty, the metrics."""
    batch = self.training_batch()
    # Only what the loss reads travels into the mini-batches.
    train_keys = ('observ', 'action', 'params', 'advantage', 'returns', 'state', 'reset')
    totals = self._epochs({key: batch[key] for key in train_keys}, orders)
    steps = tf.cast(self.config.update_epochs * self.config.num_minibatches, tf.float32)
    metrics = {name: total / steps for name, total in totals.items()}

    # Adaptive KL penalty (BatchPPO): measure the KL of the whole update once.
    new_params = self._policy_params(batch)
    old = self._network.distribution(batch['params'])
    kl = tf.reduce_mean(old.kl(self._network.distribution(new_params)))
    if self.config.policy_objective == 'kl_penalty':
      self.kl_penalty.assign(adapt_kl_penalty(self.kl_penalty, kl, self.config.kl_target))
    metrics.update(
        kl=kl, kl_penalty=self.kl_penalty.read_value(),
        explained_variance=utility.explained_variance(batch['value'], batch['returns']),
        advantage_mean=tf.reduce_mean(batch['advantage']),
        return_mean=tf.reduce_mean(batch['returns']),
        observ_mean=tf.reduce_mean(self.observ_normalize.mean),
        observ_std=tf.reduce_mean(self.observ_normalize.std()),
        reward_scale_std=tf.reduce_mean(self.reward_scale.normalize.std()))
    for name, value in metrics.items():
      self.metrics[name].assign(value)
    return metrics

  def _epochs(self, batch: Mapping[str, tf.Tensor], orders: tf.Tensor) -> dict[str, tf.Tensor]:
    """All epochs of mini-batch steps over `batch`; returns the metrics summed over steps.

    One compiled function (XLA with `jit_compile`): the gathers, the losses, their
    gradients and Adam of every step, as a loop of static shapes. Epoch e takes the rows
    in the order `orders[e]`, cut into mini-batches.
    """
    num_minibatches = self.config.num_minibatches
    rows_per_minibatch = int(orders.shape[1]) // num_minibatches
    totals = {name: tf.constant(0.0) for name in
              ('policy_loss', 'value_loss', 'entropy', 'clip_fraction', 'gradient_norm')}

    def epoch(epoch_index: tf.Tensor,
              totals: dict[str, tf.Tensor]) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
      order = tf.reshape(tf.gather(orders, epoch_index), [num_minibatches, rows_per_minibatch])

      def minibatch(index: tf.Tensor,
                    totals: dict[str, tf.Tensor]) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
        indices = tf.gather(order, index)
        step_metrics = self._train_step({key: tf.gather(value, indices)
                                         for key, value in batch.items()})
        return index + 1, {name: totals[name] + step_metrics[name] for name in totals}

      _, totals = tf.while_loop(lambda index, _: index < num_minibatches, minibatch,
                                (tf.constant(0), totals))
      return epoch_index + 1, totals

    _, totals = tf.while_loop(lambda epoch_index, _: epoch_index < self.config.update_epochs,
                              epoch, (tf.constant(0), totals))
    return totals

  @tf.autograph.experimental.do_not_convert
  def training_batch(self) -> dict[str, tf.Tensor]:
    """The memory with GAE advantages and return targets, laid out for the update.

    Returns:
      dict of tensors: [B * T, ...] per sample for a feed-forward policy,
      [B, T, ...] per environment row for a recurrent one.
    """
    data = self.memory.data()
    reward = data['reward']
    if self.config.normalize_reward:
      # Reward scaling by the running std of the return, applied at update time.
      reward = self.reward_scale.transform(reward)
    time_major = [utility.transpose(x) for x in (reward, data['value'], data['next_value'],
                                                  data['terminated'], data['truncated'])]
    # GAE(lambda), bootstrapping on truncation and at the segment end.
    advantage = tf.transpose(utility.lambda_advantage(
        *time_major, self.config.discount,  # type: ignore[call-arg]  # five arrays
        self.config.gae_lambda))
    batch = dict(data, advantage=advantage, returns=advantage + data['value'])
    if not self._network.recurrent:
      batch = {key: tf.reshape(value, tf.concat([[-1], tf.shape(value)[2:]], 0))
               for key, value in batch.items()}
    return batch

  @tf.autograph.experimental.do_not_convert
  def _policy_params(self, batch: Mapping[str, tf.Tensor]) -> tf.Tensor:
    if self._network.recurrent:
      return self._network.policy_sequence(batch['observ'], batch['state'][:, 0],
                                           batch['reset'])
    params, _ = self._network.policy(batch['observ'], batch['state'])
    return params

  @tf.autograph.experimental.do_not_convert
  def _train_step(self, batch: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    advantage = batch['advantage']
    if self.config.normalize_advantage:
      # Advantage normalisation, per mini-batch.
      mean, variance = tf.nn.moments(advantage, axes=list(range(len(advantage.shape))))
      advantage = (advantage - mean) / (tf.sqrt(variance) + 1e-8)
    old = self._network.distribution(batch['params'])
    old_log_prob = old.log_prob(batch['action'])
    with tf.GradientTape() as tape:
      new = self._network.distribution(self._policy_params(batch))
      ratio = tf.exp(new.log_prob(batch['action']) - old_log_prob)
      kl = tf.reduce_mean(old.kl(new))
      if self.config.policy_objective == 'kl_penalty':
        # BatchPPO: surrogate objective plus adaptive KL penalty and a steep
        # quadratic cutoff when the KL overshoots its target.
        policy_loss = -tf.reduce_mean(ratio * advantage) + kl_penalty_loss(
            kl, self.kl_penalty, self.config.kl_target, self.config.kl_cutoff_factor,
            self.config.kl_cutoff_coef)
      else:
        # Clipped surrogate objective (Schulman et al., 2017).
        epsilon = self.config.clip_ratio
        clipped = tf.clip_by_value(ratio, 1.0 - epsilon, 1.0 + epsilon)
        policy_loss = -tf.reduce_mean(tf.minimum(ratio * advantage, clipped * advantage))
      value = self._network.value(batch['observ'])
      value_loss = 0.5 * tf.reduce_mean(tf.square(value - batch['returns']))
      entropy = tf.reduce_mean(new.entropy())
      # Entropy bonus: subtracting it rewards keeping the policy stochastic.
      loss = policy_loss + self.config.value_coef * value_loss - self.config.entropy_coef * entropy
    gradients = tape.gradient(loss, self._network.trainable_variables)
    gradient_norm = self.optimizer.apply(gradients)
    clip_fraction = tf.reduce_mean(
        tf.cast(tf.abs(ratio - 1.0) > self.config.clip_ratio, tf.float32))
    return dict(policy_loss=policy_loss, value_loss=value_loss, entropy=entropy,
                clip_fraction=clip_fraction, gradient_norm=gradient_norm)
