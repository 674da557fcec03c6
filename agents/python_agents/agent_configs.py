"""The config of a Python agent's run (`train --agent`): an in-graph config's sections
where they apply, and an `agent` section where `network` and `algorithm` would be.

    seed: 0
    environment: {id: BalloonLearningEnvironment-v0, num_agents: 4, ...}   # validated
    loop: {steps: 100000, track: [], ...}      # steps: the budget (environment steps)
    agent: {name: 'agents.python_agents.dqn_agent:DQNAgent', kwargs: {learning_rate: 0.001}}

An in-graph run's config.yaml names its algorithm in `algorithm.name` (`--algorithm`);
a Python agent's names it in `agent.name` (`--agent`), and `--set agent.KEY=VALUE`
fills `agent.kwargs`, the constructor's keyword arguments. Of `loop`, only `steps`
and `track` apply. On resume only `loop.steps` (and `loop.track`) may change.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from agents import configs

AGENT_SECTION = 'agent'
# The in-graph sections an agent run has no use for (and refuses overrides of).
_IN_GRAPH_SECTIONS = ('network', 'algorithm')
_RESUMABLE = ('loop.steps', 'loop.track')


def is_agent_config(config: Any) -> bool:
  """Whether a config (e.g. a run's saved config.yaml) is a Python agent's."""
  return isinstance(config, dict) and AGENT_SECTION in config


def split_overrides(overrides: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
  """(config overrides, agent kwargs) of `--set` pairs: `agent.KEY` ones go to the agent.

  Raises:
    ConfigError: an override of the network or the algorithm, which an agent run lacks.
  """
  config_overrides: dict[str, Any] = {}
  kwargs: dict[str, Any] = {}
  for key, value in overrides.items():
    section = key.split('.', 1)[0]
    if section == AGENT_SECTION:
      if '.' not in key:
        raise configs.ConfigError(f"--set {key}: name a constructor argument, e.g. "
                                  f"'{AGENT_SECTION}.learning_rate=0.001'.")
      kwargs[key.split('.', 1)[1]] = value
    elif section in _IN_GRAPH_SECTIONS:
      raise configs.ConfigError(f'--set {key}: a run of --agent has no {section} section; '
                                f"pass the agent's arguments as --set {AGENT_SECTION}.KEY=VALUE.")
    else:
      config_overrides[key] = value
  return config_overrides, kwargs


def make(config_name: str, overrides: Mapping[str, Any], agent_name: str,
         kwargs: Mapping[str, Any]) -> dict[str, Any]:
  """A new agent run's config: `config_name` resolved with `overrides`, its network and
  algorithm replaced by `agent: {name, kwargs}`.

  Raises:
    ConfigError: an unknown config, key or value (named).
  """
  # Resolved with the in-graph 'random' algorithm, which has no hyperparameters: the seed,
  # environment and loop are validated without the cross-checks of the config's own
  # algorithm (PPO's mini-batches must divide num_agents x segment_length, ...).
  resolved = configs.resolve(config_name, dict(overrides, **{'algorithm.name': 'random'}))
  config = {key: value for key, value in resolved.items() if key not in _IN_GRAPH_SECTIONS}
  config[AGENT_SECTION] = dict(name=agent_name, kwargs=dict(kwargs))
  return config


def resume(saved: dict[str, Any], overrides: Mapping[str, Any], agent_name: str,
           kwargs: Mapping[str, Any]) -> dict[str, Any]:
  """The config a resumed agent run continues with.

  Args:
    saved: the run's config.yaml (an agent config).
    overrides: config overrides asked for now.
    agent_name: `--agent` as given now, or None (the run's).
    kwargs: agent kwargs asked for now (`--set agent.KEY=VALUE`).

  Raises:
    ConfigError: the agent, its kwargs, or a key other than `loop.steps` and `loop.track`
      changed (named with both values).
  """
  config = copy.deepcopy(saved)
  agent = config[AGENT_SECTION]
  if agent_name is not None and agent_name != agent['name']:
    raise configs.ConfigError(f"The run was trained by agent {agent['name']!r}, not "
                              f'{agent_name!r}; resume it with its own agent.')
  changed = {key: value for key, value in kwargs.items() if agent['kwargs'].get(key) != value}
  if changed:
    key = sorted(changed)[0]
    raise configs.ConfigError(f"The run exists with agent.{key} = {agent['kwargs'].get(key)!r}; "
                              f'on resume only {list(_RESUMABLE)} may change.')
  for key, value in overrides.items():
    section, _, leaf = key.partition('.')
    current = config.get(section, {}).get(leaf) if leaf else config.get(section)
    if current == value:
      continue
    if key not in _RESUMABLE:
      raise configs.ConfigError(f'The run exists with {key} = {current!r}; on resume only '
                                f'{list(_RESUMABLE)} may change, not to {value!r}.')
    config[section][leaf] = value
  return config
