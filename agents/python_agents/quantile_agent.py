"""BLE's `quantile` agent: the project's QR-DQN behind BLE's Agent interface, batched.

`QuantileAgent` is a `BatchedAgent` over `agents.algorithms.qrdqn.QRDQN`, the same
network, replay memory, quantile Huber loss, epsilon-greedy exploration and target
updates as `--algorithm=qrdqn` (`--config=balloon_qrdqn`), driven from Python one call
per batch step rather than fused into the in-graph loop:

    agent = QuantileAgent(3, (1099,), num_envs=64, learning_starts=5000)
    actions = agent.begin_episode(observations, rows)          # [R] int
    actions = agent.step(rewards, observations, rows)          # records, maybe learns
    agent.end_episode(rewards, terminals, rows)

Its hyperparameters are `QRDQNConfig`'s and `NetworkConfig`'s fields (see
docs/algorithms_qrdqn.md), the defaults theirs. In training mode `step` and
`end_episode` write the transition into the replay memory and update every
`update_every` calls once `learning_starts` transitions are in; in evaluation mode it
acts greedily and records nothing.

Two differences from the in-graph QR-DQN, both of BLE's interface: `end_episode` gets
no final observation, so an episode cut by time (`terminal=False`) bootstraps its last
transition from the observation before the cut; and a checkpoint holds the networks,
Adam, the random generator and the counters but not the replay memory (it refills on
resume; BLE's Dopamine agents write theirs, hundreds of MB per iteration).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import tensorflow as tf

from agents import config_fields
from agents.algorithms.qrdqn import config as qrdqn_config
from agents.algorithms.qrdqn import qrdqn
from agents.config_fields import ConfigError
from agents.configs import sections
from agents.python_agents import agent as agent_lib
from agents.python_agents import tf_checkpoint

_NETWORK_KEYS = tuple(field.name for field in dataclasses.fields(qrdqn_config.NetworkConfig))
_ALGORITHM_KEYS = tuple(field.name for field in dataclasses.fields(qrdqn_config.QRDQNConfig))
_SPECS = {**config_fields.specs(qrdqn_config.NetworkConfig),
          **config_fields.specs(qrdqn_config.QRDQNConfig)}


def _kind_keys(kind: str) -> tuple[str, ...]:
  """The keys quantile network kind `kind` adds (the balloon's `column`: column_layers, ...).

  Raises:
    ConfigError: the kind is not registered (naming 'network.kind').
  """
  config = sections.network_kind_config('qrdqn', kind)
  return tuple(field.name for field in dataclasses.fields(config)) if config else ()



def _begin_episode(qrdqn: Any, rows: np.ndarray) -> None:  # pylint: disable=redefined-outer-name
  """Starts the episodes of `rows` (an op run for its effect; a tf.function returns none)."""
  qrdqn.begin_episode(rows)

class QuantileAgent(agent_lib.BatchedAgent):
  """QR-DQN for a batch of `num_envs` environments with BLE's (batched) Agent methods."""

  def __init__(self, num_actions: int, observation_shape: Sequence[int], num_envs: int = 1,
               seed: int | None = 0, **hyperparameters: Any) -> None:
    """Builds the QR-DQN networks, replay memory and optimizer.

    Args:
      num_actions: int, the number of discrete actions.
      observation_shape: the shape of one observation.
      num_envs: the rows of the batch (one replay ring each).
      seed: seed of the weights, the exploration and the replay sampling.
      **hyperparameters: fields of `QRDQNConfig` (learning_rate, replay_capacity, ...),
        of `NetworkConfig` (kind, hidden_layers, activation, matmul_dtype,
        initial_weights) and the keys of the network kind (the balloon's `column`:
        column_layers, column_stride).

    Raises:
      ConfigError: an unknown hyperparameter or a value out of its range (named), or a
        replay memory too small.
    """
    kind_keys = _kind_keys(hyperparameters.get('kind', 'mlp'))
    known = _ALGORITHM_KEYS + _NETWORK_KEYS + kind_keys
    unknown = sorted(set(hyperparameters) - set(known))
    if unknown:
      raise ConfigError(f'QuantileAgent has no hyperparameter {unknown[0]!r}; it takes '
                        f'{", ".join(known)}.')
    # The kind's own keys (column_layers, ...) are checked when its config is built.
    hyperparameters = {key: config_fields.check_value(f'QuantileAgent.{key}', value,
                                                      _SPECS[key]) if key in _SPECS else value
                       for key, value in hyperparameters.items()}
    network_kwargs: dict[str, Any] = {
        key: tuple(value) if key == 'hidden_layers' else value
        for key, value in hyperparameters.items() if key in _NETWORK_KEYS}
    network = qrdqn_config.NetworkConfig(**network_kwargs)
    network_options = {key: tuple(value) if isinstance(value, list) else value
                       for key, value in hyperparameters.items() if key in kind_keys}
    algorithm = {key: value for key, value in hyperparameters.items()
                 if key in _ALGORITHM_KEYS}
    self._observation_shape = tuple(observation_shape)
    self._training = tf.Variable(True, trainable=False, name='is_training')
    self.qrdqn = qrdqn.QRDQN(
        num_envs, gymnasium.spaces.Box(-np.inf, np.inf, self._observation_shape, np.float32),
        gymnasium.spaces.Discrete(num_actions), network_config=network,
        network_options=network_options, seed=seed,
        is_training=self._training, **algorithm)
    super().__init__(num_actions, self._observation_shape, num_envs)
    self._last_observation = np.zeros((num_envs, *self._observation_shape), np.float32)
    self._last_action = np.zeros(num_envs, np.int32)
    rows = tf.TensorSpec([None], tf.int32)
    observations = tf.TensorSpec([None, *self._observation_shape], tf.float32)
    flags = tf.TensorSpec([None], tf.bool)

    # Partials, not closures or bound methods: TensorFlow counts the traces of every
    # function with the same code together, so a process that builds several agents
    # (tests, searches) would be reported as retracing one function.
    self._begin = tf.function(functools.partial(_begin_episode, self.qrdqn),
                              input_signature=(rows,))
    self._perform = tf.function(functools.partial(type(self.qrdqn).perform, self.qrdqn),
                                input_signature=(rows, observations))
    experience_signature = (rows, observations, rows, tf.TensorSpec([None], tf.float32),
                            flags, flags, observations)
    self._experience = tf.function(functools.partial(type(self.qrdqn).experience, self.qrdqn),
                                   input_signature=experience_signature)
    self._checkpoint = tf_checkpoint.AgentCheckpoint(
        'quantile', online=self.qrdqn.online_network, target=self.qrdqn.target_network,
        optimizer=self.qrdqn.optimizer, generator=self.qrdqn.generator,
        env_steps=self.qrdqn.env_steps, batch_steps=self.qrdqn.batch_steps,
        num_updates=self.qrdqn.num_updates)

  def get_name(self) -> str:
    return 'quantile'

  def set_mode(self, mode: agent_lib.AgentMode | str) -> None:
    """Explores and learns in `AgentMode.TRAIN`; acts greedily in `AgentMode.EVAL`."""
    if hasattr(self, '_training'):
      self._training.assign(agent_lib.AgentMode(mode) == agent_lib.AgentMode.TRAIN)

  def begin_episode(self, observations: np.ndarray, rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, np.int32)
    self._begin(rows)
    return self._act(observations, rows)

  def step(self, rewards: np.ndarray, observations: np.ndarray,
           rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, np.int32)
    observations = np.asarray(observations, np.float32)
    ongoing = np.zeros(len(rows), bool)
    self._record(rows, rewards, ongoing, ongoing, observations)
    return self._act(observations, rows)

  def end_episode(self, rewards: np.ndarray, terminals: np.ndarray, rows: np.ndarray) -> None:
    rows = np.asarray(rows, np.int32)
    terminals = np.asarray(terminals, bool)
    # BLE's end_episode has no final observation: a cut episode bootstraps from the last.
    self._record(rows, rewards, terminals, ~terminals, self._last_observation[rows])

  def save_checkpoint(self, checkpoint_dir: str, iteration_number: int) -> None:
    self._checkpoint.save(checkpoint_dir, iteration_number)

  def load_checkpoint(self, checkpoint_dir: str, iteration_number: int) -> None:
    self._checkpoint.load(checkpoint_dir, iteration_number)

  def reload_latest_checkpoint(self, checkpoint_dir: str) -> int:
    return self._checkpoint.reload_latest(checkpoint_dir)

  def _act(self, observations: np.ndarray, rows: np.ndarray) -> np.ndarray:
    observations = np.asarray(observations, np.float32)
    actions = self._perform(rows, observations).numpy()
    self._last_observation[rows] = observations
    self._last_action[rows] = actions
    return actions.astype(np.int64)

  def _record(self, rows: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
              truncated: np.ndarray, next_observations: np.ndarray) -> None:
    if not bool(self._training.numpy()):
      return
    self._experience(rows, self._last_observation[rows], self._last_action[rows],
                     np.asarray(rewards, np.float32), terminated, truncated,
                     np.asarray(next_observations, np.float32))
