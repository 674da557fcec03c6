"""The sections of a run config that every algorithm shares, and its layout.

A run config is laid out as this nested mapping (resolved, it is a frozen `RunConfig`):

    seed: 0
    environment: {id, kwargs, imports, max_episode_steps, num_agents, processes,
                  ray_address, max_restarts, vector, envs_per_process, check_finite,
                  backend}
    network: {...}     # the algorithm's NetworkConfig (empty without one)
    algorithm: {name: ppo, ...}   # the algorithm's Config
    loop: {steps, tf_threads, steps_per_call, log_every, checkpoint_every,
           eval_every, eval_steps, eval_suite, select_suite, track}

`EnvironmentConfig` and `LoopConfig` declare the shared sections; the algorithm
class declares the other two (see `agents.algorithms.algorithm`), and a network
kind may add keys of its own to `network` (`agents.plugins.NetworkEntry`).
`specs_of` lists every key of a config with its declaration, and `defaults_of`
builds a config of defaults for an algorithm.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from agents import config_fields, plugins
from agents.algorithms import registry
from agents.config_fields import param

SECTIONS = ('environment', 'network', 'algorithm', 'loop')


@dataclasses.dataclass(frozen=True)
class RootConfig:
  """The keys at the top of a run config."""
  seed: int = param(0, 'seed of weights, sampling and environments', low=0, high=2**31 - 1)


@dataclasses.dataclass(frozen=True)
class EnvironmentConfig:
  """The `environment` section: which environment, how many, where they run."""
  id: str = param('Pendulum-v1', 'Gymnasium environment id')
  kwargs: dict = param({}, 'keyword arguments of gymnasium.make')
  imports: tuple[str, ...] = param((), 'modules imported first (they register the id)')
  max_episode_steps: int | None = param(None, 'time limit; null keeps the registered one', low=1)
  num_agents: int = param(8, 'number of parallel environments', low=1)
  processes: bool | str = param(
      'auto', "step the environments in worker processes; 'auto' measures one step of the "
      "environment and takes processes only where they pay off (docs/parallel.md); 'ray': "
      'one Ray actor per slab, spread over the nodes of a cluster (docs/cluster.md)',
      choices=(True, False, 'auto', 'ray'))
  ray_address: str | None = param(
      None, "with processes: ray, the cluster's address ('host:6379'); null takes "
      'RAY_ADDRESS, or starts Ray on this machine', resumable=True)
  max_restarts: int = param(0, 'dead workers or Ray actors replaced in a run before it stops; '
                            'their episodes end as truncated', low=0, resumable=True)
  vector: bool = param(False, "build slabs with the environment's own vectorised "
                       "implementation, autoreset disabled: its plug-in's (the MuJoCo "
                       "tasks') or gymnasium.make_vec's")
  envs_per_process: int = param(0, 'environments per worker process; 0 spreads them over the '
                                'CPU cores', low=0)
  check_finite: bool = param(True, 'refuse NaN and inf observations and rewards (BatchEnv)')
  backend: str = param(
      'gymnasium', "what steps the environments: 'gymnasium' (gymnasium.make, placed by "
      "environment.processes); 'envpool': EnvPool's C++ threads in this process, for the "
      "tasks EnvPool has (HalfCheetah-v5, Hopper-v5, ...; pip install 'agents[envpool]'), "
      'ignoring processes, vector and envs_per_process', choices=('gymnasium', 'envpool'),
      legacy='gymnasium')


@dataclasses.dataclass(frozen=True)
class LoopConfig:
  """The `loop` section: the step budget, threads and cadences."""
  # One TensorFlow thread by default: the small per-step graph ops pay more for
  # handing work between threads than they gain, and the environments want the
  # other cores.
  steps: int = param(200_000, 'environment steps of training, summed over agents', low=1,
                     resumable=True)
  tf_threads: int = param(1, "TensorFlow's intra- and inter-op threads; 0 keeps its default",
                          low=0)
  steps_per_call: int = param(64, 'batch steps per tf.function call', low=1)
  log_every: int = param(10_240, 'environment steps between logged rows', low=1,
                         resumable=True)
  checkpoint_every: int = param(51_200, 'environment steps between checkpoints', low=1,
                                resumable=True)
  eval_every: int = param(0, 'training steps between evaluation phases; 0 disables', low=0,
                          resumable=True)
  eval_steps: int = param(8_000, 'environment steps of one evaluation phase', low=1,
                          resumable=True)
  eval_suite: str | None = param(
      None, 'evaluation suite (agents.evaluation) flown by the deterministic policy after '
      'each evaluation phase, its headline metric logged with a 95 % interval; null '
      'disables', resumable=True)
  select_suite: str | None = param(
      None, 'held-out suite flown beside loop.eval_suite after each evaluation phase; the '
      'weights that score best on its headline metric are exported as best_policy/ '
      '(keep its seeds apart from the suite you report on); null disables',
      resumable=True)
  track: tuple[str, ...] = param(
      (), "experiment trackers that receive the run's config, rows and policy beside "
      "metrics.jsonl and TensorBoard: 'mlflow', 'wandb' (agents.plugins.TRACKERS)",
      resumable=True)


def section_classes(algorithm_name: str) -> dict[str, type | None]:
  """{section: declared dataclass or None} for a run of the named algorithm."""
  config, network_config = registry.declarations(algorithm_name)
  return {'environment': EnvironmentConfig, 'network': network_config, 'algorithm': config,
          'loop': LoopConfig}


def network_kind_config(algorithm_name: str, network_kind: str | None) -> type | None:
  """The dataclass of the keys that `network_kind` adds to the `network` section, or None.

  Only an algorithm whose `NetworkConfig` looks its `kind` up in a registry (a `kinds`
  class attribute, as PPO's does in `agents.plugins.NETWORKS`) has such keys.

  Raises:
    ConfigError: the kind is not registered (naming 'network.kind' and the known kinds).
  """
  network_config = section_classes(algorithm_name)['network']
  kinds = getattr(network_config, 'kinds', None)
  if kinds is None or network_kind is None:
    return None
  entry = kinds.get(network_kind)
  return plugins.import_path(entry.config, f'network kind {network_kind!r}') \
      if entry.config else None


def specs_of(algorithm_name: str,
             network_kind: str | None = None) -> dict[str, config_fields.Spec]:
  """{dotted key: Spec} of every key of a run config of the named algorithm.

  Args:
    algorithm_name: the config's `algorithm.name`.
    network_kind: the config's `network.kind`, whose own keys join the `network`
      section; None for none.

  Raises:
    ConfigError: the algorithm or the network kind is unknown.
  """
  specs = dict(config_fields.specs(RootConfig))
  specs['algorithm.name'] = config_fields.Spec(
      name='name', kind=str, is_list=False, nullable=False,
      doc=f"the algorithm: one of {sorted(registry.ALGORITHMS)} or 'package.module:Class'")
  classes = section_classes(algorithm_name)
  classes['network_kind'] = network_kind_config(algorithm_name, network_kind)
  for section, cls in classes.items():
    if cls is not None:
      section = 'network' if section == 'network_kind' else section
      specs.update({f'{section}.{key}': spec for key, spec in config_fields.specs(cls).items()})
  return specs


def specs_for(config: Mapping[str, Any]) -> dict[str, config_fields.Spec]:
  """`specs_of` the algorithm and network kind that a (nested) config names."""
  network = config.get('network')
  kind = network.get('kind') if isinstance(network, dict) else None
  return specs_of(config['algorithm']['name'], kind)


def defaults_of(algorithm_name: str, network_kind: str | None = None) -> dict[str, Any]:
  """A run config of defaults for the named algorithm (a fresh nested mapping), with the
  network kind's own keys when `network_kind` is given."""
  config = config_fields.defaults(RootConfig)
  for section, cls in section_classes(algorithm_name).items():
    config[section] = config_fields.defaults(cls) if cls is not None else {}
  config['algorithm'] = {'name': algorithm_name, **config['algorithm']}
  if network_kind is not None:
    return with_network_kind(config, network_kind)
  return config


def with_network_kind(config: Mapping[str, Any], network_kind: str | None) -> dict[str, Any]:
  """The config with `network.kind` switched: the old kind's own keys dropped, the new
  kind's defaults added (keys the sections share keep their values)."""
  algorithm_name = config['algorithm']['name']
  network = dict(config['network'])
  old = network_kind_config(algorithm_name, network.get('kind'))
  for key in config_fields.specs(old) if old is not None else ():
    network.pop(key, None)
  new = network_kind_config(algorithm_name, network_kind)
  network.update(config_fields.defaults(new) if new is not None else {})
  network['kind'] = network_kind
  return dict(config, network=network)
