"""Maps algorithm names to classes and to their declared hyperparameters.

    registry.lookup('ppo')                        # agents.algorithms.ppo.ppo.PPO
    registry.lookup('mypackage.agents:MyAgent')   # a user's subclass, no edit here
    registry.declarations('ppo')                  # (PPOConfig, NetworkConfig)

A built-in entry names its class and its declarations by import path, so that
reading and checking a config (`declarations`) does not import TensorFlow;
the class is imported only to build it. A user's 'package.module:Class' is
imported for both, and its `Config` and `NetworkConfig` attributes are read.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import TYPE_CHECKING, Any

from agents.config_fields import ConfigError

if TYPE_CHECKING:
  from agents.algorithms import algorithm


@dataclasses.dataclass(frozen=True)
class Entry:
  """A built-in algorithm: 'module:Name' paths of its class and its declarations."""
  algorithm: str
  config: str | None = None
  network_config: str | None = None


ALGORITHMS = {
    'ppo': Entry('agents.algorithms.ppo.ppo:PPO', 'agents.algorithms.ppo.config:PPOConfig',
                 'agents.algorithms.ppo.config:NetworkConfig'),
    'random': Entry('agents.algorithms.random_algorithm:RandomAlgorithm'),
    'qrdqn': Entry('agents.algorithms.qrdqn.qrdqn:QRDQN',
                   'agents.algorithms.qrdqn.config:QRDQNConfig',
                   'agents.algorithms.qrdqn.config:NetworkConfig'),
}


def lookup(name: str) -> type[algorithm.InGraphAlgorithm]:
  """Returns the algorithm class named `name` (a key of `ALGORITHMS` or 'module:Class').

  Raises:
    ConfigError: unknown name, module or class, or not an `InGraphAlgorithm`.
  """
  from agents.algorithms import algorithm
  entry = ALGORITHMS.get(name)
  cls = _import(name, entry.algorithm if entry else _user_path(name))
  if not (isinstance(cls, type) and issubclass(cls, algorithm.InGraphAlgorithm)):
    raise ConfigError(f"Config key 'algorithm.name' = {name!r} is not an InGraphAlgorithm "
                      'subclass.')
  return cls


def declarations(name: str) -> tuple[type | None, type | None]:
  """(Config, NetworkConfig) dataclasses of the named algorithm; either may be None.

  Raises:
    ConfigError: the name is unknown or its module cannot be imported.
  """
  entry = ALGORITHMS.get(name)
  if entry is None:
    cls = _import(name, _user_path(name))
    return getattr(cls, 'Config', None), getattr(cls, 'NetworkConfig', None)
  config, network_config = (_import(name, path) if path else None
                            for path in (entry.config, entry.network_config))
  return config, network_config


def _user_path(name: str) -> str:
  if not isinstance(name, str) or ':' not in name:
    raise ConfigError(f"Config key 'algorithm.name' must be one of {sorted(ALGORITHMS)} or "
                      f"'package.module:Class', got {name!r}.")
  return name


def _import(name: str, path: str) -> Any:
  module_name, attribute = path.split(':', 1)
  try:
    module = importlib.import_module(module_name)
  except ImportError as error:
    raise ConfigError(f"Config key 'algorithm.name' = {name!r}: cannot import "
                      f'{module_name!r} ({error}).') from None
  if not hasattr(module, attribute):
    raise ConfigError(f"Config key 'algorithm.name' = {name!r}: {module_name} has no "
                      f'{attribute!r}.')
  return getattr(module, attribute)
