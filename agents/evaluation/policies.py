"""Everything that can be evaluated, behind one batched policy interface.

A batched policy acts for a batch of B environments at once:

    policy.begin_episode(indices, seeds=None)   # rows `indices` start new episodes
    actions = policy(observations)              # [B, *observation shape] -> [B, *action shape]
    policy.feedback(rewards, terminated, truncated)   # optional: after every step, [B] each

`begin_episode` may leave out `seeds`; when it accepts them it gets the suite seeds of
the rows, so a random policy can draw from per-seed streams and a seed's result does
not depend on which row or batch it was flown in. `make_policy(spec, batch_size)` builds:

- `random`: uniformly random actions of any action space, from a stream per suite seed;
- the baselines of the environment's evaluation plug-in (the balloon's `station_seeker`,
  `random_walk`, `mpc` and `perciatelli44`, see `agents.env.balloon.evaluation`); a
  baseline that acts in the slab (`mpc`) sends placeholder actions, its slab computing
  the real ones; a baseline that declares a `spec_argument` is also flown as
  `<name>:<argument>` (`perciatelli44:<PATH>`, the weights at PATH);
- `run:<RUN_DIR>`: a trained run's deterministic policy (the newest checkpoint that
  reads, or `checkpoint`), the algorithm's network and normaliser run as one TensorFlow
  function on the whole batch;
- `savedmodel:<DIR>`: an exported `policy/` SavedModel, on the environment its record
  (`policy.yaml`) names;
- `<module>:<factory>`: a user policy. `factory(batch_size=B)` (or `factory()`) returns
  either a batched policy as above, or an agent with BLE's Agent interface
  (`begin_episode(observation)`, `step(reward, observation)`, `end_episode(reward,
  terminal)`), which `BLEAgentAdapter` flies as one agent per row (the factory is then
  called once per row, with `num_actions=N, observation_shape=(...)` when it takes them).

Which environment an agent flies is `agent_specs.resolve_env_id`'s answer; the spec
functions (`split_spec`, `resolve_env_id`, `describe_agent`, ...) live in
`agents.evaluation.agent_specs` and stay importable from here.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from agents.evaluation import agent_specs, environments
from agents.evaluation.agent_specs import GENERIC_AGENTS as GENERIC_AGENTS
from agents.evaluation.agent_specs import baseline_parts as baseline_parts
from agents.evaluation.agent_specs import describe_agent as describe_agent
from agents.evaluation.agent_specs import observation_kwargs as observation_kwargs
from agents.evaluation.agent_specs import resolve_checkpoint as resolve_checkpoint
from agents.evaluation.agent_specs import resolve_env_id as resolve_env_id
from agents.evaluation.agent_specs import run_env_id as run_env_id
from agents.evaluation.agent_specs import saved_model_record as saved_model_record
from agents.evaluation.agent_specs import split_spec as split_spec
from agents.evaluation.agent_specs import suite_defaults as suite_defaults
from agents.evaluation.errors import EvaluationError

if TYPE_CHECKING:
  import gymnasium


class BatchedPolicy(Protocol):
  """The batched policy interface (see the module docstring); `feedback` is optional."""

  def begin_episode(self, indices: Sequence[int] | np.ndarray,
                    seeds: Sequence[int] | None = None) -> None:
    """Rows `indices` start new episodes (`seeds`: their suite seeds, when accepted)."""

  def __call__(self, observations: np.ndarray) -> np.ndarray:
    """Actions [B, *action shape] for observations [B, *observation shape]."""


class RandomPolicy:
  """Uniformly random actions of a Discrete, MultiDiscrete, MultiBinary or Box space.

  Row i's actions for the whole episode are drawn at `begin_episode` from a generator
  seeded by (seed, suite seed), so a seed's episode does not depend on its row or batch.
  """

  def __init__(self, action_space: gymnasium.Space, batch_size: int, episode_length: int,
               seed: int = 0) -> None:
    self._draw = _uniform_draw(action_space)
    self._seed = seed
    self._length = episode_length
    self._step = np.zeros(batch_size, np.intp)
    self._rows = np.arange(batch_size)
    self._fresh = np.random.default_rng([seed, 2 ** 31])  # rows begun without a seed
    self._actions = np.zeros((batch_size, episode_length, *action_space.shape),  # type: ignore[misc]  # a shaped space
                             action_space.dtype)

  def begin_episode(self, indices: Sequence[int] | np.ndarray,
                    seeds: Sequence[int] | None = None) -> None:
    row_seeds = [None] * len(indices) if seeds is None else seeds
    for row, seed in zip(indices, row_seeds):
      generator = np.random.default_rng(
          self._fresh.integers(2 ** 63) if seed is None else [self._seed, int(seed)])
      self._actions[row] = self._draw(generator, self._length)
      self._step[row] = 0

  def __call__(self, observations: np.ndarray) -> np.ndarray:
    step = np.minimum(self._step, self._length - 1)
    self._step += 1
    return self._actions[self._rows, step]


def _uniform_draw(space: Any) -> Callable[[np.random.Generator, int], np.ndarray]:
  """A function (generator, count) -> `count` uniform actions of `space`.

  Raises:
    EvaluationError: a space the random policy does not draw from (named).
  """
  from gymnasium import spaces
  if isinstance(space, spaces.Discrete):
    return lambda generator, count: space.start + generator.integers(0, space.n, count)
  if isinstance(space, spaces.MultiDiscrete):
    return lambda generator, count: space.start + generator.integers(
        0, space.nvec, (count, *space.shape))
  if isinstance(space, spaces.MultiBinary):
    return lambda generator, count: generator.integers(0, 2, (count, *space.shape))
  if isinstance(space, spaces.Box) and space.is_bounded():
    return lambda generator, count: generator.uniform(space.low, space.high,
                                                      (count, *space.shape))
  raise EvaluationError(f'the random agent draws from bounded Discrete, MultiDiscrete, '
                        f'MultiBinary or Box action spaces, not {space}.')


class TensorFlowPolicy:
  """A deterministic TensorFlow policy over the whole batch, recurrent state kept per row.

  Wraps an object with `action(observ)` (feed-forward) or `action(observ, state)` and
  `initial_state(n)` (recurrent): an `export.ExportedPolicy` built from a restored run, or
  a loaded SavedModel.
  """

  def __init__(self, model: Any, batch_size: int, recurrent: bool) -> None:
    self._model = model
    self._recurrent = recurrent
    self._state: np.ndarray | None = None
    if recurrent:
      self._initial = model.initial_state(1).numpy()
      self._state = np.repeat(self._initial, batch_size, axis=0)

  def begin_episode(self, indices: Sequence[int] | np.ndarray,
                    seeds: Sequence[int] | None = None) -> None:
    del seeds
    if self._recurrent:
      self._state[np.asarray(indices, np.intp)] = self._initial  # type: ignore[index]  # set when recurrent

  def __call__(self, observations: np.ndarray) -> np.ndarray:
    observations = np.asarray(observations, np.float32)
    if self._recurrent:
      out = self._model.action(observations, self._state)
      self._state = out['state'].numpy()
      return out['action'].numpy()
    return self._model.action(observations).numpy()


class BLEAgentAdapter:
  """Flies agents written against BLE's Agent interface, one agent per batch row.

  Row i's agent sees BLE's calls in BLE's order: `begin_episode(observation)` for the
  first action, `step(reward, observation)` for the next ones and `end_episode(reward,
  terminal)` when the episode ends.
  """

  def __init__(self, agents: Sequence[Any]) -> None:
    self._agents = list(agents)
    self._fresh = np.ones(len(self._agents), bool)
    self._rewards = np.zeros(len(self._agents))
    for agent in self._agents:
      set_mode = getattr(agent, 'set_mode', None)
      if callable(set_mode):
        try:
          set_mode('eval')
        except Exception:  # noqa: BLE001 - BLE's AgentMode enum; the string is a best effort
          pass

  def begin_episode(self, indices: Sequence[int] | np.ndarray,
                    seeds: Sequence[int] | None = None) -> None:
    del seeds
    self._fresh[np.asarray(indices, np.intp)] = True

  def __call__(self, observations: np.ndarray) -> np.ndarray:
    actions = np.empty(len(self._agents), np.int64)
    for row, agent in enumerate(self._agents):
      if self._fresh[row]:
        actions[row] = agent.begin_episode(observations[row])
        self._fresh[row] = False
      else:
        actions[row] = agent.step(float(self._rewards[row]), observations[row])
    return actions

  def feedback(self, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray) -> None:
    self._rewards = np.asarray(rewards, np.float64)
    for row in np.flatnonzero(np.asarray(terminated) | np.asarray(truncated)):
      self._agents[row].end_episode(float(self._rewards[row]), bool(terminated[row]))


def is_ble_agent(obj: Any) -> bool:
  """Whether `obj` has BLE's Agent interface (rather than the batched one)."""
  return all(callable(getattr(obj, name, None))
             for name in ('begin_episode', 'step', 'end_episode')) and not callable(obj)


