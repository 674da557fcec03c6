"""A Python agent's run: what `train --agent` and the experiment manager's fits train.

    source = agent_runs.resolve_agent('agents.python_agents.dqn_agent:DQNAgent')  # or 'random'
    agent = agent_runs.make_agent(source, num_actions, observation_shape, batch_size=4)
    result = agent_runs.train_agent('logs/run', batch_env, agent, num_iterations=3,
                                    max_episode_length=960, seed=0)

`train_agent` runs `run_training_loop` in a run directory laid out as an in-graph run's:
`checkpoints/` (the agent's files and the iteration records), `metrics.jsonl` and the
TensorBoard scalars under `train/` (one row per iteration, written through the run's
`RunMetrics`, so the trackers of `loop.track` get them too), `run.yaml` (the sessions
and trackers, `agents.run.run_manifest`), and, when the run finishes and the agent has an
`export(directory)` method, `policy/` (what the agent writes there is its own: a
SavedModel for a TensorFlow agent is what `evaluate --agent=policy:` flies).
`train_run(config, run_dir)` does all of it for an agent config
(`agent_configs`), config.yaml included: the library side of `train --agent`.

An agent is named as `--agent` takes it: `'package.module:Class'`, a class with BLE's
Agent interface (built as `Class(num_actions, observation_shape, **kwargs)`, or with
`batch_size` too for a `BatchedAgent`), or a name of `run_helpers.create_agent`
(`random`, `station_seeker`, `balloon_ppo`, `quantile`, ...). A single-environment
agent on a batch of B balloons is B agents, one per row, as BLE's loop would fly B
separate runs; `export` then exports row 0's.

Budget: a fit's budget is in environment steps, summed over the balloons, as the
in-graph `loop.steps` and most rlberry agents count it. An iteration flies one
episode per balloon and is charged `batch size x max_episode_length` steps, whether
or not its episodes end early, so `iterations_for(steps)` rounds up to whole iterations.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agents import plugins
from agents.python_agents import agent as agent_lib
from agents.python_agents import collectors as collectors_lib
from agents.python_agents import train_lib

POLICY_DIR = 'policy'
DEFAULT_EPISODE_LENGTH = 960  # BLE's


class AgentSpecError(ValueError):
  """An `--agent` that names no agent: a missing module or class, or a class that lacks a
  required method (the message names it)."""


@dataclasses.dataclass(frozen=True)
class AgentSource:
  """Where a run's agents come from.

  Attributes:
    spec: the name as given (`'package.module:Class'` or a `create_agent` name).
    agent_class: the class, or None for a `create_agent` name.
  """
  spec: str
  agent_class: type | None = None

  @property
  def batched(self) -> bool:
    """Whether the class acts for a whole batch (a `BatchedAgent`)."""
    return self.agent_class is not None and _is_batched_class(self.agent_class)


def _is_batched_class(agent_class: type) -> bool:
  if issubclass(agent_class, agent_lib.BatchedAgent):
    return True
  begin: Any = getattr(agent_class, 'begin_episode', None)
  try:
    return 'rows' in inspect.signature(begin).parameters
  except (TypeError, ValueError):
    return False


def resolve_agent(spec: str) -> AgentSource:
  """The `AgentSource` of `spec`, checked before anything is built.

  Raises:
    AgentSpecError: the module or class does not exist, it is not a class, it lacks one
      of BLE's required methods, or the name is not one `create_agent` knows.
  """
  from agents.python_agents import run_helpers
  if not isinstance(spec, str) or not spec:
    raise AgentSpecError(f'--agent must name an agent, got {spec!r}.')
  if ':' not in spec:
    if spec not in run_helpers.agent_names():
      raise AgentSpecError(f"unknown agent {spec!r}: expected 'package.module:Class' or one "
                           f'of {run_helpers.agent_names()}.')
    return AgentSource(spec)
  try:
    value = plugins.import_path(spec, 'agent')
  except plugins.PluginError as error:
    raise AgentSpecError(str(error)) from None
  if not inspect.isclass(value):
    raise AgentSpecError(f'agent {spec!r} is a {type(value).__name__}, not a class with '
                         "BLE's Agent interface.")
  for method in agent_lib.REQUIRED_METHODS:
    if not callable(getattr(value, method, None)):
      raise AgentSpecError(
          f'agent {spec!r} has no callable {method}(); an agent needs '
          f'{", ".join(agent_lib.REQUIRED_METHODS)} (BLE\'s Agent interface).')
  return AgentSource(spec, value)


def check_kwargs(source: AgentSource, kwargs: Mapping[str, Any]) -> None:
  """Checks that the agent's constructor takes `kwargs` (after num_actions and
  observation_shape, and batch_size for a batched class).

  Raises:
    AgentSpecError: naming the agent and the argument it refuses or misses.
  """
  if source.agent_class is None:
    return
  positional = (0, (1,), 1) if source.batched else (0, (1,))
  try:
    inspect.signature(source.agent_class).bind(*positional, **kwargs)
  except TypeError as error:
    raise AgentSpecError(f'agent {source.spec!r}: {error}.') from None
  except ValueError:
    return  # No signature to check.


def make_agent(source: AgentSource, num_actions: int, observation_shape: Sequence[int],
               batch_size: int, kwargs: Mapping[str, Any] | None = None) -> Any:
  """The agent(s) of a batch: a `BatchedAgent`, one single agent, or one per row.

  Args:
    source: an `AgentSource`.
    num_actions: the number of discrete actions.
    observation_shape: the shape of one observation.
    batch_size: the balloons flown at once.
    kwargs: the constructor's extra keyword arguments.

  Returns:
    What `run_training_loop` takes: a `BatchedAgent`, an `Agent` (batch of one), or
    `AgentPerRow` of `batch_size` agents.
  """
  kwargs = dict(kwargs or {})
  observation_shape = tuple(observation_shape)
  if source.batched and source.agent_class is not None:  # batched: a class, never None.
    return source.agent_class(num_actions, observation_shape, batch_size, **kwargs)
  build: Callable[..., Any]
  if source.agent_class is None:
    from agents.python_agents import run_helpers
    build = functools.partial(run_helpers.create_agent, source.spec)
  else:
    build = source.agent_class
  first = build(num_actions, observation_shape, **kwargs)
  if agent_lib.is_batched(first):  # `quantile` is a batched agent of its own size.
    if batch_size != 1:
      raise AgentSpecError(f'agent {source.spec!r} builds a batched agent of its own; fly '
                           f'it with environment.num_agents=1, not {batch_size}.')
    return first
  if batch_size == 1:
    return first
  rest = [build(num_actions, observation_shape, **kwargs) for _ in range(batch_size - 1)]
  return agent_lib.AgentPerRow([first, *rest])


def iterations_for(steps: int, batch_size: int, max_episode_length: int) -> int:
  """Whole iterations that cover `steps` environment steps (each charged B x L)."""
  return max(1, math.ceil(steps / (batch_size * max_episode_length)))


class MetricsCollector(collectors_lib.Collector):
  """One row per iteration into the run's `RunMetrics` (metrics.jsonl, TensorBoard's
  `train/`, trackers): `step` (environment steps so far), `phase` 'train',
  `iteration`, `episodes`, `mean_score` (the mean return) and the means of the
  environment's episode statistics (the balloon's `twr50` and failure rates).

  A resumed run first drops the rows of the episodes it flies again.
  """

  def __init__(self, base_dir: str | None, num_actions: int, current_episode: int,
               metrics: Any = None) -> None:
    super().__init__(None, num_actions, current_episode)  # Writes through `metrics` only.
    del base_dir
    self._metrics = metrics
    self._steps = 0
    self._pending: list[dict[str, Any]] = []
    self._iteration = None

  def get_name(self) -> str:
    return 'run_metrics'

  def pre_training(self) -> None:
    from agents.run import metrics_writer
    kept_step = 0
    if os.path.exists(self._metrics.path):
      for row in metrics_writer.read_metrics(self._metrics.path):
        if row.get('phase') == 'train' and row.get('episodes', 0) <= self.current_episode:
          kept_step = max(kept_step, int(row['step']))
    self._metrics.truncate_after(kept_step)
    self._steps = kept_step
    self._metrics.tensorboard.writer('train')  # Its rows go to TensorBoard's train/.

  def begin_episode(self) -> None:
    pass

  def step(self, statistics: collectors_lib.StatisticsInstance) -> None:
    del statistics

  def end_episode(self, statistics: collectors_lib.StatisticsInstance) -> None:
    summary = dict(statistics.episode_statistics or {})
    if self._pending and summary.get('iteration') != self._iteration:
      self._flush()
    self._iteration = summary.get('iteration')
    self._steps += int(summary.get('length', statistics.step))
    self._pending.append(summary)
    self.current_episode += 1

  def end_training(self) -> None:
    self._flush()

  def _flush(self) -> None:
    if not self._pending:
      return
    row = {'step': self._steps, 'phase': 'train', 'iteration': self._iteration,
           'episodes': self.current_episode,
           'mean_score': _mean(self._pending, 'return'),
           'mean_length': _mean(self._pending, 'length')}
    names = [name for name, value in self._pending[0].items()
             if name not in ('episode', 'iteration', 'row', 'return', 'length', 'terminal')
             and isinstance(value, (int, float)) and not isinstance(value, bool)]
    row.update({name: _mean(self._pending, name) for name in names})
    self._metrics.write(row)
    self._pending = []


def _mean(rows: Sequence[Mapping[str, Any]], name: str) -> float | None:
  values = [float(row[name]) for row in rows if row.get(name) is not None]
  return sum(values) / len(values) if values else None


def train_agent(
    run_dir: str, env: Any, agent: Any, num_iterations: int, max_episode_length: int,
    seed: int | None = 0, quiet: bool = True, config: Mapping[str, Any] | None = None,
    run_name: str | None = None, run_group: str | None = None,
    collector_constructors: Sequence[collectors_lib.CollectorConstructor] = ()
) -> dict[str, Any]:
  """Trains (or resumes) `agent` in `run_dir` up to `num_iterations`; see the module
  docstring for the directory's layout.

  Args:
    run_dir: the run directory.
    env: a Gymnasium environment or a `BatchEnv` (`train_lib.make_batch_env`).
    agent: what `make_agent` returns.
    num_iterations: the iteration to train up to.
    max_episode_length: steps after which an episode is cut.
    seed: the episode seeds' seed.
    quiet: no progress bar.
    config: the run's config; its `loop.track` trackers (`agents.run.tracking`) get
      the rows too. None: no trackers.
    run_name: the run's name in the trackers (None: the run directory's name).
    run_group: the experiment the trackers file the run under.
    collector_constructors: BLE collectors beside the metrics rows.

  Returns:
    dict(step=environment steps so far, iteration=the last iteration saved,
    interrupted=bool, signal=..., mean_score=the last row's mean return, run_dir=...,
    exported=the policy directory or None).

  Raises:
    AgentStepError, CollectorError, CheckpointMismatchError: what
      `run_training_loop` raises (typed errors naming the culprit).
  """
  from agents.run import metrics_writer, run_manifest, run_metrics, session, tracking
  os.makedirs(run_dir, exist_ok=True)
  metrics = run_metrics.RunMetrics(run_dir)
  if config is not None:  # Records the session in run.yaml, as an in-graph run does.
    metrics.attach(session.start_trackers(config, run_dir, run_name, run_group))
  else:
    run_manifest.record_session(run_dir)
  status = tracking.FAILED
  try:
    result = train_lib.run_training_loop(
        run_dir, env, agent, num_iterations, max_episode_length,
        [functools.partial(MetricsCollector, metrics=metrics), *collector_constructors],
        seed=seed, progress=not quiet,
        episodes_per_iteration=None)  # One per balloon: iterations_for charges B x L.
    exported = None
    if not result['interrupted']:
      exported = export_policy(agent, os.path.join(run_dir, POLICY_DIR))
    status = tracking.INTERRUPTED if result['interrupted'] else tracking.FINISHED
  finally:
    artifacts = [path for path in (os.path.join(run_dir, 'config.yaml'),
                                   os.path.join(run_dir, POLICY_DIR)) if os.path.exists(path)]
    metrics.finish(status, artifacts if status == tracking.FINISHED else artifacts[:1])
  last = [row for row in metrics_writer.read_metrics(metrics.path)
          if row.get('phase') == 'train'] if os.path.exists(metrics.path) else []
  return dict(step=int(last[-1]['step']) if last else 0, iteration=result['iteration'],
              interrupted=result['interrupted'], signal=result['signal'],
              mean_score=metrics_writer.final_score(metrics.path) if last else None,
              run_dir=run_dir, exported=exported)


def train_run(config: Mapping[str, Any], run_dir: str, quiet: bool = True,
              run_name: str | None = None, run_group: str | None = None) -> dict[str, Any]:
  """Trains (or resumes) the run of an agent config (`agent_configs`) in `run_dir`.

  Builds the batch of `environment.num_agents` as an in-graph run does
  (`agents.training.builders.make_batch_env`) and the agent(s), writes config.yaml, then trains
  `iterations_for(loop.steps)` iterations with `train_agent`.

  Args:
    config: an agent config (`agent_configs.make` or `resume`).
    run_dir: the run directory (created when missing).
    quiet: no progress bar.
    run_name: the run's name in the trackers of `loop.track`.
    run_group: the experiment the trackers file it under.

  Returns:
    The summary of `train_agent`.

  Raises:
    ConfigError: the environment refuses its kwargs (nothing written but the folder).
    AgentSpecError: the agent does not resolve, or its constructor raises.
    AgentStepError, CollectorError, CheckpointMismatchError: what
      `run_training_loop` raises while training.
  """
  from agents import configs
  from agents.training import builders
  source = resolve_agent(config['agent']['name'])
  check_kwargs(source, config['agent']['kwargs'])
  environment = config['environment']
  try:
    batch = builders.make_batch_env({'environment': environment})
  except (TypeError, ValueError) as error:
    raise configs.ConfigError(f"Cannot build {environment['id']} with environment.kwargs = "
                              f"{dict(environment['kwargs'])}: {error}") from error
  try:
    batch.env_id = environment['id']  # What run_training_loop reads the statistics by.
    length = environment['max_episode_steps'] or episode_length(environment['id'])
    try:
      agent = make_agent(source, int(batch.action_space.n),
                         tuple(batch.observation_space.shape), len(batch),
                         config['agent']['kwargs'])
    except AgentSpecError:
      raise
    except Exception as error:  # The user's constructor: its message, on one line.
      raise AgentSpecError(f'agent {source.spec!r} raised when constructed: '
                           f'{type(error).__name__}: {error}') from error
    os.makedirs(run_dir, exist_ok=True)
    configs.save_yaml(config, os.path.join(run_dir, 'config.yaml'))
    iterations = iterations_for(config['loop']['steps'], len(batch), length)
    return train_agent(run_dir, batch, agent, iterations, length, seed=config['seed'],
                       quiet=quiet, config=config, run_name=run_name, run_group=run_group)
  finally:
    batch.close()


def episode_length(env_id: str | None) -> int:
  """Steps of an episode of `env_id`: its evaluation length (the balloon's 960), else
  BLE's default, 960."""
  from agents.evaluation import environments
  from agents.evaluation.errors import EvaluationError
  if env_id is None:  # No id: no evaluation length.
    return DEFAULT_EPISODE_LENGTH
  try:
    return int(environments.get(env_id).default_episode_length())
  except EvaluationError:  # An environment without a time limit or plug-in length.
    return DEFAULT_EPISODE_LENGTH


def export_policy(agent: Any, directory: str) -> str | None:
  """Calls the agent's optional `export(directory)` (row 0's for one agent per row);
  returns `directory`, or None when the agent has no `export`."""
  if isinstance(agent, agent_lib.AgentPerRow):
    agent = agent.agents[0]
  export = getattr(agent, 'export', None)
  if not callable(export):
    return None
  export(directory)
  return directory


def class_spec(agent_class: type) -> str:
  """`'module:qualname'` of an agent class, as `--agent` names it."""
  return f'{agent_class.__module__}:{agent_class.__qualname__}'
