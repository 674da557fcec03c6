"""BLE's `dqn` agent: a DQN in TensorFlow, written against BLE's Agent interface.

Nothing here is specific to this project but the import of `agent` (in BLE:
`from balloon_learning_environment.agents import agent`). `DQNAgent` is the agent BLE's
scripts drive, one balloon at a time (`create_agent('dqn', ...)`, BLE's default agent);
`BatchedDQNAgent` is the same learner acting for a batch of balloons, which is how it
trains fast here. It is also the worked example of writing an agent for BLE's interface
(`examples/dqn_agent.py` re-exports it). Train and evaluate either with the BLE-style
scripts of `agents.python_agents`:

    from agents.python_agents import eval_lib, train_lib
    from agents.python_agents.dqn_agent import BatchedDQNAgent, DQNAgent

    dqn = DQNAgent(3, (1099,))                                  # BLE's way: one balloon
    train_lib.run_training_loop('runs/dqn', env, dqn, num_iterations=20)

    batch = train_lib.make_batch_env('BalloonLearningEnvironment-v0', 64,
                                     progress_reward=0.2)      # 64 balloons, shaped reward
    dqn = BatchedDQNAgent(3, (1099,), batch_size=64)
    train_lib.run_training_loop('runs/dqn64', batch, dqn, num_iterations=15,
                                episodes_per_iteration=64)  # one round of the batch
    results = eval_lib.eval_agent(dqn, None, eval_lib.get_eval_suite('small_eval'))

Trained so (920k steps, 6-8 minutes on a loaded 2-core machine), it flew `small_eval` at
TWR50 0.30 and 0.28 (two seeds), against random's 0.07 and the station seeker's 0.31
(`python -m bench.ble_agent_training`; docs/python_agents.md, "A worked example").

The agent, top to bottom:
- The Q-network (`network='column'`, the default) reads BLE's 1099 features as they are
  laid out: 16 ambient features, then a wind column of 361 pressure levels x 3 features
  with the balloon's own level at index 180. One small MLP, shared by every level (every
  `column_stride`-th), scores a level from its winds, its offset from the balloon and
  the ambient features; Q(UP) is the best score of the reachable levels above, Q(DOWN)
  of those below, Q(STAY) the balloon's own level's, plus a per-action term of the
  ambient features. One judgement shared across levels is what made the project's PPO
  learn fast on the balloon (the column policy). `network='mlp'` is the plain MLP over
  the flat observation (any observation shape); on the balloon, flat MLPs learnt far
  slower in the project's PPO and QR-DQN runs (not measured with this DQN).
- Exploration is epsilon-greedy, epsilon decaying linearly over `epsilon_decay_steps`
  transitions; evaluation mode is greedy and records nothing.
- The replay memory keeps one ring per batch row (observations as float16) and forms
  n-step returns when it samples, cut at episode ends: a terminal step does not
  bootstrap; an episode cut by time (BLE's `end_episode` has no final observation)
  bootstraps from the last observation seen, with the returns that reach it.
- Learning: once `min_replay` transitions are in, one gradient step per
  `update_period` transitions (a batched step of B rows records B) on the Huber loss
  against the double-DQN target; rewards are scaled by (1 - discount) so Q-values
  stay near the scale of one step's reward; Adam with a clipped gradient norm; the
  target network is copied every `target_update_period` gradient steps.
- Acting and learning are `tf.function`s with fixed input signatures (traced once).
- Checkpoints (`tf.train.Checkpoint`) hold both networks, Adam and the counters; the
  replay memory refills after a resume.
"""

import os
import re

import numpy as np
import tensorflow as tf

from agents.python_agents import agent

_CHECKPOINT = re.compile(r'^dqn-(\d+)\.index$')
# BLE's feature vector: 16 ambient features, then 361 levels x (uncertainty, bearing
# error, speed), the balloon's own level at index 180, levels above it first.
_AMBIENT, _LEVELS, _CENTRE = 16, 361, 180
# Slot flags of the replay memory: the episode went on, ended, or was cut after the slot.
_GOES_ON, _TERMINAL, _CUT = 0, 1, 2


def _dense(fan_in, fan_out, initializer, name):
  return (tf.Variable(initializer([fan_in, fan_out]), name=f'{name}_w'),
          tf.Variable(tf.zeros([fan_out]), name=f'{name}_b'))