def make_policy(spec: str, batch_size: int, episode_length: int | None = None,
                checkpoint: str | None = None, env_id: str | None = None) -> BatchedPolicy:
  """The batched policy of an agent spec (see the module docstring).

  Args:
    spec: the agent spec.
    batch_size: rows of the batch.
    episode_length: steps of an episode (None: the environment's default).
    checkpoint: for `run:`, a checkpoint name or prefix (None: the newest that reads).
    env_id: the environment flown (None: see `resolve_env_id`).

  Raises:
    EvaluationError: an unknown agent, a run without a checkpoint or of another
      environment, a SavedModel that does not load or takes other observations, or a
      factory that cannot be imported or does not return a policy.
  """
  return policy_builder(spec, episode_length, checkpoint, env_id)(batch_size)


def policy_builder(spec: str, episode_length: int | None = None, checkpoint: str | None = None,
                   env_id: str | None = None) -> Callable[[int], BatchedPolicy]:
  """A function `batch_size -> batched policy` for an agent spec (arguments as `make_policy`).

  What is costly to load (a run's checkpoint, a SavedModel, a factory's module) is loaded
  here, once; each call then builds a policy of its own with its own per-row state, so
  several batches (the fleets of `runner.fly`) can be flown side by side.

  Raises:
    EvaluationError: as `make_policy`, here or at the first call.
  """
  kind, rest = split_spec(spec)
  environment = environments.get(resolve_env_id(spec, env_id))
  episode_length = episode_length or environment.default_episode_length()
  if kind == 'baseline':
    if rest in GENERIC_AGENTS:
      action_space = environment.spaces[1]
      return lambda batch_size: RandomPolicy(action_space, batch_size, episode_length)
    name, argument = baseline_parts(rest)
    if name not in environment.baselines:
      raise EvaluationError(f'agent {name!r} is a baseline of '
                            f'{environments.baseline_env_id(name)}, not of {environment.env_id}.')
    baseline = environment.baselines[name]
    agent_specs.baseline_description(rest)  # refuses missing or bad weights here, in one line
    arguments = () if argument is None else (argument,)
    return lambda batch_size: baseline(batch_size, episode_length, *arguments)
  if kind == 'run':
    model = _run_model(rest, checkpoint, environment.env_id)
  elif kind == 'savedmodel':
    model = _saved_model(rest, environment)
  else:
    factory = _import_factory(rest)
    return lambda batch_size: _factory_policy(factory, rest, batch_size, environment)
  recurrent = hasattr(model, 'initial_state')
  return lambda batch_size: TensorFlowPolicy(model, batch_size, recurrent)


