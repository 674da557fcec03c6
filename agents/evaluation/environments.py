"""How an environment is evaluated: its plug-in (`agents.plugins.ENVIRONMENTS`), or the default.

Every Gymnasium environment can be evaluated: `gymnasium.make(id,
max_episode_steps=episode_length)` per seed, in slabs (one per worker process, through
`BatchEnv`), reset with the suite seed itself, and scored by the return and the length
of each episode, the return being the headline metric. An environment's plug-in
replaces or adds to each of these (`agents.plugins.EnvironmentPlugin` lists its fields):
the balloon flies vectorised slabs from episode seeds 2**62 + s, adds TWR50 and its
failure flags, and ranks by TWR50.

    environment = environments.get('CartPole-v1')
    environment.metric                      # 'cumulative_reward'
    suite = environment.complete(Suite('mine', range(5)))   # episode length 500

Which environment an agent flies: the caller's `env_id`; else the run's environment
(`run:<RUN_DIR>`); else the environment whose plug-in has the baseline (`station_seeker`);
else the one environment with an evaluation plug-in, when exactly one has one.
"""

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agents import plugins
from agents.evaluation.errors import EvaluationError

RETURN_NOTE = 'return = the sum of the rewards of an episode'


def _generic_slab(env_id: str, num_envs: int, episode_length: int) -> Any:
  """A slab of `num_envs` environments `gymnasium.make(env_id)`, autoreset off."""
  import gymnasium

  from agents.tools import slab as slab_lib
  constructor = functools.partial(gymnasium.make, env_id, max_episode_steps=episode_length)
  return slab_lib.make_sync_slab([constructor] * num_envs)


