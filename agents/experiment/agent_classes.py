"""The agent classes an experiment fits (rlberry's `agent_class`), and their environments.

An agent class, in rlberry's sense, is any class with

    class MyAgent:
      def __init__(self, env, **init_kwargs): ...   # may also name seed, output_dir, eval_env
      def fit(self, budget, **fit_kwargs): ...       # trains for `budget` more
      def eval(self, **eval_kwargs): ...             # -> float, higher is better
      def save(self, filename): ...                  # optional: -> the path it wrote
      @classmethod
      def load(cls, filename, **init_kwargs): ...    # optional: -> the saved agent

A subclass of `agents.experiment.Agent` (rlberry's base class, `agent_base.py`) gets
what rlberry's manager gives its agents: `env` (built and seeded), `eval_env` (the pair),
`copy_env=False`, `seeder` (the fit's seed), `output_dir` (the fit's run directory), its
writer's arguments and the threads' shared data. Any other class gets `seed`,
`output_dir` and `eval_env` (built) only when its constructor names them.

A class with BLE's Agent interface (`agents.python_agents.agent`: `begin_episode`,
`step`, `end_episode`, built as `(num_actions, observation_shape)`) is an agent class
too: it is fitted through `agents.python_agents.fit_adapter.FitAdapter`, whose `fit`
runs `run_training_loop` and whose `eval` flies an evaluation suite.

An environment is `(id_or_constructor, kwargs)`, as rlberry's `train_env`: a Gymnasium
id (made with `gymnasium.make(id, **kwargs)`) or a callable called with `**kwargs`.
The manager builds the training environment (seeded with the fit's seed) and hands
the agent the instance.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from agents import plugins
from agents.experiment import agent_base
from agents.experiment.errors import ExperimentError
from agents.python_agents import agent as agent_lib

REQUIRED_METHODS = ('fit', 'eval')
# Passed to an agent's constructor only when it names them (rlberry passes its own
# equivalents, `seeder` and `output_dir`, to every agent through its base class).
PASSED_WHEN_NAMED = ('seed', 'output_dir', 'eval_env')

EnvMaker: TypeAlias = str | Callable[..., Any] | None
"""A Gymnasium id, or a callable returning the environment (None: no environment)."""
EnvSpec: TypeAlias = tuple[EnvMaker, Mapping[str, Any] | None]
"""An environment as rlberry's `train_env`: `(id_or_constructor, kwargs)`."""


def is_agent_class(value: object) -> bool:
  """Whether `value` is a class (what tells `ExperimentManager(agent_class)` from a config)."""
  return inspect.isclass(value)


def is_ble_agent_class(agent_class: type) -> bool:
  """Whether `agent_class` follows BLE's Agent interface rather than rlberry's fit/eval."""
  if issubclass(agent_class, (agent_lib.Agent, agent_lib.BatchedAgent)):
    return True
  has_ble_methods = all(callable(getattr(agent_class, method, None))
                        for method in agent_lib.REQUIRED_METHODS)
  return has_ble_methods and not callable(getattr(agent_class, 'fit', None))


def check_agent_class(agent_class: Any) -> type:
  """Checks that `agent_class` is a class with rlberry's or BLE's methods.

  Raises:
    ExperimentError: naming the class and the first method it lacks.
  """
  if not is_agent_class(agent_class):
    raise ExperimentError(f'agent_class must be a class, got {agent_class!r}.')
  if is_ble_agent_class(agent_class):
    return agent_class
  abstract = sorted(getattr(agent_class, '__abstractmethods__', ()))
  if abstract:
    raise ExperimentError(
        f'agent_class {agent_class.__name__} does not implement {", ".join(abstract)}() '
        f'(abstract in {agent_class.__mro__[1].__name__}); an agent class needs '
        'fit(budget, **fit_kwargs) and eval(**eval_kwargs).')
  for method in REQUIRED_METHODS:
    if not callable(getattr(agent_class, method, None)):
      raise ExperimentError(
          f'agent_class {agent_class.__name__} has no callable {method}(); an agent class '
          f'needs fit(budget, **fit_kwargs) and eval(**eval_kwargs) (rlberry\'s), or '
          f'{", ".join(agent_lib.REQUIRED_METHODS)} (BLE\'s Agent interface).')
  return agent_class