def _run_model(run_dir: str, checkpoint: str | None, env_id: str | None) -> Any:
  """The deterministic policy module of a run's checkpoint (what it exports as policy/).

  For PPO: the network and the observation normaliser, any batch size, in memory.
  """
  path = resolve_checkpoint(run_dir, checkpoint)
  trained_on = run_env_id(run_dir)
  if trained_on != env_id:
    raise EvaluationError(f'run directory {run_dir} trained on {trained_on}, not {env_id}.')
  from agents.training import builders
  try:
    _, algorithm, observation_space, _ = builders.restore_algorithm(
        run_dir, path, is_training=False)
  except (ValueError, FileNotFoundError) as error:  # ConfigError is a ValueError
    raise EvaluationError(f'run:{run_dir}: {error}') from None
  return algorithm.export_policy(observation_space)


def load_saved_model(path: str) -> Any:
  """Loads an exported policy (any environment); EvaluationError unless it has `action`."""
  if not os.path.exists(os.path.join(path, 'saved_model.pb')):
    raise EvaluationError(f'savedmodel:{path} is not a SavedModel directory (no '
                          'saved_model.pb).')
  import tensorflow as tf
  model = tf.saved_model.load(path)
  if not hasattr(model, 'action'):
    raise EvaluationError(f'savedmodel:{path} has no `action` function (export it with '
                          'agents.scripts.export).')
  return model


def _saved_model(path: str, environment: environments.EnvironmentEvaluation) -> Any:
  """`load_saved_model`, refusing a model that does not take the environment's observations."""
  model = load_saved_model(path)
  options = observation_kwargs(f'savedmodel:{path}', environment)
  check_observation_shape(model, path, environment.observation_space(options),
                          environment.env_id)
  return model


def check_observation_shape(model: Any, path: str, observation_space: Any,
                            environment: Any) -> None:
  """Refuses a SavedModel whose `action` takes observations of another shape.

  Args:
    model: the loaded SavedModel.
    path: its directory, for the message.
    observation_space: the environment's observation space (or its shape).
    environment: what the environment is, for the message.

  Raises:
    EvaluationError: naming both shapes.
  """
  expected = tuple(getattr(observation_space, 'shape', observation_space))
  shape = _input_shape(model.action)
  if shape is not None and tuple(shape[1:]) != expected:
    raise EvaluationError(f'savedmodel:{path} takes observations of shape {tuple(shape)}, not '
                          f'[B, {", ".join(map(str, expected))}] ({environment}).')


