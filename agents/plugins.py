"""Extension points: registries of names that environments and packages fill in.

The framework core names no concrete environment. An environment (the balloon, or a
third-party package) plugs in by registering what it brings, under a name, in the
registries below:

    from agents import plugins
    plugins.NETWORKS.register('column', plugins.NetworkEntry(
        'agents.env.balloon.column_network:ColumnPolicy',
        'agents.env.balloon.column_network_config:ColumnNetworkConfig'))
    plugins.CONFIGS.register('balloon', 'agents.env.balloon.configs:balloon')
    plugins.ENVIRONMENTS.register('BalloonLearningEnvironment-v0', BalloonPlugin())
    plugins.VECTOR_ENVIRONMENTS.register('HalfCheetah-v5',
                                         'agents.env.mujoco.vector:MujocoVectorEnv')

Everything an environment brings under its Gymnasium id (config completions, training
statistics, worker preload, search objective, evaluation) is one typed
`EnvironmentPlugin`, registered once in `ENVIRONMENTS`; a slab of its own for training,
where Gymnasium's spec has none, goes in `VECTOR_ENVIRONMENTS`.

A value is either the object itself or a 'package.module:attribute' path, imported at
the first `get` (so that registering costs no import, TensorFlow included).

Registrations are made by plug-in functions, found through the `agents.plugins`
entry-point group of installed packages (this package declares its balloon there in
setup.py) and called once, at the first lookup of any registry:

    entry_points={'agents.plugins': ['mine = mypackage.plugin:register']}

A plug-in function takes no argument and calls `register` on the registries it fills.
This module imports nothing from the package but `config_fields`.
"""

import dataclasses
import difflib
import importlib
import importlib.metadata
import threading
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from agents.config_fields import ConfigError

ENTRY_POINT_GROUP = 'agents.plugins'

_load_lock = threading.RLock()
_loaded = False


class PluginError(ConfigError):
  """A plug-in failed to load, or a registry was asked for a name it does not hold."""


def import_path(path: str, what: str = 'plug-in') -> Any:
  """Imports 'package.module:attribute' (dots allowed after the colon) and returns it.

  Raises:
    PluginError: the path is malformed, the module cannot be imported or lacks the name.
  """
  if not isinstance(path, str) or path.count(':') != 1:
    raise PluginError(f"{what} {path!r} must be a 'package.module:attribute' path.")
  module_name, attribute = path.split(':')
  try:
    value = importlib.import_module(module_name)
  except ImportError as error:
    raise PluginError(f'{what} {path!r}: cannot import {module_name!r} ({error}).') from None
  for part in attribute.split('.'):
    if not hasattr(value, part):
      raise PluginError(f'{what} {path!r}: {module_name} has no {attribute!r}.')
    value = getattr(value, part)
  return value


def load_plugins() -> None:
  """Calls every `agents.plugins` entry point once per process (later calls do nothing).

  Raises:
    PluginError: a plug-in cannot be imported or raises while registering, named.
  """
  # Set once, under the lock.
  global _loaded  # pylint: disable=global-statement
  with _load_lock:
    if _loaded:
      return
    # Set first: a plug-in's own lookups must not load the plug-ins again.
    _loaded = True
    for entry_point in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP),
                              key=lambda entry: entry.name):
      try:
        register = entry_point.load()
        register()
      except Exception as error:  # noqa: BLE001 - any failure is the plug-in's, named here
        raise PluginError(f'Plug-in {entry_point.name!r} ({entry_point.value}) failed to '
                          f'register: {type(error).__name__}: {error}') from error


