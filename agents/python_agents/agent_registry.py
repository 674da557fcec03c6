"""The registry of agents `create_agent` builds, under BLE 1.0.1's names, with their gin files.

BLE's `agents/agent_registry.py`, name for name:

| name | agent | default gin file |
|---|---|---|
| `random` | `agent.RandomAgent` | none |
| `mlp` | `mlp_agent.MLPAgent` (SARSA on an MLP, as BLE's) | `configs/mlp.gin` |
| `dqn` | `dqn_agent.DQNAgent` (a DQN in TensorFlow) | `configs/dqn.gin` |
| `perciatelli44` | `perciatelli44.Perciatelli44`: BLE's frozen network | none |
| `quantile` | `QuantileAgent` (QR-DQN) as a `SingleBalloonAgent` | `configs/quantile.gin` |
| `finetune_perciatelli` | `quantile` from Perciatelli44's weights | none |
| `station_seeker`, `random_walk` | BLE's controllers (the balloon plug-in's baselines) | none |

`REGISTRY` holds them as BLE's does, {name: (constructor, default gin file)}, and takes
a user's own agent the same way (`REGISTRY['mine'] = (MyAgent, 'mine.gin')`). Beside
them, the project's own: `balloon_ppo` (the PPO policy in `models/balloon_ppo`) and the
baselines of any other environment's evaluation plug-in.

With `gin-config` installed (`pip install 'agents[gin]'`), importing this module
registers the learning agents' constructors as gin configurables under BLE's class
names (`MLPAgent`, `DQNAgent`, `QuantileAgent`), so a gin file or binding such as
`QuantileAgent.learning_rate = 1e-4` reaches them through `create_agent`; the gin files
import this module as BLE's import theirs. The default gin files' paths are absolute (the
files in the package, wherever it is installed), so `bind_gin_variables` hands gin
exactly the path `get_default_gin_config` gives, and gin opens it from any directory
(BLE's are relative to the parent of `balloon_learning_environment`, which its
`bind_gin_variables` puts on gin's search path).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeAlias

from agents import plugins
from agents.algorithms.qrdqn import config as qrdqn_config
from agents.configs import sections
from agents.evaluation import environments
from agents.python_agents import agent as agent_lib
from agents.python_agents import mlp_agent, perciatelli44, policy_agents

try:
  import gin
except ImportError:  # gin-config is optional: create_agent works without it.
  gin = None

AgentConstructor: TypeAlias = Callable[..., Any]
"""`constructor(num_actions, observation_shape, **kwargs)` -> an agent (BLE's interface)."""
RegistryEntry: TypeAlias = tuple[AgentConstructor, str | None]
"""A `REGISTRY` value: (the agent's constructor, its default gin file or None)."""

CONFIG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'configs')
_GIN_FILES = {name: os.path.join(CONFIG_DIR, f'{name}.gin') for name in ('mlp', 'dqn', 'quantile')}
_QUANTILE_KEYS = ('num_envs', 'seed') + tuple(
    field.name for config in (qrdqn_config.QRDQNConfig, qrdqn_config.NetworkConfig)
    for field in dataclasses.fields(config))


def _quantile_keys() -> list[str]:
  """The keyword arguments gin may bind on `QuantileAgent`: QR-DQN's and the network's
  fields, and the keys of every registered quantile network kind (the balloon's `column`:
  `column_layers`, `column_stride`)."""
  kind_keys = []
  for kind in plugins.QUANTILE_NETWORKS.names():
    kind_config = sections.network_kind_config('qrdqn', kind)
    if kind_config is not None:
      kind_keys += [field.name for field in dataclasses.fields(kind_config)
                    if field.name not in kind_keys]
  return list(_QUANTILE_KEYS) + kind_keys


class UnknownAgentError(ValueError):
  """`create_agent` was asked for a name it does not know (the message lists the names)."""


def _quantile(num_actions: int, observation_shape: Sequence[int],
              **hyperparameters: Any) -> agent_lib.SingleBalloonAgent:
  """BLE's `quantile`: the project's QR-DQN, batched inside, BLE's single-balloon methods
  outside (`SingleBalloonAgent`); `num_envs=B` sizes the batch `run_training_loop` flies
  it on at one call per batch step."""
  from agents.python_agents import quantile_agent  # TensorFlow and QR-DQN, when asked
  return agent_lib.SingleBalloonAgent(
      quantile_agent.QuantileAgent(num_actions, observation_shape, **hyperparameters))


def _dqn(num_actions: int, observation_shape: Sequence[int],
         **hyperparameters: Any) -> agent_lib.Agent:
  """BLE's `dqn`: `dqn_agent.DQNAgent`, a DQN in TensorFlow (imported when asked)."""
  from agents.python_agents import dqn_agent  # TensorFlow, when asked
  return dqn_agent.DQNAgent(num_actions, observation_shape, **hyperparameters)


