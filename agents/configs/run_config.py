"""The resolved run config: frozen, with each section as its declared dataclass.

`configs.resolve` and `configs.validate` return a `RunConfig`. Each module reads the
section it needs as a typed, frozen dataclass:

    config = configs.resolve('cartpole')
    config.loop.steps                  # LoopConfig.steps: int
    config.environment.num_agents      # EnvironmentConfig.num_agents: int
    config.algorithm.learning_rate     # the algorithm's own Config dataclass
    config.algorithm_name              # 'ppo'
    config.network.policy_layers       # the algorithm's NetworkConfig
    config.network_options             # the network kind's own keys (None without any)

It is also the plain nested mapping that YAML holds (`config['loop']['steps']`), read
only: a change is a new config (`configs.apply_overrides(config, {...})`), and
`copy.deepcopy(config)` or `config.to_plain()` gives a mutable plain copy. Pickled (to a
worker process, a fit, a Ray actor), it travels as that plain mapping: the receiver
validates it again where it needs the typed sections (`configs.as_run_config`).
"""

import copy
from collections.abc import Mapping
from typing import Any

from agents import config_fields
from agents.configs import sections

_FROZEN = ('A run config is frozen: change it with configs.apply_overrides(config, '
           "{'section.key': value}), or edit a copy (copy.deepcopy(config)).")


class FrozenSection(dict):
  """A dict that refuses changes; copies of it are plain, mutable dicts."""

  def _refuse(self, *args: Any, **kwargs: Any) -> None:
    del args, kwargs
    raise TypeError(_FROZEN)

  __setitem__ = __delitem__ = _refuse
  clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
  __ior__ = _refuse  # type: ignore[assignment]

  def __copy__(self) -> dict:
    return dict(self)

  def __deepcopy__(self, memo: dict) -> dict:
    return {key: copy.deepcopy(value, memo) for key, value in self.items()}

  def __reduce__(self) -> tuple:
    return (dict, (self.to_plain(),))

  def to_plain(self) -> dict:
    """A plain, mutable deep copy (nested dicts and lists)."""
    return copy.deepcopy(self)


class RunConfig(FrozenSection):
  """A validated run config: a frozen mapping whose sections are also typed dataclasses.

  Built by `configs.validate` (and so by `configs.resolve`) from a config whose every
  key has been checked; build one yourself with `configs.validate(mapping)`.

  Attributes:
    seed: the run's seed.
    environment: the `environment` section (`sections.EnvironmentConfig`).
    loop: the `loop` section (`sections.LoopConfig`).
    algorithm_name: `algorithm.name`.
    algorithm: the algorithm's `Config` dataclass of the `algorithm` section, or None
      when the algorithm declares none.
    network: the algorithm's `NetworkConfig` of the `network` section, or None.
    network_options: the dataclass of the keys `network.kind` adds, or None.
  """

  seed: int
  environment: sections.EnvironmentConfig
  loop: sections.LoopConfig
  algorithm_name: str
  algorithm: Any
  network: Any
  network_options: Any

  def __init__(self, validated: Mapping[str, Any]) -> None:
    super().__init__({key: _frozen(value) for key, value in validated.items()})
    name = validated['algorithm']['name']
    classes = sections.section_classes(name)
    kind_class = sections.network_kind_config(name, validated['network'].get('kind'))
    typed = dict(
        seed=validated['seed'],
        environment=_section(classes['environment'], validated['environment']),
        loop=_section(classes['loop'], validated['loop']),
        algorithm_name=name,
        algorithm=_section(classes['algorithm'], validated['algorithm']),
        network=_section(classes['network'], validated['network']),
        network_options=_section(kind_class, validated['network']))
    for attribute, value in typed.items():
      object.__setattr__(self, attribute, value)

  def __setattr__(self, name: str, value: Any) -> None:
    raise TypeError(_FROZEN)

  def __repr__(self) -> str:
    return f'RunConfig({dict.__repr__(self)})'


def _frozen(value: Any) -> Any:
  if isinstance(value, dict):
    return FrozenSection({key: _frozen(item) for key, item in value.items()})
  return value


def _section(cls: type | None, mapping: Mapping[str, Any]) -> Any:
  return None if cls is None else config_fields.from_mapping(cls, mapping)
