"""BLE's `eval_lib`: `eval_agent` and `get_eval_suite`, thin over `agents.evaluation`.

    from agents.python_agents import eval_lib, run_helpers

    agent = run_helpers.create_agent('station_seeker', 3, (1099,))
    suite = eval_lib.get_eval_suite('small_eval')          # BLE's names and seeds
    results = eval_lib.eval_agent(agent, env, suite)       # [EvaluationResult], suite order
    results[0].time_within_radius, results[0].twr50

The episodes are flown by the project's evaluation runner (`agents.evaluation.runner`):
the environment's own slabs, its seed mapping and its per-seed metrics, so a seed's
result here equals `agents.evaluation.evaluate`'s for the same agent. What is returned
is BLE's per-seed `EvaluationResult`, field for field, mapped from the runner's results
(TWR and the failure flags are the balloon evaluation plug-in's, not recomputed here).

What is flown, by the kind of `agent`:
- a `BatchedAgent` (see `agent.is_batched`): batches of `agent.batch_size` balloons, a
  finished row starting the next seed at once;
- a single-environment `Agent` instance: one seed after another, as BLE does, since an
  agent holds the state of the episode it flies; a list of them, one per row;
- an agent class or factory, `factory(num_actions, observation_shape)`: `batch_size`
  copies (default 32) flown side by side as `AgentPerRow`, one copy per row. Each copy
  is a fresh agent: load its parameters in the factory.

Every kind is set to `AgentMode.EVAL` first (and left so, as BLE does).

Differences from BLE, each named where it happens:
- `env` names the environment rather than being stepped: a Gymnasium environment (its
  spec id), an id, or None (the environment with an evaluation plug-in, the balloon).
  The episodes run on fresh slabs of it built as `env` was (the balloon's `wind` and
  `lookahead`); for an id or None, with the suite's options;
- `render_period` is accepted and unused (render flights with `agents.scripts.visualize`);
- a flight path is a list of `SimpleBalloonState` with x and y in metres and
  `time_elapsed` a `datetime.timedelta` (BLE: `units.Distance` objects);
- each result also has `twr50` (time within 50 km over the suite's episode length, the
  project's headline) and `metrics` (all of the environment's per-seed metrics).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from agents.evaluation import environments, runner
from agents.evaluation import suites as suites_lib
from agents.evaluation.errors import EvaluationError
from agents.python_agents import agent as agent_lib

DEFAULT_COPIES = 32  # rows flown side by side for an agent factory
# BLE's per-seed metrics, read from the environment's metrics under the same names.
_BLE_METRICS = ('time_within_radius', 'out_of_power', 'envelope_burst', 'zeropressure')


@dataclasses.dataclass
class SimpleBalloonState:
  """The balloon after one step of an evaluation flight (BLE's fields)."""
  x: float  # m east of the station
  y: float  # m north of the station
  pressure: float  # Pa
  superpressure: float  # Pa
  time_elapsed: datetime.timedelta
  battery_soc: float  # state of charge in [0, 1]


@dataclasses.dataclass
class EvaluationResult:
  """The results of one evaluation flight: BLE's fields, in BLE's order, then two more.

  Attributes:
    seed: the suite seed flown.
    cumulative_reward: the sum of the rewards.
    time_within_radius: the fraction of the steps flown spent within 50 km (None for an
      environment without it).
    out_of_power: whether the episode ended because the battery ran out (None: ditto).
    envelope_burst: whether it ended because the envelope burst (None: ditto).
    zeropressure: whether it ended because the balloon lost its superpressure (None: ditto).
    final_timestep: the steps flown.
    flight_path: [SimpleBalloonState] per step, or [] when not calculated.
    twr50: the steps within 50 km over the suite's episode length (the project's
      headline; equals time_within_radius when the episode is flown to its end).
    metrics: every per-seed metric of the environment's evaluation, by name.
  """
  seed: int
  cumulative_reward: float
  time_within_radius: float | None
  out_of_power: bool | None
  envelope_burst: bool | None
  zeropressure: bool | None
  final_timestep: int
  flight_path: list[SimpleBalloonState]
  twr50: float | None = None
  metrics: dict[str, Any] = dataclasses.field(default_factory=dict)

  def __repr__(self) -> str:
    """BLE's fields and `twr50`, with the flight path and the metrics counted, not listed
    (`print(results)` stays short; the path is in `flight_path`)."""
    fields = ', '.join(f'{field.name}={getattr(self, field.name)!r}'
                       for field in dataclasses.fields(self)
                       if field.name not in ('flight_path', 'metrics'))
    return (f'EvaluationResult({fields}, flight_path=<{len(self.flight_path)} states>, '
            f'metrics=<{len(self.metrics)} metrics>)')


class EvalResultEncoder(json.JSONEncoder):
  """Encodes results for `json.dumps(results, cls=EvalResultEncoder)`, as BLE's does.

  Flight-path states become {x, y (km), pressure, superpressure, elapsed_seconds, power},
  BLE's keys and units.
  """

  def default(self, o: Any) -> Any:
    if isinstance(o, SimpleBalloonState):
      return {'x': o.x / 1000.0, 'y': o.y / 1000.0, 'pressure': o.pressure,
              'superpressure': o.superpressure,
              'elapsed_seconds': o.time_elapsed.total_seconds(), 'power': o.battery_soc}
    if dataclasses.is_dataclass(o):
      return dict(o.__dict__)  # not asdict: it would recurse into the flight path
    if isinstance(o, np.generic):
      return o.item()
    return super().default(o)


class EvaluationSuite:
  """BLE's `EvaluationSuite(seeds, max_episode_length)`, mutable as BLE's dataclass.

  `suite.seeds = suite.seeds[start:end]` cuts it, as BLE's eval.py shards a suite;
  `name` (default 'custom') and the environment's options (the balloon's `wind`, also
  readable as `suite.wind`) are optional keywords. `eval_agent` flies it as the project's
  immutable `Suite` (`to_suite()`).
  """

  def __init__(self, seeds: Iterable[int], max_episode_length: int, name: str = 'custom',
               **options: Any) -> None:
    self.seeds = list(seeds)
    self.max_episode_length = max_episode_length
    self.name = name
    self.options = dict(options)

  @classmethod
  def from_suite(cls, suite: suites_lib.Suite | EvaluationSuite) -> EvaluationSuite:
    """The mutable copy of a project `Suite` (or of another `EvaluationSuite`)."""
    return cls(suite.seeds, suite.max_episode_length, suite.name, **suite.options)

  def to_suite(self) -> suites_lib.Suite:
    """The project's `Suite` of the same seeds, length, name and options.

    Raises:
      EvaluationError: seeds or a length the project's `Suite` refuses (named).
    """
    return suites_lib.Suite(self.name, tuple(self.seeds), self.max_episode_length,
                            **self.options)

  @property
  def episode_length(self) -> int:
    """The project's name for `max_episode_length`."""
    return self.max_episode_length

  def __getattr__(self, key: str) -> Any:
    options = self.__dict__.get('options', {})
    if key in options:
      return options[key]
    raise AttributeError(f'EvaluationSuite {self.__dict__.get("name")!r} has no attribute or '
                         f'option {key!r}; its options: {sorted(options)}.')

  def replace(self, episode_length: int | None = None,
              options: Mapping[str, Any] | None = None) -> EvaluationSuite:
    """A copy with its episode length and options replaced (None: kept)."""
    return EvaluationSuite(self.seeds, self.max_episode_length if episode_length is None
                           else episode_length, self.name,
                           **(self.options if options is None else options))

  def shard(self, num_shards: int, shard_index: int) -> suites_lib.Suite:
    """Shard `shard_index` of `num_shards`: BLE's contiguous slice of the seeds."""
    return self.to_suite().shard(num_shards, shard_index)

  def __eq__(self, other: object) -> bool:
    if not isinstance(other, EvaluationSuite):
      return NotImplemented
    return (list(self.seeds), self.max_episode_length, self.name, self.options) == (
        list(other.seeds), other.max_episode_length, other.name, other.options)

  # Mutable, as BLE's dataclass (the ignore: object's stubs type __hash__ as a callable).
  __hash__ = None  # type: ignore[assignment]

  def __repr__(self) -> str:
    seeds = list(self.seeds)
    shown = seeds if len(seeds) <= 6 else [*seeds[:3], '...', *seeds[-2:]]
    options = ''.join(f', {key}={value!r}' for key, value in self.options.items())
    return (f'EvaluationSuite(name={self.name!r}, seeds=<{len(seeds)}: '
            f'{", ".join(map(str, shown))}>, max_episode_length={self.max_episode_length}'
            f'{options})')


def available_suites(env: Any = None) -> list[str]:
  """The suite names of an environment (BLE's five, then the plug-in's: the strata)."""
  return list(suites_lib.suite_names(env_id_of(env)))


def get_eval_suite(name: str, env: Any = None) -> EvaluationSuite:
  """The named suite (BLE's `tiny_eval`, `small_eval`, ...): a fresh, mutable
  `EvaluationSuite` with `.seeds` (a list) and `.max_episode_length`, as BLE's.

  Args:
    name: a name of `available_suites`, or `custom:seeds=A-B,episode_length=N,...`.
    env: the environment (see `eval_agent`); None: the balloon.

  Raises:
    EvaluationError: an unknown name (a ValueError, as BLE raises; it lists the names).
  """
  return EvaluationSuite.from_suite(suites_lib.get_suite(name, env_id_of(env)))


def env_id_of(env: Any) -> str:
  """The Gymnasium id of `env`: an environment (its spec), an id, or None (the default).

  Raises:
    EvaluationError: `env` is none of these.
  """
  if env is None:
    return environments.default_env_id()
  if isinstance(env, str):
    return env
  spec = getattr(env, 'spec', None) or getattr(getattr(env, 'unwrapped', None), 'spec', None)
  env_id = getattr(spec, 'id', None)
  if not env_id:
    raise EvaluationError(f'eval_agent: env must be a Gymnasium environment with a spec, '
                          f'its id, or None (the balloon); got {type(env).__name__}.')
  return env_id


def eval_agent(agent: Any, env: Any, eval_suite: EvaluationSuite | suites_lib.Suite | str, *,
               render_period: int = 10, calculate_flight_path: bool = True,
               batch_size: int | None = None, workers: int = 0) -> list[EvaluationResult]:
  """Evaluates an agent on a suite; returns BLE's per-seed results, in suite order.

  Args:
    agent: a `BatchedAgent`, an `Agent`, a list of `Agent`s (one per row), or a factory
      `(num_actions, observation_shape) -> Agent` (see the module docstring for how each
      is flown).
    env: the environment: a Gymnasium environment (flown as it was built: its wind, its
      observation options), its id, or None (the balloon, with the suite's options).
    eval_suite: a suite (`get_eval_suite`, `EvaluationSuite`, or an `agents.evaluation`
      `Suite`) or its name.
    render_period: BLE's; unused here.
    calculate_flight_path: keep each seed's flight path (environments that keep them).
    batch_size: the copies a factory makes (default 32); not for an agent instance.
    workers: worker processes stepping the slabs; 0 steps them in this process.

  Returns:
    [EvaluationResult], one per seed of the suite, in the suite's order.

  Raises:
    AgentError: the agent misses a required method (named).
    EvaluationError: an unknown suite or environment, a factory that fails, or actions
      that are not one integer action in the action space per row (the agent named).
  """
  del render_period
  env_id = env_id_of(env)
  environment = environments.get(env_id)
  if isinstance(eval_suite, str):
    eval_suite = get_eval_suite(eval_suite, env_id)
  if isinstance(eval_suite, EvaluationSuite):
    eval_suite = eval_suite.to_suite()
  suite, observation_kwargs = _as_built(env, environment,
                                        suites_lib.complete(eval_suite, environment))
  batched = _batched_agent(agent, environment, batch_size)
  _set_eval_mode(batched)
  _, action_space = environment.spaces
  policy = _AgentPolicy(batched, action_space)
  slabs = max(1, min(workers, batched.batch_size))
  flown = runner.fly(
      batched.get_name(), suite, suite.seeds, workers=workers if workers == 0 else slabs,
      slab_size=max(1, batched.batch_size // slabs),
      flight_paths=calculate_flight_path and bool(environment.flight_path_keys),
      policy=policy, env_id=env_id, observation_kwargs=observation_kwargs)
  by_seed = {result.seed: result for result in flown}
  return [_ble_result(by_seed[seed]) for seed in suite.seeds]


def _as_built(env: Any, environment: environments.EnvironmentEvaluation,
              suite: suites_lib.Suite) -> tuple[suites_lib.Suite, dict[str, Any] | None]:
  """The suite and observation kwargs of the environment `env` as it was built.

  For a Gymnasium environment, each suite option the environment also has as an attribute
  (the balloon's `wind`) takes the environment's value, and the keyword arguments it was
  made with that shape the observation (the balloon's `lookahead`) are kept; for an id or
  None, the suite is flown as it is.
  """
  if env is None or isinstance(env, str):
    return suite, None
  unwrapped = getattr(env, 'unwrapped', env)
  options = dict(suite.options)
  for key in options:
    value = getattr(unwrapped, key, None)
    if isinstance(value, (str, int, float, bool)):
      options[key] = value
  if options != suite.options:
    suite = suite.replace(options=environment.check_options(suite.name, options))
  spec = getattr(env, 'spec', None) or getattr(unwrapped, 'spec', None)
  return suite, environment.observation_kwargs(getattr(spec, 'kwargs', None) or {}) or None


def _batched_agent(agent: Any, environment: environments.EnvironmentEvaluation,
                   batch_size: int | None) -> agent_lib.BatchedAgent:
  """The agent as a `BatchedAgent`: itself, one instance in one row, a list one per row, or
  factory copies."""
  if isinstance(agent, (list, tuple)) and batch_size is None:
    return agent_lib.AgentPerRow(agent)
  if isinstance(agent, type) or (callable(agent) and not agent_lib.is_batched(agent)
                                 and not callable(getattr(agent, 'begin_episode', None))):
    copies = DEFAULT_COPIES if batch_size is None else batch_size
    if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
      raise EvaluationError(f'eval_agent: batch_size must be a positive integer, got '
                            f'{batch_size!r}.')
    observation_space, action_space = environment.spaces
    if not hasattr(action_space, 'n'):
      raise EvaluationError(f'eval_agent: BLE agents take discrete actions; '
                            f'{environment.env_id} has {action_space}.')
    name = getattr(agent, '__name__', type(agent).__name__)
    made = []
    for _ in range(copies):
      try:
        made.append(agent(int(action_space.n), tuple(observation_space.shape)))
      except Exception as error:  # noqa: BLE001 - the user's factory failed
        raise EvaluationError(f'eval_agent: the agent factory {name} raised '
                              f'{type(error).__name__}: {error}') from None
    return agent_lib.AgentPerRow(made)
  if isinstance(agent, agent_lib.SingleBalloonAgent) and batch_size is None:
    return agent_lib.check_agent(agent.batched_agent)  # Its whole batch, side by side.
  if batch_size is not None:
    raise EvaluationError(f'eval_agent: batch_size={batch_size} makes copies of an agent '
                          f'factory; {type(agent).__name__} is an agent instance (pass its '
                          'class or a factory to fly copies side by side).')
  return agent_lib.as_batched(agent)


def _set_eval_mode(batched: agent_lib.BatchedAgent) -> None:
  set_mode = getattr(batched, 'set_mode', None)
  if callable(set_mode):
    set_mode(agent_lib.AgentMode.EVAL)


class _AgentPolicy:
  """A `BatchedAgent` as the runner's batched policy (`agents.evaluation.policies`).

  The runner starts rows (`begin_episode`), asks actions for the whole batch
  (`__call__`) and reports each step (`feedback`). Here a row's first action comes from
  the agent's `begin_episode`, the next ones from `step` with the reward of the step
  before, and its end goes to `end_episode`; rows without an episode in flight (no seed
  left) are not shown to the agent and fly a filler action the runner does not count.
  """

  def __init__(self, batched: agent_lib.BatchedAgent, action_space: Any) -> None:
    self._agent = batched
    self._name = batched.get_name()
    self._filler = float(getattr(action_space, 'start', 0))
    self._flying = np.zeros(batched.batch_size, bool)
    self._rewards = np.zeros(batched.batch_size)
    self._starting: list[int] = []

  def begin_episode(self, indices: Iterable[int], seeds: Sequence[int] | None = None) -> None:
    del seeds
    self._starting.extend(int(row) for row in indices)

  def __call__(self, observations: np.ndarray) -> np.ndarray:
    actions = np.full(len(observations), self._filler)
    starting = np.array(sorted(self._starting), np.intp)
    self._starting = []
    self._flying[starting] = False
    stepping = np.flatnonzero(self._flying[:len(observations)])
    if len(stepping):
      actions[stepping] = self._checked('step', stepping, self._agent.step(
          self._rewards[stepping], observations[stepping], stepping))
    if len(starting):
      actions[starting] = self._checked('begin_episode', starting, self._agent.begin_episode(
          observations[starting], starting))
      self._flying[starting] = True
    return actions

  def feedback(self, rewards: np.ndarray, terminated: np.ndarray,
               truncated: np.ndarray) -> None:
    self._rewards = np.asarray(rewards, np.float64)
    ended = np.flatnonzero(np.asarray(terminated) | np.asarray(truncated))
    if len(ended):
      self._agent.end_episode(self._rewards[ended], np.asarray(terminated)[ended], ended)
      self._flying[ended] = False

  def _checked(self, method: str, rows: np.ndarray, actions: Any) -> np.ndarray:
    """The agent's actions for `rows` as floats, for the runner's check of the space."""
    try:
      return np.asarray(actions, np.float64).reshape(len(rows))
    except (TypeError, ValueError):
      raise EvaluationError(f'agent {self._name}: {method} returned {actions!r} for '
                            f'{len(rows)} rows; expected {len(rows)} integer actions.') from None


def _ble_result(result: Any) -> EvaluationResult:
  """BLE's `EvaluationResult` of a runner result (its metrics mapped, not recomputed)."""
  metrics = dict(result.metrics)
  return EvaluationResult(
      seed=result.seed, cumulative_reward=result.cumulative_reward,
      **{name: metrics.get(name) for name in _BLE_METRICS},
      final_timestep=result.final_timestep, flight_path=_flight_path(result.flight_path),
      twr50=metrics.get('twr50'), metrics=metrics)


def _flight_path(path: Mapping[str, Sequence[float]] | None) -> list[SimpleBalloonState]:
  """[SimpleBalloonState] of the runner's per-step lists (the balloon's keys), or []."""
  if not path:
    return []
  return [SimpleBalloonState(x, y, pressure, superpressure,
                             datetime.timedelta(seconds=elapsed), soc)
          for x, y, pressure, superpressure, elapsed, soc in zip(
              path['x'], path['y'], path['pressure'], path['superpressure'],
              path['elapsed_time'], path['battery_soc'])]
