"""Builds what a run config describes: environments, the batch and the algorithm.

    env = builders.make_env(config)                       # one gymnasium.Env
    slab = builders.make_vector_env(config, 16)           # the env's own vector form
    batch = builders.make_batch_env(config)               # BatchEnv of num_agents
    algorithm = builders.build_algorithm(config, batch.observation_space,
                                         batch.action_space, is_training=loop.is_training)
    config, algorithm, observation_space, action_space = builders.restore_algorithm(run_dir)

`train`, `export`, `visualize` and `evaluate` all build through here. The
constructors are `functools.partial`s of module functions, so they travel to
worker processes with pickle.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import gymnasium

from agents import config_fields, configs, plugins
from agents.algorithms import registry
from agents.config_fields import ConfigError
from agents.configs import sections

if TYPE_CHECKING:
  import tensorflow as tf

  from agents.algorithms.algorithm import InGraphAlgorithm

_LOG = logging.getLogger(__name__)


def _make_kwargs(environment: Any, extra: Mapping[str, Any]) -> dict[str, Any]:
  """The keyword arguments of `gymnasium.make` for a typed `environment` section."""
  configs.import_modules(environment.imports)
  kwargs = dict(environment.kwargs, **extra)
  if environment.max_episode_steps is not None:
    kwargs['max_episode_steps'] = environment.max_episode_steps
  return kwargs


def make_env(config: Mapping[str, Any], **kwargs: Any) -> gymnasium.Env:
  """Builds one environment of the config; `kwargs` add to `environment.kwargs`."""
  environment = _environment_section(config)
  return gymnasium.make(environment.id, **_make_kwargs(environment, kwargs))


def make_vector_env(config: Mapping[str, Any], num_envs: int) -> gymnasium.vector.VectorEnv:
  """Builds a slab of `num_envs` environments with the environment's own vector
  implementation: the one registered for it in `plugins.VECTOR_ENVIRONMENTS` (the MuJoCo
  tasks'), else the vector entry point of its Gymnasium spec."""
  environment = _environment_section(config)
  kwargs = _make_kwargs(environment, {})
  if environment.id in plugins.VECTOR_ENVIRONMENTS:
    make = plugins.VECTOR_ENVIRONMENTS.get(environment.id)
    return make(environment.id, num_envs, **kwargs)
  return gymnasium.make_vec(environment.id, num_envs=num_envs,
                            vectorization_mode='vector_entry_point', **kwargs)


def env_spaces(config: Mapping[str, Any]) -> tuple[gymnasium.Space, gymnasium.Space]:
  """(observation_space, action_space) of the config's environment, from one instance."""
  env = make_env(config)
  try:
    return env.observation_space, env.action_space
  finally:
    env.close()


def make_batch_env(config: Mapping[str, Any], processes: bool | str | None = None) -> Any:
  """Builds the `BatchEnv` of `environment.num_agents` environments.

  `environment.processes: auto` probes one environment in this process and steps the
  batch in worker processes only where they pay off (`agents.tools.placement`); the
  choice is logged in one line and kept on the batch as `batch.placement`.

  Args:
    config: a validated config.
    processes: override of `environment.processes` (True, False, 'auto' or 'ray').

  Returns:
    A `BatchEnv`: one worker per core (or `envs_per_process` environments per
    worker) in processes, one Ray actor per CPU of the cluster (or per
    `envs_per_process` environments) with 'ray', or everything in this process.
  """
  from agents.tools import batch_env as batch_env_lib
  from agents.tools import placement as placement_lib
  from agents.tools.transport import launch
  environment = _environment_section(config)
  if environment.backend == 'envpool':
    return _envpool_batch_env(config, environment)
  processes = environment.processes if processes is None else processes
  num_agents = environment.num_agents
  per_process = environment.envs_per_process
  cores = os.cpu_count() or 1
  options: dict[str, Any] = dict(check_finite=environment.check_finite,
                                 max_restarts=environment.max_restarts)
  if processes == placement_lib.RAY:
    # One actor per CPU of the cluster (or per `envs_per_process` environments).
    from agents.tools import ray_cluster
    slabs = -(-num_agents // per_process) if per_process else cores
    ray = ray_cluster.init(environment.ray_address, num_cpus=max(cores, slabs))
    cores = max(1, int(ray.cluster_resources().get('CPU', 1)))
    options['address'] = environment.ray_address
  # One worker per core: more workers than cores only adds switching.
  workers = -(-num_agents // per_process) if per_process else max(1, min(num_agents, cores))
  placement = placement_lib.decide(processes, functools.partial(make_env, config),
                                   num_agents, workers, cores)
  processes = placement.processes
  if not per_process:
    # In this process, everything is one member of the batch.
    per_process = -(-num_agents // (workers if processes else 1))
  # Workers forked for this environment start with what its plug-in preloads.
  launch.preload_environment(environment.id)
  if not environment.vector:
    batch = batch_env_lib.BatchEnv.from_constructors(
        functools.partial(make_env, config), num_agents, processes=processes,
        envs_per_process=per_process if processes else 1, **options)
  else:
    sizes = [min(per_process, num_agents - start)
             for start in range(0, num_agents, per_process)]
    batch = batch_env_lib.BatchEnv.from_slab_constructors(
        [functools.partial(make_vector_env, config, size) for size in sizes],
        processes=processes, **options)
  if processes == placement_lib.RAY:
    placement = dataclasses.replace(
        placement, nodes=tuple(member.node for member in batch.members))
  _LOG.info('Environments step %s.', placement.describe())
  batch.placement = placement
  return batch


def _envpool_batch_env(config: Any, environment: sections.EnvironmentConfig) -> Any:
  """The `BatchEnv` of `environment.backend: envpool`: one EnvPool member, one thread per
  core, environment i seeded with the run's seed + i."""
  from agents.tools import batch_env as batch_env_lib
  from agents.tools import envpool_member
  from agents.tools import placement as placement_lib
  kwargs = dict(environment.kwargs)
  if environment.max_episode_steps is not None:
    kwargs['max_episode_steps'] = environment.max_episode_steps
  try:
    envpool_member.check_task(environment.id)
  except ValueError as error:
    raise ConfigError(str(error)) from None
  threads = max(1, min(environment.num_agents, os.cpu_count() or 1))
  seed = config.seed if isinstance(config, configs.RunConfig) else config.get('seed', 0)
  member = envpool_member.EnvPoolMember(environment.id, environment.num_agents, seed=seed,
                                        num_threads=threads, **kwargs)
  batch = batch_env_lib.BatchEnv([member], max_restarts=environment.max_restarts,
                                 check_finite=environment.check_finite)
  batch.placement = placement_lib.Placement(False, 'config', num_envs=environment.num_agents)
  _LOG.info('Environments step in EnvPool, %d threads (environment.backend = envpool).',
            threads)
  return batch


def _environment_section(config: Mapping[str, Any]) -> sections.EnvironmentConfig:
  """The typed `environment` section of a run config, or of a mapping that holds only that
  section (BLE's `make_batch_env` builds one), its missing keys at their defaults."""
  if isinstance(config, configs.RunConfig):
    return config.environment
  return config_fields.from_mapping(sections.EnvironmentConfig, config['environment'])


def build_algorithm(config: Mapping[str, Any], observation_space: gymnasium.Space,
                    action_space: gymnasium.Space,
                    is_training: tf.Variable | bool | None = None) -> InGraphAlgorithm:
  """Builds the config's algorithm (`algorithm.name`) for the given spaces."""
  config = configs.as_run_config(config)
  algorithm_class = registry.lookup(config.algorithm_name)
  return algorithm_class.from_config(config, observation_space, action_space,
                                     is_training=is_training)


def restore_algorithm(
    run_dir: str, checkpoint: str | None = None, is_training: tf.Variable | bool | None = None,
) -> tuple[dict[str, Any], InGraphAlgorithm, gymnasium.Space, gymnasium.Space]:
  """Rebuilds the algorithm of a run and restores a checkpoint into it.

  Args:
    run_dir: run directory with `config.yaml` and `checkpoints/`.
    checkpoint: checkpoint prefix; None takes the latest.
    is_training: optional bool Variable (or a bool) given to the algorithm.

  Returns:
    (config, algorithm, observation_space, action_space).

  Raises:
    ConfigError: the run has no config.yaml, a bad one, or no checkpoint.
  """
  import tensorflow as tf

  from agents.run import checkpoints as checkpoints_lib
  if not os.path.isdir(run_dir):
    raise ConfigError(f'Run directory {run_dir} does not exist.')
  config_path = os.path.join(run_dir, 'config.yaml')
  if not os.path.exists(config_path):
    raise ConfigError(f'{run_dir} has no config.yaml; pass a run directory '
                      '<logdir>/<timestamp>-<config>.')
  config = configs.load_yaml(config_path)
  checkpoints = os.path.join(run_dir, 'checkpoints')
  try:
    # The newest checkpoint that reads: a damaged one (a kill during a save, a full
    # disk) is skipped with a warning, as on resume.
    path = checkpoint or checkpoints_lib.newest_readable(checkpoints)
  except checkpoints_lib.CheckpointError as error:
    raise ConfigError(str(error)) from None
  if path is None:
    raise ConfigError(f'Run {run_dir} has no checkpoint in {checkpoints}; train it first.')
  if checkpoint and not tf.io.gfile.glob(checkpoint + '.index'):
    raise ConfigError(f'Checkpoint {checkpoint} does not exist (no {checkpoint}.index).')
  observation_space, action_space = env_spaces(config)
  mode = is_training
  if isinstance(is_training, bool):
    is_training = tf.Variable(is_training, trainable=False, name='is_training')
  algorithm = build_algorithm(config, observation_space, action_space, is_training=is_training)
  # The loop also saved its global step; only the algorithm is needed here.
  tf.train.Checkpoint(algorithm=algorithm).restore(path).expect_partial()
  if isinstance(mode, bool):
    # An algorithm may checkpoint the variable it was given; the caller's mode wins.
    is_training.assign(mode)  # type: ignore[union-attr]  # a Variable: made from the bool above
  return config, algorithm, observation_space, action_space