class Registry:
  """Names to values (objects or 'module:attribute' paths), filled by plug-ins.

  Args:
    kind: what the registry holds, for error messages ('network kind', 'config').
    config_key: the config key whose values are this registry's names, if any; errors
      then name it, as every config error does.
  """

  def __init__(self, kind: str, config_key: str | None = None) -> None:
    self.kind = kind
    self.config_key = config_key
    self._entries: dict[str, Any] = {}
    self._resolved: dict[str, Any] = {}

  def register(self, name: str, value: Any, replace: bool = False) -> None:
    """Registers `value` (an object or a 'module:attribute' path) under `name`.

    Registering the same value twice is harmless; another value under a taken name is
    refused unless `replace`.

    Raises:
      PluginError: the name is taken by another value, or is not a non-empty string.
    """
    if not isinstance(name, str) or not name:
      raise PluginError(f'A {self.kind} must be registered under a non-empty string, '
                        f'got {name!r}.')
    current = self._entries.get(name)
    if current is not None and current is not value and current != value and not replace:
      raise PluginError(f'{self.kind} {name!r} is already registered as {current!r}; pass '
                        'replace=True to replace it.')
    self._entries[name] = value
    self._resolved.pop(name, None)

  def unregister(self, name: str) -> None:
    """Removes `name` (tests and plug-ins that withdraw an entry); unknown names are fine."""
    self._entries.pop(name, None)
    self._resolved.pop(name, None)

  def get(self, name: str) -> Any:
    """The value registered under `name`, its path imported.

    Raises:
      PluginError: the name is not registered (the error lists the known names), or
        its path does not import.
    """
    load_plugins()
    if name not in self._entries:
      where = f'Config key {self.config_key!r}' if self.config_key else f'The {self.kind}'
      close = difflib.get_close_matches(str(name), list(self._entries), n=1)
      hint = f' Did you mean {close[0]!r}?' if close else ''
      raise PluginError(f'{where} must be a registered {self.kind}, one of '
                        f'{sorted(self._entries)}; got {name!r}.{hint}')
    if name not in self._resolved:
      value = self._entries[name]
      self._resolved[name] = (import_path(value, f'{self.kind} {name!r}')
                              if isinstance(value, str) else value)
    return self._resolved[name]

  def find(self, name: str, default: Any = None) -> Any:
    """The value registered under `name`, or `default` when there is none."""
    load_plugins()
    return self.get(name) if name in self._entries else default

  def names(self) -> list[str]:
    """The registered names, sorted."""
    load_plugins()
    return sorted(self._entries)

  def __contains__(self, name: object) -> bool:
    load_plugins()
    return name in self._entries

  def __iter__(self) -> Iterator[str]:
    return iter(self.names())

  def __getitem__(self, name: str) -> Any:
    return self.get(name)


@dataclasses.dataclass(frozen=True)
class NetworkEntry:
  """A network kind: where its class is, and the extra `network` keys it declares.

  Attributes:
    network: 'module:Class' of the network, built as
      `Class(observ_size, action_space, seed=seed, **network_section_without_kind)`.
    config: 'module:Dataclass' of the keys this kind adds to the `network` section
      (declared with `config_fields.param`, importable without TensorFlow; a static
      `check_run(config)` may check relations), or None.
  """
  network: str
  config: str | None = None


# The registries of the framework. Each holds what its docstring says; the balloon's
# entries are registered by `agents.env.balloon.plugin`.

NETWORKS = Registry('network kind', 'network.kind')
"""Network kinds of a run's `network.kind`: name -> `NetworkEntry`."""

QUANTILE_NETWORKS = Registry('quantile network kind', 'network.kind')
"""Network kinds of a QR-DQN run's `network.kind`: name -> `NetworkEntry`, the class built
as `Class(observ_size, num_actions, num_quantiles, hidden_layers=..., activation=...,
matmul_dtype=..., seed=..., name=..., **the kind's own keys)`, returning [B, A, N]."""

CONFIGS = Registry('named config', '--config')
"""Named run configs: name -> a function of no argument that returns a run config."""

