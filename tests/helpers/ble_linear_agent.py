"""A small learning agent as a user writes it for the Balloon Learning Environment.

This file is kept as it would be written for BLE, BLE's import line included, so it does
not import here as it stands: `tests/python_agents/train_lib_test.py` reads its text,
changes that one line to `from agents.python_agents import agent`, and trains,
checkpoints, resumes and evaluates the result. Linear Q-learning on the first
`num_features` observation values, epsilon-greedy, weights saved with numpy.
"""

import os.path as osp

import numpy as np
from balloon_learning_environment.agents import agent


class LinearQAgent(agent.Agent):
  """Q(s, a) = w_a . [s_0..s_k, 1], learned by one-step Q-learning."""

  def __init__(self, num_actions, observation_shape, learning_rate=0.01, discount=0.99,
               epsilon=0.1, num_features=16, seed=0):
    self._rng = np.random.default_rng(seed)
    self._learning_rate = learning_rate
    self._discount = discount
    self._epsilon = epsilon
    self._num_features = min(num_features, int(np.prod(observation_shape)))
    self._weights = np.zeros((num_actions, self._num_features + 1))
    self._training = True
    self._last = None
    super().__init__(num_actions, observation_shape)

  def set_mode(self, mode):
    self._training = agent.AgentMode(mode) == agent.AgentMode.TRAIN

  def begin_episode(self, observation):
    features = self._features(observation)
    action = self._select(features)
    self._last = (features, action)
    return action

  def step(self, reward, observation):
    features = self._features(observation)
    self._learn(reward + self._discount * np.max(self._weights @ features))
    action = self._select(features)
    self._last = (features, action)
    return action

  def end_episode(self, reward, terminal=True):
    self._learn(reward if terminal else reward + self._discount * np.max(
        self._weights @ self._last[0]))

  def save_checkpoint(self, checkpoint_dir, iteration_number):
    np.save(osp.join(checkpoint_dir, f'linear_q_{iteration_number}.npy'), self._weights)

  def load_checkpoint(self, checkpoint_dir, iteration_number):
    self._weights = np.load(osp.join(checkpoint_dir, f'linear_q_{iteration_number}.npy'))

  @property
  def weights(self):
    return self._weights

  def _features(self, observation):
    values = np.asarray(observation, np.float64).ravel()[:self._num_features]
    return np.append(values, 1.0)

  def _select(self, features):
    if self._training and self._rng.random() < self._epsilon:
      return int(self._rng.integers(self._num_actions))
    return int(np.argmax(self._weights @ features))

  def _learn(self, target):
    if not self._training:
      return
    features, action = self._last
    error = target - self._weights[action] @ features
    self._weights[action] += self._learning_rate * error * features