def class_path(value: Any) -> str:
  """`'module:qualname'` of a class or function (how the manifest records it)."""
  module = getattr(value, '__module__', None)
  qualname = getattr(value, '__qualname__', None)
  if not module or not qualname:
    return repr(value)
  return f'{module}:{qualname}'


def import_path(text: str, what: str) -> Any:
  """The object a `'module:qualname'` names.

  Raises:
    ExperimentError: the module or the name does not exist (named with `what`).
  """
  try:
    return plugins.import_path(str(text), what)
  except plugins.PluginError as error:
    raise ExperimentError(str(error)) from None


def check_env(env: Any, what: str) -> tuple[EnvMaker, dict[str, Any]]:
  """`(id_or_constructor, kwargs)` checked; returns it as a tuple with a dict of kwargs.
  `(None, None)` (rlberry's default `train_env`) is an agent without an environment.

  Raises:
    ExperimentError: `env` is not such a pair (named with `what`).
  """
  if not isinstance(env, (tuple, list)) or len(env) != 2:
    raise ExperimentError(f'{what} must be (id_or_constructor, kwargs), got {env!r}.')
  maker, kwargs = env
  if maker is None and not kwargs:  # rlberry's default: an agent without an environment.
    return None, {}
  if not isinstance(maker, str) and not callable(maker):
    raise ExperimentError(f'{what}: {maker!r} is neither a Gymnasium id nor a callable.')
  if kwargs is not None and not isinstance(kwargs, dict):
    raise ExperimentError(f'{what}: kwargs must be a dict or None, got {kwargs!r}.')
  return maker, dict(kwargs or {})


def make_env(env: EnvSpec, seed: int | None = None) -> Any:
  """Builds the environment of `(id_or_constructor, kwargs)`, seeded when it can be.

  Args:
    env: `(gymnasium id or callable, kwargs)`.
    seed: an int; a Gymnasium environment is reset with it and its action space seeded.

  Returns:
    The environment.
  """
  return agent_base.make_env(check_env(env, 'env'), None if seed is None else int(seed))


def _parameters(function: Callable[..., Any]) -> Mapping[str, inspect.Parameter]:
  try:
    return inspect.signature(function).parameters
  except (TypeError, ValueError):
    return {}


def passed_when_named(agent_class: type, **candidates: Any) -> dict[str, Any]:
  """The `candidates` whose names `agent_class`'s constructor declares (all of them when
  it takes `**kwargs` and derives from `Agent`, which takes them all)."""
  parameters = _parameters(agent_class.__init__)  # type: ignore[misc]  # The class's own.
  takes_all = any(p.kind == p.VAR_KEYWORD for p in parameters.values()) and \
      is_base_agent_class(agent_class)
  return {key: value for key, value in candidates.items() if takes_all or key in parameters}


def is_base_agent_class(agent_class: Any) -> bool:
  """Whether `agent_class` derives from `agents.experiment.Agent` (rlberry's base class)."""
  return inspect.isclass(agent_class) and issubclass(agent_class, agent_base.Agent)


def construct(agent_class: type, env: Any, init_kwargs: Mapping[str, Any],
              seed: int | None = None, output_dir: str | None = None,
              eval_env: EnvSpec | None = None,
              base_kwargs: Mapping[str, Any] | None = None) -> Any:
  """An agent of `agent_class` (a BLE class through its fit adapter) on `env`.

  Args:
    agent_class: a checked agent class.
    env: the built training environment.
    init_kwargs: the constructor's keyword arguments.
    seed: the fit's seed (passed when the constructor names `seed`).
    output_dir: the fit's run directory (passed when it names `output_dir`).
    eval_env: `(id_or_constructor, kwargs)` of the evaluation environment, built and
      passed when the constructor names `eval_env` (a subclass of `Agent` builds it).
    base_kwargs: the arguments only a subclass of `Agent` gets (its writer's arguments,
      the threads' shared data); see `base_agent_kwargs`.

  Raises:
    ExperimentError: the constructor refused the arguments (its message, with the class).
  """
  builder, kwargs = _builder(agent_class, init_kwargs, seed, output_dir, eval_env, base_kwargs)
  try:
    return builder(env=env, **kwargs)
  except TypeError as error:
    raise ExperimentError(f'agent_class {agent_class.__name__}: {error}') from error