def _finetune_perciatelli(num_actions: int, observation_shape: Sequence[int],
                          **hyperparameters: Any) -> agent_lib.SingleBalloonAgent:
  """BLE's `finetune_perciatelli`: `quantile` starting from Perciatelli44's released
  weights (`agents.python_agents.finetune_perciatelli`), with BLE's single-balloon
  methods outside; without the weights, one line naming the fetch command."""
  from agents.python_agents import finetune_perciatelli  # TensorFlow, when asked
  return agent_lib.SingleBalloonAgent(
      finetune_perciatelli.create(num_actions, observation_shape, **hyperparameters))


def _configurable(constructor: AgentConstructor, name: str, module: str,
                  allowlist: Sequence[str] | None = None) -> AgentConstructor:
  """`constructor` as a gin configurable named `name` (itself when gin is missing)."""
  if gin is None:
    return constructor
  return gin.external_configurable(constructor, name=name, module=module,
                                   allowlist=allowlist)


_LEARNERS = {
    'mlp': _configurable(mlp_agent.MLPAgent, 'MLPAgent', 'agents.python_agents.mlp_agent'),
    'dqn': _configurable(_dqn, 'DQNAgent', 'agents.python_agents.dqn_agent'),
    'quantile': _configurable(_quantile, 'QuantileAgent',
                              'agents.python_agents.quantile_agent', _quantile_keys()),
    'finetune_perciatelli': _finetune_perciatelli,
}


def _built_in() -> dict[str, RegistryEntry]:
  """{name: (constructor, default gin file)} of the shipped agents and the environments'
  baselines (computed on each call: plug-ins may register more)."""
  entries: dict[str, RegistryEntry] = {'random': (agent_lib.RandomAgent, None)}
  entries.update((name, (constructor, _GIN_FILES.get(name)))
                 for name, constructor in _LEARNERS.items())
  entries['balloon_ppo'] = (policy_agents.SavedModelAgent, None)
  entries['perciatelli44'] = (perciatelli44.Perciatelli44, None)  # BLE's class and checks.
  for env_id in plugins.ENVIRONMENTS.names():
    environment = environments.get(env_id)
    for name in environment.baselines:
      if not environment.acts_in_slab(name):
        entries.setdefault(name, (policy_agents.baseline_agent(name), None))
  return entries


class _Registry(collections.abc.MutableMapping[str, RegistryEntry]):
  """BLE's `REGISTRY`: {name: (constructor, default gin file or None)}, where a user adds
  an agent as in BLE (`REGISTRY['mine'] = (MyAgent, 'mine.gin')`); an added name
  replaces a shipped one, and deleting it brings the shipped one back."""

  def __init__(self) -> None:
    self._added: dict[str, RegistryEntry] = {}

  def __getitem__(self, name: str) -> RegistryEntry:
    if name in self._added:
      return self._added[name]
    return _built_in()[name]

  def __setitem__(self, name: str, entry: RegistryEntry) -> None:
    if not (isinstance(entry, tuple) and len(entry) == 2 and callable(entry[0])
            and (entry[1] is None or isinstance(entry[1], str))):
      raise TypeError(f'REGISTRY[{name!r}] must be (constructor, gin file or None), as in '
                      f'BLE; got {entry!r}.')
    self._added[name] = entry

  def __delitem__(self, name: str) -> None:
    del self._added[name]

  def __iter__(self) -> Iterator[str]:
    return iter(sorted({**_built_in(), **self._added}))

  def __len__(self) -> int:
    return len({**_built_in(), **self._added})


REGISTRY = _Registry()


def registry() -> dict[str, RegistryEntry]:
  """{name: (constructor(num_actions, observation_shape, **kwargs), default gin file)}."""
  return dict(REGISTRY.items())


def agent_names() -> list[str]:
  """The names `create_agent` knows, sorted."""
  return sorted(registry())


def agent_constructor(name: str) -> AgentConstructor:
  """The constructor registered as `name` (BLE's `agent_constructor`).

  Raises:
    UnknownAgentError: an unknown name (the message lists the names).
  """
  return _entry(name)[0]


def get_default_gin_config(name: str) -> str | None:
  """The default gin file of agent `name` (an absolute path, in the package), or None.

  Raises:
    UnknownAgentError: an unknown name (the message lists the names).
  """
  return _entry(name)[1]


def _entry(name: str) -> RegistryEntry:
  entries = registry()
  if name not in entries:
    raise UnknownAgentError(f'unknown agent {name!r}; create_agent knows '
                            f'{", ".join(sorted(entries))}.')
  return entries[name]
