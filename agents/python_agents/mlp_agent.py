"""BLE's `mlp` agent: SARSA on a small multi-layer perceptron, in NumPy.

    agent = MLPAgent(3, (1099,), num_layers=2, hidden_units=64, seed=0)

The same learner as BLE's `MLPAgent`: the Q-network is an MLP of `num_layers` dense
layers (`num_layers - 1` hidden ReLU layers of `hidden_units`, then one linear layer
per action; `num_layers=1` is linear in the observation), Glorot-uniform weights and zero
biases; it acts greedily (no exploration, as BLE's); in training mode every `step`
takes one SGD step of `learning_rate` on BLE's loss, the squared SARSA error
`(Q(s, a) - (r + gamma Q(s', a')))^2` differentiated through both Q-values.
`end_episode` learns nothing, as BLE's. BLE binds `num_layers` and `hidden_units` on its
network (`mlp.gin`: 1 and 256); here they are the agent's arguments
(`agents/python_agents/configs/mlp.gin`).

One addition: `save_checkpoint` and `load_checkpoint` write and read the weights
(`mlp-<iteration>.npz`), where BLE's agent keeps none.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.python_agents import agent

_CHECKPOINT = re.compile(r'^mlp-(\d+)\.npz$')


class MLPAgent(agent.Agent):
  """SARSA with an MLP Q-network, acting greedily (BLE's `mlp` agent)."""

  def __init__(self, num_actions: int, observation_shape: Sequence[int], gamma: float = 0.9,
               seed: int | None = None, num_layers: int = 1, hidden_units: int = 256,
               learning_rate: float = 0.001) -> None:
    """Builds the network.

    Args:
      num_actions: int, the number of discrete actions.
      observation_shape: the shape of one observation (flattened by the network).
      gamma: the discount.
      seed: seed of the initial weights; None: from the clock (BLE's).
      num_layers: dense layers, the last one included (at least 1).
      hidden_units: units of each hidden layer.
      learning_rate: the SGD step size (BLE's `create_optimizer.learning_rate`).

    Raises:
      ValueError: a size or rate out of range (named).
    """
    for name, value in (('num_layers', num_layers), ('hidden_units', hidden_units)):
      if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f'MLPAgent: {name} must be an int >= 1, got {value!r}.')
    if not 0 <= gamma <= 1:
      raise ValueError(f'MLPAgent: gamma must lie in [0, 1], got {gamma!r}.')
    # Written so that NaN fails too.
    if not learning_rate > 0:  # pylint: disable=unnecessary-negation
      raise ValueError(f'MLPAgent: learning_rate must be positive, got {learning_rate!r}.')
    super().__init__(num_actions, observation_shape)
    self._gamma = float(gamma)
    self._learning_rate = float(learning_rate)
    rng = np.random.default_rng(int(time.time() * 1e6) if seed is None else seed)
    sizes = [int(np.prod(observation_shape))] + [int(hidden_units)] * (num_layers - 1) + [
        int(num_actions)]
    self.weights = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
      limit = np.sqrt(6.0 / (fan_in + fan_out))
      self.weights += [rng.uniform(-limit, limit, (fan_in, fan_out)), np.zeros(fan_out)]
    self._training = True
    # The last observation and action (None before the first episode begins).
    self.last_state: Any = None
    self.last_action: Any = None

  def set_mode(self, mode: agent.AgentMode | str) -> None:
    self._training = agent.AgentMode(mode) == agent.AgentMode.TRAIN

  def begin_episode(self, observation: np.ndarray) -> int:
    action = int(np.argmax(self.q_values(observation)))
    self.last_state, self.last_action = observation, action
    return action

  def step(self, reward: float, observation: np.ndarray) -> int:
    action = int(np.argmax(self.q_values(observation)))
    if self._training:
      self._sarsa_update(self.last_state, self.last_action, reward, observation, action)
    self.last_state, self.last_action = observation, action
    return action

  def end_episode(self, reward: float, terminal: bool = True) -> None:
    del reward, terminal

  def q_values(self, observation: np.ndarray) -> np.ndarray:
    """The network's Q-value of every action for one observation."""
    return self._forward(observation)[0]

  def save_checkpoint(self, checkpoint_dir: str, iteration_number: int) -> None:
    np.savez(os.path.join(checkpoint_dir, f'mlp-{iteration_number}.npz'), *self.weights)

  def load_checkpoint(self, checkpoint_dir: str, iteration_number: int) -> None:
    with np.load(os.path.join(checkpoint_dir, f'mlp-{iteration_number}.npz')) as saved:
      weights = [saved[f'arr_{index}'] for index in range(len(saved.files))]
    shapes = [weight.shape for weight in self.weights]
    if [weight.shape for weight in weights] != shapes:
      raise ValueError(f'MLPAgent: the checkpoint of iteration {iteration_number} in '
                       f'{checkpoint_dir} holds another network (shapes differ).')
    self.weights = weights

  def reload_latest_checkpoint(self, checkpoint_dir: str) -> int:
    names = os.listdir(checkpoint_dir) if os.path.isdir(checkpoint_dir) else ()
    iterations = [int(match.group(1)) for match in map(_CHECKPOINT.match, names) if match]
    if not iterations:
      return -1
    self.load_checkpoint(checkpoint_dir, max(iterations))
    return max(iterations)

  def _forward(self, observation: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """(Q-values, the inputs of every layer) for one observation."""
    x = np.asarray(observation, np.float64).reshape(-1)
    inputs = []
    for index in range(0, len(self.weights), 2):
      inputs.append(x)
      x = x @ self.weights[index] + self.weights[index + 1]
      if index + 2 < len(self.weights):
        x = np.maximum(x, 0.0)
    return x, inputs

  def _gradient(self, observation: np.ndarray,
                action: int) -> tuple[float, list[np.ndarray]]:
    """(Q(observation, action), its gradient with respect to every weight)."""
    q_values, inputs = self._forward(observation)
    grads: list[Any] = [None] * len(self.weights)
    upstream = np.zeros_like(q_values)
    upstream[action] = 1.0
    for index in range(len(self.weights) - 2, -1, -2):
      grads[index] = np.outer(inputs[index // 2], upstream)
      grads[index + 1] = upstream
      if index:
        upstream = (self.weights[index] @ upstream) * (inputs[index // 2] > 0)
    return q_values[action], grads

  def _sarsa_update(self, state: np.ndarray, action: int, reward: float,
                    next_state: np.ndarray, next_action: int) -> None:
    q_value, grad = self._gradient(state, action)
    next_value, next_grad = self._gradient(next_state, next_action)
    error = q_value - (reward + self._gamma * next_value)
    for index, (first, second) in enumerate(zip(grad, next_grad)):
      self.weights[index] = self.weights[index] - self._learning_rate * 2.0 * error * (
          first - self._gamma * second)
