"""A worked example: a small DQN in TensorFlow, written against BLE's Agent interface.

Nothing here is specific to this project but the import of `agent` (in BLE:
`from balloon_learning_environment.agents import agent`). Train and evaluate it with the
BLE-style scripts of `agents.python_agents` (this repository's root on PYTHONPATH):

    from agents.python_agents import eval_lib, train_lib
    from examples.dqn_agent import DQNAgent

    dqn = DQNAgent(3, (1099,), learning_rate=1e-3)
    train_lib.run_training_loop('runs/dqn', env, dqn, num_iterations=20)
    results = eval_lib.eval_agent(dqn, env, eval_lib.get_eval_suite('small_eval'))

The agent, top to bottom: a small MLP maps the observation to one Q-value per action;
it acts epsilon-greedily (epsilon decays linearly over `epsilon_decay_steps` training
steps; greedy in evaluation mode); every transition goes into a replay memory (a NumPy
ring, observations stored as float16); every `update_period` steps, once `min_replay`
transitions are in, one Adam step on the Huber loss of a sampled batch against
r + gamma * max_a Q_target(s', a); every `target_update_period` steps the target network
is copied from the online one. Checkpoints (`tf.train.Checkpoint`) hold both networks,
Adam and the step counter; the replay memory refills after a resume.
"""

import os
import re

import numpy as np
import tensorflow as tf

from agents.python_agents import agent

_CHECKPOINT = re.compile(r'^dqn-(\d+)\.index$')


class QNetwork(tf.Module):
  """An MLP from observations [B, *shape] to Q-values [B, num_actions]."""

  def __init__(self, observation_size, num_actions, hidden_layers, seed, name=None):
    super().__init__(name=name)
    initializer = tf.keras.initializers.GlorotUniform(seed=seed)
    sizes = [observation_size, *hidden_layers, num_actions]
    self.weights = [tf.Variable(initializer([fan_in, fan_out]), name=f'w{index}')
                    for index, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:]))]
    self.biases = [tf.Variable(tf.zeros([fan_out]), name=f'b{index}')
                   for index, fan_out in enumerate(sizes[1:])]

  def __call__(self, observations):
    hidden = tf.reshape(tf.cast(observations, tf.float32), [tf.shape(observations)[0], -1])
    for weights, bias in zip(self.weights[:-1], self.biases[:-1]):
      hidden = tf.nn.relu(hidden @ weights + bias)
    return hidden @ self.weights[-1] + self.biases[-1]


class ReplayMemory:
  """A ring of the last `capacity` transitions (s, a, r, s', terminal), sampled uniformly."""

  def __init__(self, capacity, observation_shape, seed):
    self._observations = np.zeros((capacity, *observation_shape), np.float16)
    self._next_observations = np.zeros((capacity, *observation_shape), np.float16)
    self._actions = np.zeros(capacity, np.int32)
    self._rewards = np.zeros(capacity, np.float32)
    self._terminals = np.zeros(capacity, np.float32)
    self._capacity = capacity
    self._count = 0
    self._rng = np.random.default_rng(seed)

  def __len__(self):
    return min(self._count, self._capacity)

  def add(self, observation, action, reward, next_observation, terminal):
    index = self._count % self._capacity
    self._observations[index] = observation
    self._actions[index] = action
    self._rewards[index] = reward
    self._next_observations[index] = next_observation
    self._terminals[index] = terminal
    self._count += 1

  def sample(self, batch_size):
    index = self._rng.integers(0, len(self), batch_size)
    return (self._observations[index].astype(np.float32), self._actions[index],
            self._rewards[index], self._next_observations[index].astype(np.float32),
            self._terminals[index])


