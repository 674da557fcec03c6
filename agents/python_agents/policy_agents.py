"""Agents over the project's policies: the environments' baselines and exported models.

- `PolicyAgent`: one environment's `Agent` over an evaluation policy
  (`agents.evaluation.policies`) of one row: the baselines of the environments'
  evaluation plug-ins (the balloon's `station_seeker`, `random_walk`, `perciatelli44`),
  made by `baseline_agent(name)`;
- `SavedModelAgent`: an exported policy (`agents.scripts.export`'s `policy/` folder), by
  default the PPO policy shipped in `models/balloon_ppo`.

`agent_registry` offers them under BLE's names (`create_agent`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agents.evaluation import environments
from agents.evaluation import policies as policies_lib
from agents.python_agents import agent as agent_lib

SHIPPED_MODELS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'models')
BALLOON_PPO = os.path.join(SHIPPED_MODELS, 'balloon_ppo')


class PolicyAgent(agent_lib.Agent):
  """One environment's `Agent` over an evaluation policy of one row.

  An evaluation policy (`agents.evaluation.policies`) acts for a batch:
  `begin_episode(indices)` then `policy(observations) -> actions`; here it acts for a
  batch of one, so its per-episode state (the random walk's target, a recurrent
  network's state) is this agent's.
  """

  def __init__(self, num_actions: int, observation_shape: Sequence[int],
               policy: policies_lib.BatchedPolicy, name: str) -> None:
    """Keeps the one-row `policy`; `name` is what `get_name()` returns."""
    super().__init__(num_actions, observation_shape)
    self._policy = policy
    self._name = name

  def get_name(self) -> str:
    return self._name

  def begin_episode(self, observation: np.ndarray) -> int:
    policies_lib.begin_episode(self._policy, [0], None)
    return self._act(observation)

  def step(self, reward: float, observation: np.ndarray) -> int:
    del reward
    return self._act(observation)

  def end_episode(self, reward: float, terminal: bool = True) -> None:
    del reward, terminal

  def _act(self, observation: np.ndarray) -> int:
    return int(np.asarray(self._policy(np.asarray(observation)[None]))[0])


class SavedModelAgent(PolicyAgent):
  """An exported policy (`agents.scripts.export`'s `policy/` SavedModel) as an `Agent`.

  Raises (at construction):
    EvaluationError: no SavedModel at `path`, or one taking other observations.
  """

  def __init__(self, num_actions: int, observation_shape: Sequence[int], path: str = BALLOON_PPO,
               name: str | None = None) -> None:
    model = policies_lib.load_saved_model(path)
    policies_lib.check_observation_shape(model, path, tuple(observation_shape),
                                         f'observation_shape {tuple(observation_shape)}')
    policy = policies_lib.TensorFlowPolicy(model, 1, hasattr(model, 'initial_state'))
    super().__init__(num_actions, observation_shape, policy,
                     name or os.path.basename(os.path.normpath(path)))


def baseline_policy(name: str, episode_length: int | None = None,
                    **kwargs: Any) -> policies_lib.BatchedPolicy:
  """The one-row evaluation policy of baseline `name` (its environment's plug-in's)."""
  environment = environments.get(environments.baseline_env_id(name))
  length = episode_length or environment.default_episode_length()
  return environment.baselines[name](1, length, **kwargs)


def baseline_agent(name: str) -> Callable[..., PolicyAgent]:
  """A constructor `(num_actions, observation_shape)` of an evaluation baseline's agent."""

  def construct(num_actions: int, observation_shape: Sequence[int],
                episode_length: int | None = None, **kwargs: Any) -> PolicyAgent:
    return PolicyAgent(num_actions, observation_shape,
                       baseline_policy(name, episode_length, **kwargs), name)
  construct.__name__ = name
  return construct