class EnvironmentEvaluation:
  """An environment's evaluation: its plug-in's fields, completed where they derive.

  Args:
    env_id: the Gymnasium id.
    plugin: the environment's `plugins.EnvironmentPlugin`, or None for the generic one.
  """

  def __init__(self, env_id: str, plugin: plugins.EnvironmentPlugin | None = None) -> None:
    if plugin is None:
      plugin = plugins.EnvironmentPlugin()
    self.env_id = env_id
    self.plugin = plugin
    self.metric = plugin.metric
    self.metric_label = plugin.metric_label or (
        'return' if self.metric == 'cumulative_reward' else self.metric)
    self.metric_range = plugin.metric_range
    self.metric_notes = {'cumulative_reward': RETURN_NOTE, **plugin.metric_notes}
    # Summarised with intervals; the return always is.
    self.described_metrics = tuple(dict.fromkeys(
        (self.metric, *plugin.described_metrics, 'cumulative_reward')))
    self.counted_flags = dict(plugin.counted_flags)
    self.table_columns = tuple(plugin.table_columns)
    self.table_note = plugin.table_note or (
        f'{self.metric_label}: {self.metric_notes.get(self.metric, self.metric)}.')
    self.training_row = dict(plugin.training_row)
    self.distribution = tuple(plugin.distribution or ((self.metric, self.metric_label),))
    self.flight_path_keys = tuple(plugin.flight_path_keys)
    self.named_suites = dict(plugin.named_suites)
    self.baselines = dict(plugin.baselines)
    # Whether its slabs may step an environment whose episode ended (the balloon's may;
    # Gymnasium's with autoreset off may not, so the runner resets idle ones).
    self.steps_finished_episodes = bool(plugin.steps_finished_episodes)
    # Playback (`recording.visualize`): the environment's keyword arguments for playing
    # episodes, whether the last frame is worth a plot of its own.
    self.playback_kwargs = dict(plugin.playback_kwargs)
    # The environment keyword arguments that shape the observation: an agent trained
    # with them is flown with them (the balloon's `lookahead`).
    self.observation_keys = tuple(plugin.observation_kwargs)
    self.final_frame_plot = bool(plugin.final_frame_plot)
    # The environment keyword arguments that are also suite options (the balloon's wind).
    self.suite_option_keys = tuple(plugin.suite_option_keys)

  def playback_summary(self, trace: Mapping[str, Any]) -> dict[str, Any]:
    """Per-episode values of a played episode from its step infos ({key: [values]})."""
    summary = self.plugin.playback_summary
    return dict(summary(trace)) if summary is not None else {}

  def __repr__(self) -> str:
    return f'EnvironmentEvaluation({self.env_id!r})'

  @property
  def has_flight_renderer(self) -> bool:
    """Whether the plug-in draws flights (the gallery of an evaluation)."""
    return self.plugin.flight_renderer is not None

  def default_episode_length(self) -> int:
    """Suites' episode length when none is given: the plug-in's, else the spec's limit.

    Raises:
      EvaluationError: neither says one (the environment has no time limit).
    """
    length = self.plugin.episode_length
    if length is not None:
      return int(length)
    spec = self.spec()
    if spec.max_episode_steps:
      return int(spec.max_episode_steps)
    raise EvaluationError(f'environment {self.env_id} has no max_episode_steps; give the '
                          'suite an episode_length (custom:...,episode_length=N).')

  def spec(self) -> Any:
    """The Gymnasium spec of the environment.

    Raises:
      EvaluationError: the id is not registered with Gymnasium.
    """
    import gymnasium
    try:
      return gymnasium.spec(self.env_id)
    except gymnasium.error.Error as error:
      raise EvaluationError(f'environment {self.env_id!r} is not a registered Gymnasium '
                            f'environment: {error}') from None

  def check_options(self, suite_name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The suite options completed by the plug-in; EvaluationError naming a bad one."""
    try:
      return dict(self.plugin.check_options(dict(options)))
    except ValueError as error:
      raise EvaluationError(f'suite {suite_name!r} of {self.env_id}: {error}') from None

  def episode_seeds(self, seeds: Iterable[int]) -> list[int]:
    """The reset seeds of suite seeds (the plug-in's mapping, else the seeds themselves)."""
    return [self.plugin.episode_seed(seed) for seed in seeds]

  def acts_in_slab(self, agent: str | None) -> bool:
    """Whether `agent` is a baseline whose actions its slab computes (`slab_constructor`)."""
    baseline = self.baselines.get(agent) if agent is not None else None
    return baseline is not None and bool(baseline.acts_in_slab)

  def made_options(self, env_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The suite options an environment made with `env_kwargs` names (`suite_option_keys`)."""
    env_kwargs = env_kwargs or {}
    return {key: env_kwargs[key] for key in self.suite_option_keys if key in env_kwargs}

  def suite_defaults(self, env_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The suite options an agent trained with `env_kwargs` is flown with when the suite
    names none (the plug-in's `suite_defaults`; the balloon: its wind)."""
    return dict(self.plugin.suite_defaults(dict(env_kwargs or {})))

  def observation_kwargs(self, env_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The part of a run's environment kwargs that shapes the observation (see
    `observation_keys`): what a suite's slabs need to show the agent what it trained on."""
    env_kwargs = env_kwargs or {}
    return {key: env_kwargs[key] for key in self.observation_keys
            if env_kwargs.get(key) is not None}

  def observation_space(self, observation_kwargs: Mapping[str, Any] | None = None) -> Any:
    """One environment's observation space with `observation_kwargs` (None: the default)."""
    if not observation_kwargs:
      return self.spaces[0]
    import gymnasium
    env = gymnasium.make(self.env_id, **observation_kwargs)
    try:
      return env.observation_space
    finally:
      env.close()

  def slab_constructor(self, num_envs: int, episode_length: int, options: Mapping[str, Any],
                       flight_paths: bool = False, agent: str | None = None,
                       observation_kwargs: Mapping[str, Any] | None = None
                       ) -> Callable[[], Any]:
    """A picklable constructor of one slab of `num_envs` environments for a suite.

    `observation_kwargs` (from `observation_kwargs`) are passed to the plug-in's
    `make_slab`, so the slab shows the observation the agent trained on.

    For an `agent` that is a baseline acting in the slab (its class has `acts_in_slab`
    true: a controller that needs the environment's internals, such as a planner with
    the simulator's forecast), the plug-in's `make_slab` gets `controller=agent` and
    returns a slab whose steps take that controller's actions; the batched policy's
    actions are then placeholders.
    """
    make_slab = self.plugin.make_slab
    controller = {'controller': agent} if self.acts_in_slab(agent) else {}
    observation_kwargs = dict(observation_kwargs or {})
    if make_slab is None:
      if observation_kwargs:
        raise EvaluationError(f'observation options {sorted(observation_kwargs)} need a '
                              f'make_slab of {self.env_id}, which has none.')
      if controller:
        raise EvaluationError(f'baseline {agent!r} acts in the slab, but {self.env_id} has no '
                              'make_slab to build it one.')
      return functools.partial(_generic_slab, self.env_id, num_envs, episode_length)
    return functools.partial(make_slab, num_envs, episode_length, dict(options), flight_paths,
                             **controller, **observation_kwargs)

  def episode_metrics(self, batch_size: int, episode_length: int,
                      flight_paths: bool = False) -> Any:
    """The plug-in's per-episode metrics of a batch (start, record, result), or None.

    Raises:
      EvaluationError: flight paths asked of an environment that keeps none.
    """
    if flight_paths and not self.flight_path_keys:
      raise EvaluationError(f'environment {self.env_id} keeps no flight paths; drop '
                            '--flight_paths.')
    factory = self.plugin.episode_metrics
    return None if factory is None else factory(batch_size, episode_length, flight_paths)

  def flight_renderer(self, slab: Any, row: int) -> Any:
    """The plug-in's renderer of row `row` of a slab (see `has_flight_renderer`).

    Raises:
      EvaluationError: the plug-in draws no flights.
    """
    if self.plugin.flight_renderer is None:
      raise EvaluationError(f'environment {self.env_id} draws no flights.')
    return self.plugin.flight_renderer(slab, row)

  @functools.cached_property
  def spaces(self) -> tuple[Any, Any]:
    """(observation_space, action_space) of one environment, built once."""
    import gymnasium
    self.spec()
    env = gymnasium.make(self.env_id)
    try:
      return env.observation_space, env.action_space
    finally:
      env.close()


@functools.cache
def get(env_id: str) -> EnvironmentEvaluation:
  """The `EnvironmentEvaluation` of a Gymnasium id (its plug-in's, or the generic one)."""
  if not isinstance(env_id, str) or not env_id:
    raise EvaluationError(f'an environment is a Gymnasium id, got {env_id!r}.')
  try:
    return EnvironmentEvaluation(env_id, plugins.environment_plugin(env_id))
  except plugins.PluginError as error:
    raise EvaluationError(str(error)) from None


def default_env_id() -> str:
  """The environment flown when neither the caller nor the agent names one.

  Raises:
    EvaluationError: no environment, or several, registers a plug-in.
  """
  names = plugins.ENVIRONMENTS.names()
  if len(names) != 1:
    raise EvaluationError(f'name the environment to evaluate on (--env=<Gymnasium id>); '
                          f'environments with an evaluation plug-in: {names}.')
  return names[0]


def baseline_env_id(name: str) -> str | None:
  """The environment whose plug-in has the baseline `name`, or None."""
  for env_id in plugins.ENVIRONMENTS.names():
    if name in get(env_id).baselines:
      return env_id
  return None