def load(agent_class: type, filename: str, env: Any, init_kwargs: Mapping[str, Any],
         seed: int | None = None, output_dir: str | None = None,
         eval_env: EnvSpec | None = None, base_kwargs: Mapping[str, Any] | None = None) -> Any:
  """The agent `load(filename, env=..., **init_kwargs)` restores (rlberry's classmethod),
  or None when the class has no `load`; arguments as `construct`."""
  builder, kwargs = _builder(agent_class, init_kwargs, seed, output_dir, eval_env, base_kwargs)
  loader = getattr(builder, 'load', None)
  if not callable(loader):
    return None
  return loader(filename, env=env, **kwargs)


def check_init_kwargs(agent_class: type, init_kwargs: Mapping[str, Any],
                      what: str = 'init_kwargs') -> None:
  """Checks that the constructor takes `env` and `init_kwargs`, before any fit runs.

  Raises:
    ExperimentError: naming the class and the argument it refuses or misses.
  """
  builder, kwargs = _builder(agent_class, init_kwargs)
  if builder is not agent_class:
    builder.check_init_kwargs(agent_class, kwargs)
    return
  try:
    inspect.signature(builder).bind(env=None, **kwargs)
  except TypeError as error:
    raise ExperimentError(f'{what} of agent_class {agent_class.__name__}: {error}.') from None
  except ValueError:
    return  # A constructor without a signature (a builtin): nothing to check.


def _builder(agent_class: type, init_kwargs: Mapping[str, Any], seed: int | None = None,
             output_dir: str | None = None, eval_env: EnvSpec | None = None,
             base_kwargs: Mapping[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
  """(what to build, its kwargs): the class itself, or the fit adapter of a BLE class; with
  the fit's seed, run directory and evaluation environment when the builder names them
  (rlberry's set of arguments for a subclass of `Agent`)."""
  if is_ble_agent_class(agent_class):
    from agents.python_agents import fit_adapter
    builder: type = fit_adapter.FitAdapter
    kwargs = dict(init_kwargs, agent_class=agent_class)
  else:

    builder, kwargs = agent_class, dict(init_kwargs)
  if is_base_agent_class(builder):
    candidates = dict(seeder=seed, output_dir=output_dir, eval_env=eval_env, copy_env=False,
                      **(base_kwargs or {}))
    named = passed_when_named(builder, **candidates)
  else:
    named = passed_when_named(builder, seed=seed, output_dir=output_dir, eval_env=eval_env)
    if named.get('eval_env') is not None:
      named['eval_env'] = make_env(named['eval_env'], seed)
  named.update({key: value for key, value in kwargs.items() if key in named})  # Theirs win.
  kwargs.update({key: value for key, value in named.items() if value is not None})
  return builder, kwargs


def record(value: Any) -> Any:
  """`value` as plain YAML data for the manifest: classes and functions as
  `'module:qualname'`, anything else that is not plain data as its repr."""
  if isinstance(value, dict):
    return {str(key): record(item) for key, item in value.items()}
  if isinstance(value, (list, tuple)):
    return [record(item) for item in value]
  if value is None or isinstance(value, (bool, int, float, str)):
    return value
  if hasattr(value, 'item') and not isinstance(value, bytes):  # NumPy scalars.
    return value.item()
  if inspect.isclass(value) or inspect.isroutine(value):
    return class_path(value)
  return repr(value)


def env_to_record(env: EnvSpec | None) -> dict[str, Any] | None:
  """The manifest's form of an environment pair: `{id: ..., kwargs: ...}` or
  `{constructor: 'module:name', kwargs: ...}`; None stays None."""
  if env is None:
    return None
  maker, kwargs = env
  if maker is None:
    return dict(constructor=None, kwargs={})
  if isinstance(maker, str):
    return dict(id=maker, kwargs=record(kwargs))
  return dict(constructor=class_path(maker), kwargs=record(kwargs))


def env_from_record(data: Mapping[str, Any] | None, what: str) -> EnvSpec | None:
  """The environment pair `env_to_record` wrote (the constructor imported again)."""
  if data is None:
    return None
  if 'id' in data:
    return data['id'], dict(data.get('kwargs') or {})
  if data.get('constructor') is None:
    return None, {}
  return import_path(data['constructor'], what), dict(data.get('kwargs') or {})