class DQNAgent(agent.Agent):
  """DQN (Mnih et al., 2015) for one environment, with BLE's Agent methods."""

  def __init__(self, num_actions, observation_shape, *, hidden_layers=(128, 128),
               learning_rate=5e-4, discount=0.99, replay_capacity=20_000, batch_size=64,
               min_replay=1_000, update_period=4, target_update_period=1_000,
               epsilon_start=1.0, epsilon_end=0.05, epsilon_decay_steps=20_000, seed=0):
    """Builds the networks, Adam and the replay memory.

    Args:
      num_actions: the number of discrete actions.
      observation_shape: the shape of one observation.
      hidden_layers: hidden sizes of the MLP.
      learning_rate: Adam's step size.
      discount: gamma.
      replay_capacity: transitions kept.
      batch_size: transitions per gradient step.
      min_replay: transitions recorded before the first gradient step.
      update_period: training steps between gradient steps.
      target_update_period: training steps between copies to the target network.
      epsilon_start, epsilon_end, epsilon_decay_steps: the linear exploration schedule.
      seed: seed of the weights, the exploration and the replay sampling.
    """
    observation_size = int(np.prod(observation_shape))
    self._online = QNetwork(observation_size, num_actions, hidden_layers, seed, 'online')
    self._target = QNetwork(observation_size, num_actions, hidden_layers, seed, 'target')
    self._optimizer = tf.keras.optimizers.Adam(learning_rate)
    self._optimizer.build(self._online.trainable_variables)  # so a checkpoint restores it
    self._training_steps = tf.Variable(0, dtype=tf.int64, name='training_steps')
    self._memory = ReplayMemory(replay_capacity, tuple(observation_shape), seed)
    self._rng = np.random.default_rng(seed)
    self._discount = discount
    self._batch_size, self._min_replay = batch_size, min_replay
    self._update_period, self._target_update_period = update_period, target_update_period
    self._epsilon = (epsilon_start, epsilon_end, epsilon_decay_steps)
    self._checkpoint = tf.train.Checkpoint(online=self._online, target=self._target,
                                           optimizer=self._optimizer,
                                           training_steps=self._training_steps)
    self._observation, self._action = None, None
    super().__init__(num_actions, observation_shape)  # sets TRAIN mode

  def set_mode(self, mode):
    self._training = agent.AgentMode(mode) == agent.AgentMode.TRAIN

  def begin_episode(self, observation):
    return self._act(observation)

  def step(self, reward, observation):
    if self._training:
      self._learn(reward, observation, terminal=False)
    return self._act(observation)

  def end_episode(self, reward, terminal=True):
    if self._training:
      # BLE's end_episode has no final observation: a terminal transition needs none,
      # and an episode cut by time bootstraps from the observation before the cut.
      self._learn(reward, self._observation, terminal=terminal)

  def epsilon(self):
    """The exploration rate after the training steps taken so far."""
    start, end, decay_steps = self._epsilon
    fraction = min(int(self._training_steps.numpy()) / decay_steps, 1.0)
    return start + fraction * (end - start)

  def _act(self, observation):
    self._observation = np.asarray(observation, np.float32)
    if self._training and self._rng.random() < self.epsilon():
      self._action = int(self._rng.integers(self._num_actions))
    else:
      self._action = int(self._greedy(self._observation[None])[0])
    return self._action

  def _learn(self, reward, next_observation, terminal):
    self._memory.add(self._observation, self._action, reward, next_observation, terminal)
    steps = int(self._training_steps.assign_add(1).numpy())
    if len(self._memory) >= self._min_replay and steps % self._update_period == 0:
      self._train_step(*self._memory.sample(self._batch_size))
    if steps % self._target_update_period == 0:
      for target, online in zip(self._target.trainable_variables,
                                self._online.trainable_variables):
        target.assign(online)

  @tf.function
  def _greedy(self, observations):
    return tf.argmax(self._online(observations), axis=1)

  @tf.function
  def _train_step(self, observations, actions, rewards, next_observations, terminals):
    next_q = tf.reduce_max(self._target(next_observations), axis=1)
    targets = rewards + self._discount * (1.0 - terminals) * next_q
    with tf.GradientTape() as tape:
      q = tf.gather(self._online(observations), actions, axis=1, batch_dims=1)
      loss = tf.reduce_mean(tf.keras.losses.huber(targets[:, None], q[:, None]))
    variables = self._online.trainable_variables
    self._optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss

  def save_checkpoint(self, checkpoint_dir, iteration_number):
    os.makedirs(checkpoint_dir, exist_ok=True)
    self._checkpoint.write(os.path.join(checkpoint_dir, f'dqn-{iteration_number}'))

  def load_checkpoint(self, checkpoint_dir, iteration_number):
    path = os.path.join(checkpoint_dir, f'dqn-{iteration_number}')
    self._checkpoint.read(path).assert_existing_objects_matched()

  def reload_latest_checkpoint(self, checkpoint_dir):
    iterations = [int(match.group(1)) for match in map(
        _CHECKPOINT.match, os.listdir(checkpoint_dir) if os.path.isdir(checkpoint_dir) else ())
        if match]
    if not iterations:
      return -1
    self.load_checkpoint(checkpoint_dir, max(iterations))
    return max(iterations)