def _input_shape(function: Any) -> list[int | None] | None:
  """The observation shape of a loaded SavedModel function, or None if unknown."""
  try:
    args, _ = function.concrete_functions[0].structured_input_signature
    return args[0].shape.as_list()
  except (AttributeError, IndexError, TypeError):
    return None


def _import_factory(spec: str) -> Callable[..., Any]:
  module_name, _, name = spec.partition(':')
  try:
    module = importlib.import_module(module_name)
  except Exception as error:  # noqa: BLE001 - any import failure is the user's input
    raise EvaluationError(f'--agent {spec}: cannot import module {module_name!r}: '
                          f'{type(error).__name__}: {error}') from None
  factory = getattr(module, name, None)
  if not callable(factory):
    raise EvaluationError(f'--agent {spec}: module {module_name!r} has no callable {name!r}.')
  return factory


def _factory_policy(factory: Callable[..., Any], spec: str, batch_size: int,
                    environment: environments.EnvironmentEvaluation) -> BatchedPolicy:
  observation_space, action_space = environment.spaces
  offered = dict(batch_size=batch_size, observation_shape=tuple(observation_space.shape))
  if hasattr(action_space, 'n'):
    offered['num_actions'] = int(action_space.n)
  first = _call_factory(factory, spec, **offered)
  if is_ble_agent(first):
    rest = [_call_factory(factory, spec, **offered) for _ in range(batch_size - 1)]
    return BLEAgentAdapter([first, *rest])
  if not (callable(first) and callable(getattr(first, 'begin_episode', None))):
    raise EvaluationError(
        f'--agent {spec}: the factory returned a {type(first).__name__}, which is neither a '
        'batched policy (callable, with begin_episode(indices)) nor a BLE Agent '
        '(begin_episode, step, end_episode).')
  return first


def _call_factory(factory: Callable[..., Any], spec: str, **offered: Any) -> Any:
  parameters: Mapping[str, inspect.Parameter]
  try:
    parameters = inspect.signature(factory).parameters
  except (TypeError, ValueError):
    parameters = {}
  takes_all = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
  kwargs = {key: value for key, value in offered.items() if takes_all or key in parameters}
  try:
    return factory(**kwargs)
  except Exception as error:  # noqa: BLE001 - the user's factory failed
    raise EvaluationError(f'--agent {spec}: the factory raised {type(error).__name__}: '
                          f'{error}') from None


def check_actions(actions: Any, batch_size: int, spec: str,
                  action_space: gymnasium.Space) -> np.ndarray:
  """Actions as an array [B, *action shape] of the space's dtype.

  Integral floats are accepted for integer spaces.

  Raises:
    EvaluationError: actions that are not an array, of another shape, or outside an
      integer action space (naming the agent).
  """
  try:
    actions = np.asarray(actions)
  except Exception as error:  # noqa: BLE001
    raise EvaluationError(f'--agent {spec} returned actions that are not an array: '
                          f'{error}') from None
  expected = (batch_size, *action_space.shape)  # type: ignore[misc]  # a shaped space
  if actions.shape != expected:
    raise EvaluationError(f'--agent {spec} returned actions of shape {actions.shape} for '
                          f'{batch_size} observations; expected {expected}.')
  dtype = np.dtype(action_space.dtype)
  if dtype.kind not in 'iu':
    return actions.astype(dtype)
  if actions.dtype.kind == 'f' and np.all(np.isfinite(actions)) and np.all(
      actions == np.round(actions)):
    actions = actions.astype(np.int64)
  if actions.dtype.kind not in 'iu' or not all(
      action_space.contains(row) for row in actions.astype(dtype)):
    bad = actions.ravel()[:5].tolist()
    raise EvaluationError(f'--agent {spec} returned actions {bad}... of dtype {actions.dtype}; '
                          f'expected actions of {action_space}.')
  return actions.astype(dtype)


def begin_episode(policy: BatchedPolicy, indices: Sequence[int] | np.ndarray,
                  seeds: Sequence[int] | None) -> None:
  """Calls `policy.begin_episode(indices, seeds=...)`, or without seeds if not accepted."""
  parameters: Mapping[str, inspect.Parameter]
  try:
    parameters = inspect.signature(policy.begin_episode).parameters
  except (TypeError, ValueError):
    parameters = {}
  if 'seeds' in parameters or any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
    policy.begin_episode(indices, seeds=seeds)
  else:
    policy.begin_episode(indices)