class MLPQNetwork(tf.Module):
  """An MLP from flat observations [B, *shape] to Q-values [B, num_actions]."""

  def __init__(self, observation_shape, num_actions, hidden_layers=(256, 256), seed=0,
               name=None):
    super().__init__(name=name)
    initializer = tf.keras.initializers.GlorotUniform(seed=seed)
    sizes = [int(np.prod(observation_shape)), *hidden_layers, num_actions]
    self.layers = [_dense(fan_in, fan_out, initializer, f'layer{index}')
                   for index, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:]))]

  def __call__(self, observations):
    hidden = tf.reshape(observations, [tf.shape(observations)[0], -1])
    for weights, bias in self.layers[:-1]:
      hidden = tf.nn.relu(hidden @ weights + bias)
    weights, bias = self.layers[-1]
    return hidden @ weights + bias


class ColumnQNetwork(tf.Module):
  """Q-values [B, 3] (DOWN, STAY, UP) of BLE's features [B, 1099], level by level."""

  def __init__(self, observation_shape, num_actions, context_size=64, level_layers=(32,),
               column_stride=4, seed=0, name=None):
    super().__init__(name=name)
    if tuple(observation_shape) != (_AMBIENT + 3 * _LEVELS,) or num_actions != 3:
      raise ValueError(f"network='column' reads BLE's {_AMBIENT + 3 * _LEVELS} features "
                       f'and 3 actions (DOWN, STAY, UP), got observation_shape '
                       f"{tuple(observation_shape)} and {num_actions} actions; use "
                       "network='mlp'.")
    if _CENTRE % column_stride:
      raise ValueError(f'column_stride must divide {_CENTRE} so that the balloon\'s own '
                       f'level is read, got {column_stride}.')
    initializer = tf.keras.initializers.GlorotUniform(seed=seed)
    self.stride, self.centre = column_stride, _CENTRE // column_stride
    self.context = _dense(_AMBIENT, context_size, initializer, 'context')
    # A level's first layer: its winds and offset, plus a projection of the context.
    self.level_input = _dense(5, level_layers[0], initializer, 'level_input')
    self.context_input = _dense(context_size, level_layers[0], initializer, 'context_input')
    sizes = [*level_layers, 1]
    self.level_layers = [_dense(fan_in, fan_out, initializer, f'level{index}')
                         for index, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:]))]
    self.action_bias = _dense(context_size, 3, initializer, 'action_bias')
    offsets = (np.arange(0, _LEVELS, column_stride, dtype=np.float32) - _CENTRE) / _CENTRE
    self.offsets = tf.constant(np.stack([offsets, np.abs(offsets)], -1))

  def __call__(self, observations):
    batch, levels = tf.shape(observations)[0], len(self.offsets)
    weights, bias = self.context
    context = tf.nn.relu(observations[:, :_AMBIENT] @ weights + bias)
    winds = tf.reshape(observations[:, _AMBIENT:], [batch, _LEVELS, 3])[:, ::self.stride]
    inputs = tf.concat([winds, tf.broadcast_to(self.offsets, [batch, levels, 2])], -1)
    weights, bias = self.level_input
    projection, projection_bias = self.context_input
    hidden = tf.nn.relu(inputs @ weights + bias
                        + (context @ projection + projection_bias)[:, None])
    for weights, bias in self.level_layers[:-1]:
      hidden = tf.nn.relu(hidden @ weights + bias)
    weights, bias = self.level_layers[-1]
    scores = (hidden @ weights + bias)[..., 0]  # [B, levels]
    # A speed feature of 1 marks padding or an unreachable level.
    valid = winds[..., 2] < 1.0
    stay = scores[:, self.centre]
    up = _best_or(scores[:, :self.centre], valid[:, :self.centre], stay)
    down = _best_or(scores[:, self.centre + 1:], valid[:, self.centre + 1:], stay)
    weights, bias = self.action_bias
    return tf.stack([down, stay, up], -1) + context @ weights + bias


def _best_or(scores, valid, fallback):
  """The best valid score of each row; `fallback` where none is valid (the move is a stay)."""
  best = tf.reduce_max(tf.where(valid, scores, -1e9), -1)
  return tf.where(tf.reduce_any(valid, -1), best, fallback)