class EnvironmentPlugin:
  """What an environment brings to the framework: every field, with the generic default.

  The framework runs any Gymnasium environment as it is: no episode statistics in
  training rows, nothing added to its config, its workers started cold, searches scored
  by the training score. `agents.evaluation` flies it with `gymnasium.make` per seed,
  slabs in worker processes, reset with the suite seed, per-seed return and length, the
  return as the headline metric. An environment changes any of that by subclassing this
  class, overriding what differs, and registering one instance in `ENVIRONMENTS` under
  its Gymnasium id (the balloon's is `agents.env.balloon.plugin.BalloonPlugin`):

      class MyPlugin(plugins.EnvironmentPlugin):
        metric = 'paid_steps'
        episode_length = 30
        episode_metrics = PaidSteps
        make_slab = plugins.imported('mypackage.slabs:make_slab')  # imported when read

      plugins.ENVIRONMENTS.register('Mine-v0', MyPlugin())

  A field whose value is costly to import is given as `imported('module:attribute')`:
  the core reads some fields in every process (the config completions, the worker
  preload), and registering or reading those should not import the evaluation's slabs.

  Attributes (training and configs):
    worker_preloads: module names the forkserver imports before it forks the
      environment's workers (`agents.tools.transport.launch.preload_environment`), so
      every worker starts with what they load (the balloon's Numba kernels). Such a module
      must not raise (other than ImportError) and must start no thread.

  Attributes (evaluation, read by `agents.evaluation.environments`):
    metric: the headline per-seed metric.
    metric_label: its name in tables and plots; None: 'return' for the return, else
      `metric`.
    metric_range: (low, high) of the metric, or None.
    metric_notes: {metric: one line saying what it is}.
    described_metrics: metrics summarised with intervals beside the headline one.
    counted_flags: {name: per-seed boolean metrics}, counted (`failures`, say).
    table_columns: extra (title, metric, statistic) columns of result tables.
    table_note: the note under result tables; None: the headline metric's note.
    training_row: {row key: (metric, statistic)} logged by suites flown in training.
    distribution: ((metric, label), ...) of the distribution plot; None: the headline.
    episode_length: suites' default episode length; None: the spec's time limit.
    steps_finished_episodes: its slabs may step an environment whose episode ended.
    flight_path_keys: per-step values kept with `--flight_paths`.
    named_suites: {name: () -> seeds}, besides BLE's names, which every environment has.
    baselines: {name: a `Baseline` subclass}, built (batch_size, episode_length) into a
      batched policy (see `Baseline`).
    suite_option_keys: environment keyword arguments that are also suite options (the
      balloon's wind).
    playback_kwargs: environment keyword arguments for playing episodes (`visualize`).
    observation_kwargs: environment keyword arguments that shape the observation: an
      agent trained with them is flown with them.
    final_frame_plot: whether the last frame of a played episode is worth a plot.
    make_slab: None (generic slabs), or `make_slab(num_envs, episode_length, options,
      flight_paths, [controller=name], **observation_kwargs)` -> an autoreset-off
      `VectorEnv`.
    episode_metrics: None, or a class built (batch_size, episode_length, flight_paths)
      with `start(rows)`, `record(active, reward, infos)` and `result(row, infos)`.
    flight_renderer: None, or `flight_renderer(slab, row)` -> a renderer with `record()`
      and `draw(figure)`, for the gallery of an evaluation.
    playback_summary: None, or `playback_summary(trace)` -> per-episode values of a
      played episode from its step infos ({key: [values]}).
  """

  worker_preloads: tuple[str, ...] = ()

  metric: str = 'cumulative_reward'
  metric_label: str | None = None
  metric_range: tuple[float, float] | None = None
  metric_notes: Mapping[str, str] = MappingProxyType({})
  described_metrics: tuple[str, ...] = ()
  counted_flags: Mapping[str, tuple[str, ...]] = MappingProxyType({})
  table_columns: tuple[tuple[str, str, str], ...] = ()
  table_note: str | None = None
  training_row: Mapping[str, tuple[str, str]] = MappingProxyType({})
  distribution: tuple[tuple[str, str], ...] | None = None
  episode_length: int | None = None
  steps_finished_episodes: bool = False
  flight_path_keys: tuple[str, ...] = ()
  named_suites: Mapping[str, Callable[[], Any]] = MappingProxyType({})
  baselines: Mapping[str, type['Baseline']] = MappingProxyType({})
  playback_kwargs: Mapping[str, Any] = MappingProxyType({})
  observation_kwargs: tuple[str, ...] = ()
  suite_option_keys: tuple[str, ...] = ()
  final_frame_plot: bool = False
  make_slab: Callable[..., Any] | None = None
  episode_metrics: Callable[..., Any] | None = None
  flight_renderer: Callable[..., Any] | None = None
  playback_summary: Callable[..., Any] | None = None

  def complete_config(self, environment: Mapping[str, Any]) -> Mapping[str, Any]:
    """A config's `environment` section with what the environment defaults to named where
    it names none (the balloon: `kwargs.wind: generative`), so a run's config.yaml records
    it. Applied to every validated config; generic: unchanged."""
    return environment

  def complete_saved_config(self, environment: Mapping[str, Any]) -> Mapping[str, Any]:
    """A saved config's `environment` section with what the environment defaulted to when
    an earlier version saved it named (the balloon: `kwargs.wind: procedural`, its wind
    before the wind was named). Applied to every config read back from a run's
    config.yaml or a policy record (`agents.configs.from_saved`) before
    `complete_config`, so old runs resume and old policies fly as they were; generic:
    unchanged."""
    return environment

  def episode_collectors(self, environment: Any, batch_size: int) -> list[Any]:
    """The `EpisodeCollector`s whose means every training row logs, for a config's typed
    `environment` section (`agents.configs.sections.EnvironmentConfig`) and a batch of
    `batch_size` (the balloon: TWR50 and its failures); generic: none."""
    del environment, batch_size
    return []

  # pylint: disable-next=useless-return  # mypy wants the None said
  def search_objective(self, config: Mapping[str, Any]) -> Callable[[Any], float] | None:
    """The default objective of a hyperparameter search of `config`: a function of a
    trial's `ExperimentManager` to the float the search maximises (the balloon: a TWR50
    suite); None (generic): the mean final training score of the trial's fits."""
    del config
    return None

  def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
    """The suite's options completed with their defaults.

    Raises:
      ValueError: an option the environment does not have (the generic one has none).
    """
    if options:
      key = sorted(options)[0]
      raise ValueError(f'option {key}={options[key]} is not an option of this environment, '
                       'which has none.')
    return {}

  def suite_defaults(self, env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The suite options an agent trained with `env_kwargs` is flown with when the suite
    names none (the balloon: its training wind); generic: none."""
    del env_kwargs
    return {}

  def episode_seed(self, suite_seed: int) -> int:
    """The seed an episode is reset with for a suite seed (generic: the seed itself)."""
    return int(suite_seed)


class Baseline:
  """A batched baseline policy an `EnvironmentPlugin` names (`baselines`): the contract.

  Built as `Baseline(batch_size, episode_length)` (or with a third argument, see
  `spec_argument`); called with observations [B, ...], it returns actions [B]; told
  `begin_episode(indices, seeds)` when rows begin an episode (with their suite seeds).

  Attributes:
    acts_in_slab: the slab computes its actions (`make_slab(..., controller=name)`: a
      controller that needs the environment's internals); its policy sends placeholders.
    spec_argument: None, or 'WHAT': the baseline is also named `name:<WHAT>` and built
      (batch_size, episode_length, argument).
  """

  acts_in_slab: bool = False
  spec_argument: str | None = None

  def __init__(self, batch_size: int | None = None, episode_length: int | None = None) -> None:
    del batch_size, episode_length

  def begin_episode(self, indices: Any, seeds: Any = None) -> None:
    """Rows `indices` begin an episode (seeds: their suite seeds, or None)."""
    del indices, seeds

  def __call__(self, observations: Any) -> Any:
    raise NotImplementedError

  @staticmethod
  def describe(argument: str | None = None, /) -> dict[str, Any]:
    """What results record of `name:<argument>` (`name` alone: None); default: nothing."""
    del argument
    return {}


class _Imported:
  """A plug-in field given as a 'module:attribute' path: imported at its first read."""

  def __init__(self, path: str) -> None:
    self.path = path
    self.name = path

  def __set_name__(self, owner: type, name: str) -> None:
    self.name = f'{owner.__name__}.{name}'
    self.attribute = name

  def __get__(self, instance: Any, owner: type | None = None) -> Any:
    value = import_path(self.path, f'plug-in field {self.name}')
    if instance is not None:
      instance.__dict__[self.attribute] = value  # read once per instance
    return value


def imported(path: str) -> Any:
  """A plug-in field imported from 'package.module:attribute' at its first read.

  Lets a plug-in class name what it brings without importing it: the framework reads
  some fields in every process (see `EnvironmentPlugin`).
  """
  return _Imported(path)


VECTOR_ENVIRONMENTS = Registry('vector environment')
"""An environment's own slab where its Gymnasium spec has no vector entry point: Gymnasium
id -> `make(env_id, num_envs, **kwargs)` returning an autoreset-off `VectorEnv` (the MuJoCo
tasks': `agents.env.mujoco.vector.MujocoVectorEnv`), which a config's
`environment.vector: true` steps as its slabs."""

ENVIRONMENTS = Registry('environment plug-in')
"""What an environment brings: Gymnasium id -> its `EnvironmentPlugin` (an instance of it
or of a subclass), registered once per id; environments without one get the defaults of
`EnvironmentPlugin` (`environment_plugin`)."""

_GENERIC = EnvironmentPlugin()


def environment_plugin(env_id: str | None) -> EnvironmentPlugin:
  """The plug-in of the environment `env_id`, or the generic `EnvironmentPlugin`.

  Raises:
    PluginError: what is registered under `env_id` is not an `EnvironmentPlugin`.
  """
  plugin = ENVIRONMENTS.find(env_id) if isinstance(env_id, str) and env_id else None
  if plugin is None:
    return _GENERIC
  if not isinstance(plugin, EnvironmentPlugin):
    raise PluginError(f'the plug-in of {env_id} must be an instance of a subclass of '
                      f'agents.plugins.EnvironmentPlugin, got {plugin!r}.')
  return plugin


SEARCH_SPACES = Registry('search space')
"""Hyperparameter search spaces of named configs: config name -> a space (the plain-mapping
form of `agents.experiment.search_distributions`, so that declaring one imports nothing)."""

TRAINING_EVALUATORS = Registry('training evaluator')
"""Evaluations run during training by the layers above the core: name -> factory.

'suite' (registered by `agents.evaluation`) flies `loop.eval_suite` and
`loop.select_suite` after each evaluation phase: a class with a static
`check(config, key)` (ValueError when the suite `loop.<key>` names cannot be flown),
built as `(config, algorithm, observation_space, run_dir, metrics, key=key)`, called
with the global step, returning the logged row; its `metric` attribute names the row's
headline value and its `key` the suite's `loop` key."""

TRACKERS = Registry('experiment tracker', 'loop.track')
"""Experiment trackers a run's `loop.track` may name: name -> a `agents.run.tracking.Tracker`
subclass, built with no argument. The framework's own two are registered here, by path."""
TRACKERS.register('mlflow', 'agents.run.mlflow_tracker:MLflowTracker')
TRACKERS.register('wandb', 'agents.run.wandb_tracker:WandbTracker')