class ReplayMemory:
  """One ring of `capacity // rows` steps per batch row, sampled as n-step transitions.

  Slot t of a row holds the observation and action of a step, its reward and whether
  the episode went on, ended or was cut after it. A sample starting at slot t sums the
  discounted rewards of up to `n_step` slots and bootstraps from the observation that
  follows them, unless the episode ended (no bootstrap) or was cut (the window stops
  at the cut slot, whose observation is the last one seen, and bootstraps from it).
  """

  def __init__(self, rows, capacity, observation_shape, n_step, discount, seed):
    self.slots = max(capacity // rows, n_step + 2)
    self._observations = np.zeros((rows, self.slots, *observation_shape), np.float16)
    self._actions = np.zeros((rows, self.slots), np.int32)
    self._rewards = np.zeros((rows, self.slots), np.float32)
    self._ends = np.zeros((rows, self.slots), np.int8)
    self._acted = np.zeros(rows, np.int64)  # slots holding an observation and action
    self._rewarded = np.zeros(rows, np.int64)  # slots whose reward is known
    self._n_step, self._rows = n_step, rows
    self._discounts = discount ** np.arange(n_step + 1, dtype=np.float32)
    self._rng = np.random.default_rng(seed)

  def __len__(self):
    return int(np.minimum(self._rewarded, self.slots).sum())

  def add_step(self, rows, observations, actions):
    """Rows `rows` act: a new slot each. A slot left without its reward becomes a cut."""
    self.add_reward(rows, None, _CUT)
    slots = self._acted[rows] % self.slots
    self._observations[rows, slots] = observations
    self._actions[rows, slots] = actions
    self._ends[rows, slots] = _GOES_ON
    self._acted[rows] += 1

  def add_reward(self, rows, rewards, ends=_GOES_ON):
    """The rewards of rows' last steps and what happened after them (`_GOES_ON`, ...)."""
    rows = rows[self._acted[rows] > self._rewarded[rows]]
    slots = (self._acted[rows] - 1) % self.slots
    if rewards is not None:
      self._rewards[rows, slots] = rewards
    self._ends[rows, slots] = ends
    self._rewarded[rows] = self._acted[rows]

  def sample(self, size):
    """(observations, actions, returns, discounts, next observations, weights) of `size`
    n-step transitions; weight 0 marks a draw with no complete transition (ignored)."""
    rows = self._rng.integers(0, self._rows, size)
    oldest = np.maximum(self._acted[rows] - self.slots, 0)
    count = self._rewarded[rows] - oldest  # slots with a known reward
    starts = oldest + np.floor(self._rng.random(size) * np.maximum(count, 1)).astype(np.int64)
    window = starts[:, None] + np.arange(self._n_step)  # [S, n]
    known = window < self._rewarded[rows][:, None]
    ends = np.where(known, self._ends[rows[:, None], window % self.slots], _CUT)
    stops = ends != _GOES_ON  # an end, a cut, or a reward not known yet
    first = np.where(stops.any(1), stops.argmax(1), self._n_step)
    last_end = ends[np.arange(size), np.minimum(first, self._n_step - 1)]
    terminal = (first < self._n_step) & (last_end == _TERMINAL)
    steps = np.where(terminal, first + 1, first)  # rewards summed
    rewards = np.where(np.arange(self._n_step) < steps[:, None],
                       self._rewards[rows[:, None], window % self.slots], 0.0)
    returns = rewards @ self._discounts[:-1]
    bootstrap = starts + steps  # slot of the observation bootstrapped from
    valid = (count > 0) & (steps > 0) & (terminal | (bootstrap < self._acted[rows]))
    discounts = np.where(terminal, 0.0, self._discounts[steps]).astype(np.float32)
    return (self._observations[rows, starts % self.slots].astype(np.float32),
            self._actions[rows, starts % self.slots], returns.astype(np.float32), discounts,
            self._observations[rows, bootstrap % self.slots].astype(np.float32),
            valid.astype(np.float32))


class DQNLearner:
  """The networks, Adam, the replay memory and the schedules, for `rows` batch rows.

  `DQNAgent` and `BatchedDQNAgent` hold one; its keyword arguments are their
  hyperparameters (documented in `DQNAgent.__init__`).
  """

  def __init__(self, num_actions, observation_shape, rows, *, network='column',
               hidden_layers=(256, 256), column_stride=4, learning_rate=5e-4,
               adam_epsilon=3.125e-4, max_grad_norm=10.0, discount=0.993, n_step=5,
               replay_capacity=100_000, minibatch_size=256, min_replay=5_000, update_period=64,
               target_update_period=250, epsilon_start=1.0, epsilon_end=0.01,
               epsilon_decay_steps=100_000, seed=0):
    if network not in ('column', 'mlp'):
      raise ValueError(f"network must be 'column' or 'mlp', got {network!r}.")
    self.online, self.target = (
        ColumnQNetwork(observation_shape, num_actions, column_stride=column_stride,
                       seed=seed, name=name) if network == 'column' else
        MLPQNetwork(observation_shape, num_actions, hidden_layers, seed, name=name)
        for name in ('online', 'target'))
    self._copy_to_target()
    self.optimizer = tf.keras.optimizers.Adam(learning_rate, epsilon=adam_epsilon,
                                              global_clipnorm=max_grad_norm or None)
    self.optimizer.build(self.online.trainable_variables)  # so a checkpoint restores it
    self.training_steps = tf.Variable(0, dtype=tf.int64, name='training_steps')
    self.gradient_steps = tf.Variable(0, dtype=tf.int64, name='gradient_steps')
    self.memory = ReplayMemory(rows, replay_capacity, tuple(observation_shape), n_step,
                               discount, seed)
    self.checkpoint = tf.train.Checkpoint(online=self.online, target=self.target,
                                          optimizer=self.optimizer,
                                          training_steps=self.training_steps,
                                          gradient_steps=self.gradient_steps)
    self._rng = np.random.default_rng(seed)
    self._num_actions = num_actions
    self._reward_scale = 1.0 - discount
    self._minibatch_size, self._min_replay = minibatch_size, min_replay
    self._update_period, self._target_update_period = update_period, target_update_period
    self._epsilon = (epsilon_start, epsilon_end, epsilon_decay_steps)
    # The counters, in Python while training (no tensor op per step); in the checkpoint.
    self._steps = self._gradient_steps = 0
    self._owed_updates = 0.0
    observations = tf.TensorSpec([None, *observation_shape], tf.float32)
    vector = tf.TensorSpec([None], tf.float32)
    self._greedy = tf.function(self._greedy_actions, input_signature=[observations])
    self._train_step = tf.function(self._gradient_step, input_signature=[
        observations, tf.TensorSpec([None], tf.int32), vector, vector, observations, vector])

  @property
  def steps(self):
    """Transitions recorded in training mode."""
    return self._steps

  @property
  def updates(self):
    """Gradient steps taken."""
    return self._gradient_steps

  def epsilon(self):
    """The exploration rate after the training steps taken so far."""
    start, end, decay_steps = self._epsilon
    return start + min(self._steps / decay_steps, 1.0) * (end - start)

  def act(self, observations, training):
    """Epsilon-greedy actions (greedy when not training) for observations [R, ...]."""
    observations = np.asarray(observations, np.float32)
    actions = self._greedy(observations).numpy()
    if training:
      explore = self._rng.random(len(actions)) < self.epsilon()
      actions[explore] = self._rng.integers(0, self._num_actions, int(explore.sum()))
    return actions

  def observe(self, rows, observations, actions):
    """Records rows' steps; learns once per `update_period` transitions recorded."""
    self.memory.add_step(rows, observations, actions)
    self._steps += len(rows)
    if self._steps < self._min_replay:
      return
    self._owed_updates += len(rows) / self._update_period
    while self._owed_updates >= 1.0:
      self._owed_updates -= 1.0
      self._train_step(*self.memory.sample(self._minibatch_size))
      self._gradient_steps += 1
      if self._gradient_steps % self._target_update_period == 0:
        self._copy_to_target()

  def _greedy_actions(self, observations):
    return tf.argmax(self.online(observations), axis=1, output_type=tf.int32)

  def _gradient_step(self, observations, actions, returns, discounts, next_observations,
                     weights):
    with tf.GradientTape() as tape:
      # One online pass over both observations (the next ones' values get no gradient).
      both = self.online(tf.concat([observations, next_observations], 0))
      q_values, next_online = tf.split(both, 2)
      q = tf.gather(q_values, actions, batch_dims=1)
      # Double DQN: the online network picks the next action, the target one values it.
      next_actions = tf.argmax(next_online, axis=1, output_type=tf.int32)
      next_q = tf.gather(self.target(next_observations), next_actions, batch_dims=1)
      targets = tf.stop_gradient(self._reward_scale * returns + discounts * next_q)
      losses = tf.keras.losses.huber(targets[:, None], q[:, None])
      loss = tf.reduce_sum(weights * losses) / tf.maximum(tf.reduce_sum(weights), 1.0)
    variables = self.online.trainable_variables
    self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss

  def _copy_to_target(self):
    for target, online in zip(self.target.trainable_variables,
                              self.online.trainable_variables):
      target.assign(online)

  def save(self, checkpoint_dir, iteration_number):
    os.makedirs(checkpoint_dir, exist_ok=True)
    self.training_steps.assign(self._steps)
    self.gradient_steps.assign(self._gradient_steps)
    self.checkpoint.write(os.path.join(checkpoint_dir, f'dqn-{iteration_number}'))

  def load(self, checkpoint_dir, iteration_number):
    path = os.path.join(checkpoint_dir, f'dqn-{iteration_number}')
    self.checkpoint.read(path).assert_existing_objects_matched()
    self._steps = int(self.training_steps.numpy())
    self._gradient_steps = int(self.gradient_steps.numpy())

  def reload_latest(self, checkpoint_dir):
    names = os.listdir(checkpoint_dir) if os.path.isdir(checkpoint_dir) else ()
    iterations = [int(match.group(1)) for match in map(_CHECKPOINT.match, names) if match]
    if not iterations:
      return -1
    self.load(checkpoint_dir, max(iterations))
    return max(iterations)


class _LearnerMethods:
  """BLE's checkpoint methods and mode of an agent holding a `DQNLearner` in `learner`."""

  def set_mode(self, mode):
    self._training = agent.AgentMode(mode) == agent.AgentMode.TRAIN

  def save_checkpoint(self, checkpoint_dir, iteration_number):
    self.learner.save(checkpoint_dir, iteration_number)

  def load_checkpoint(self, checkpoint_dir, iteration_number):
    self.learner.load(checkpoint_dir, iteration_number)

  def reload_latest_checkpoint(self, checkpoint_dir):
    return self.learner.reload_latest(checkpoint_dir)

  @property
  def training_steps(self):
    """Transitions recorded in training mode (restored from a checkpoint)."""
    return self.learner.steps


class DQNAgent(_LearnerMethods, agent.Agent):
  """DQN (Mnih et al., 2015; double-DQN targets, n-step returns) for one environment."""

  _ROW = np.zeros(1, np.int64)

  def __init__(self, num_actions, observation_shape, **hyperparameters):
    """Builds the networks, Adam and the replay memory.

    Args:
      num_actions: the number of discrete actions.
      observation_shape: the shape of one observation.
      **hyperparameters: of the learner:
        network: 'column' (BLE's features, level by level) or 'mlp' (flat);
        hidden_layers: the MLP's hidden sizes; column_stride: every k-th level read;
        learning_rate, adam_epsilon, max_grad_norm: Adam's, and the gradient clip;
        discount, n_step: gamma and the steps of the returns;
        replay_capacity, minibatch_size, min_replay: transitions kept, per gradient step,
          and recorded before the first;
        update_period: transitions recorded per gradient step;
        target_update_period: gradient steps between copies to the target network;
        epsilon_start, epsilon_end, epsilon_decay_steps: the linear exploration schedule;
        seed: of the weights, the exploration and the replay sampling.
    """
    self.learner = DQNLearner(num_actions, observation_shape, 1, **hyperparameters)
    super().__init__(num_actions, observation_shape)  # sets TRAIN mode

  def begin_episode(self, observation):
    return self._act(observation)

  def step(self, reward, observation):
    if self._training:
      self.learner.memory.add_reward(self._ROW, [reward])
    return self._act(observation)

  def end_episode(self, reward, terminal=True):
    if self._training:
      self.learner.memory.add_reward(self._ROW, [reward], _TERMINAL if terminal else _CUT)

  def _act(self, observation):
    observations = np.asarray(observation, np.float32)[None]
    actions = self.learner.act(observations, self._training)
    if self._training:
      self.learner.observe(self._ROW, observations, actions)
    return int(actions[0])


class BatchedDQNAgent(_LearnerMethods, agent.BatchedAgent):
  """`DQNAgent`'s learner acting for a batch of `batch_size` environments in one call.

  One network, one replay memory (a ring per row) and one schedule: a batched step of
  R rows is R transitions, as R steps of `DQNAgent` would be.
  """

  def __init__(self, num_actions, observation_shape, batch_size, **hyperparameters):
    """As `DQNAgent`, for `batch_size` rows (see its hyperparameters)."""
    self.learner = DQNLearner(num_actions, observation_shape, batch_size, **hyperparameters)
    super().__init__(num_actions, observation_shape, batch_size)

  def begin_episode(self, observations, rows):
    return self._act(observations, rows)

  def step(self, rewards, observations, rows):
    if self._training:
      self.learner.memory.add_reward(np.asarray(rows), rewards)
    return self._act(observations, rows)

  def end_episode(self, rewards, terminals, rows):
    if self._training:
      terminals = np.asarray(terminals, bool)
      rows = np.asarray(rows)
      self.learner.memory.add_reward(rows[terminals], np.asarray(rewards)[terminals], _TERMINAL)
      self.learner.memory.add_reward(rows[~terminals], None, _CUT)

  def _act(self, observations, rows):
    actions = self.learner.act(observations, self._training)
    if self._training:
      self.learner.observe(np.asarray(rows), np.asarray(observations, np.float32), actions)
    return actions
