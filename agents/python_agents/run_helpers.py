"""BLE's `utils/run_helpers.py`: `bind_gin_variables` and `create_agent`, by BLE's names.

    from agents.python_agents import run_helpers

    run_helpers.bind_gin_variables('quantile')     # its gin file (needs gin-config)
    agent = run_helpers.create_agent('quantile', 3, (1099,))
    agent.begin_episode(observation)               # BLE's single-balloon methods

The names are BLE 1.0.1's registry's and the project's (`agent_registry`): `random`,
`mlp`, `dqn`, `perciatelli44`, `quantile`, `finetune_perciatelli`, `station_seeker`,
`random_walk`, `balloon_ppo` and the other environments' baselines. Every agent
`create_agent` returns has BLE's single-balloon methods; the batched `quantile` agent
comes as a `SingleBalloonAgent`, which `run_training_loop` flies batched on a batch of
its `num_envs`.

`bind_gin_variables` parses the agent's default gin file (or `agent_gin_file`), the
`additional_gin_files` and the `gin_bindings` with the `gin-config` package, as BLE's
does, so the built-in agents and a BLE agent decorated with `@gin.configurable` get
their bound values. `create_agent` also takes keyword arguments for the constructor,
which take precedence over gin's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from agents.env.balloon import ble_names
from agents.evaluation.errors import EvaluationError
from agents.python_agents import agent_registry, policy_agents

# The registry's and the policy agents' names, where earlier code found them.
UnknownAgentError = agent_registry.UnknownAgentError
agent_names = agent_registry.agent_names
BALLOON_PPO, SHIPPED_MODELS = policy_agents.BALLOON_PPO, policy_agents.SHIPPED_MODELS
PolicyAgent, SavedModelAgent = policy_agents.PolicyAgent, policy_agents.SavedModelAgent
# BLE's wind fields by name ('simple', 'generative'): factories `gymnasium.make` takes as
# `wind_field_factory` (agents.env.balloon.ble_names).
get_wind_field_factory = ble_names.get_wind_field_factory

# The directory holding the `agents` package: the default gin files' paths start there.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GIN_EXTRA = "pip install 'agents[gin]' (the gin-config package)"


class GinConfigError(ValueError):
  """A gin file or binding that does not parse or bind (the message names it)."""


def get_agent_gin_file(agent_name: str, gin_file: str | None) -> str | None:
  """`gin_file` when given, else agent `agent_name`'s default gin file (None if it has none).

  Raises:
    UnknownAgentError: no `gin_file` and an unknown agent name.
  """
  return agent_registry.get_default_gin_config(agent_name) if gin_file is None else gin_file


def create_agent(agent_name: str, num_actions: int, observation_shape: Sequence[int],
                 **kwargs: Any) -> Any:
  """Creates an agent by name, with BLE's single-balloon methods.

  Args:
    agent_name: a name of `agent_names()`.
    num_actions: int, the number of discrete actions.
    observation_shape: the shape of one observation.
    **kwargs: passed on to the agent's constructor (over gin's bindings).

  Returns:
    An `Agent` (`quantile`: a `SingleBalloonAgent` over the batched `QuantileAgent`).

  Raises:
    UnknownAgentError: an unknown name (the message lists the names).
    EvaluationError: `balloon_ppo` when the shipped model is missing (an installed wheel
      does not hold `models/`) or takes other observations.
    ValueError: `perciatelli44` when its weights are missing or are not its graph (the
      message names the command that fetches them); a bad hyperparameter (named).
  """
  constructor = agent_registry.agent_constructor(agent_name)
  if agent_name == 'balloon_ppo' and not os.path.isdir(kwargs.get('path', BALLOON_PPO)):
    raise EvaluationError(f'balloon_ppo flies the model shipped in {BALLOON_PPO}, which is '
                          'not here (a wheel does not hold models/; use a source checkout, or '
                          'pass path=<an exported policy/ folder>).')
  return constructor(num_actions, observation_shape=observation_shape, **kwargs)


def bind_gin_variables(agent: str, agent_gin_file: str | None = None,
                       gin_bindings: Sequence[str] = (),
                       additional_gin_files: Sequence[str] = ()) -> None:
  """Binds the gin configuration of an experiment, as BLE's `bind_gin_variables`.

  Parses `agent_gin_file` (default: agent `agent`'s default gin file, if it has one),
  then `additional_gin_files`, then `gin_bindings`, in one call of gin's
  `parse_config_files_and_bindings`, which locks gin's configuration as BLE's does
  (`gin.clear_config()` unlocks it). The default gin files' paths are absolute, so they
  are found from any directory, in an installed package too; a relative path that is not
  found in the working directory is looked up under the directory holding the `agents`
  package (`agents/python_agents/configs/mlp.gin` names the package's file).

  Args:
    agent: the agent's name (any name when `agent_gin_file` is given).
    agent_gin_file: a gin file replacing the agent's default one.
    gin_bindings: bindings such as `'QuantileAgent.learning_rate = 1e-4'`.
    additional_gin_files: further gin files.

  Raises:
    UnknownAgentError: no `agent_gin_file` and an unknown agent name.
    GinConfigError: a gin file or binding that does not parse or names an unknown
      configurable or parameter (the message names the file or the binding).
    ImportError: gin-config is not installed (the message says how to install it).
  """
  gin_files = [resolve_gin_file(path) for path in [get_agent_gin_file(agent, agent_gin_file),
                                                   *additional_gin_files] if path is not None]
  if isinstance(gin_bindings, str):
    gin_bindings = [gin_bindings]
  gin = _gin()
  gin.add_config_file_search_path(PACKAGE_PARENT)
  try:
    with _gin_lookups_quiet():
      gin.parse_config_files_and_bindings(gin_files, bindings=gin_bindings, skip_unknown=False)
  except Exception as error:  # noqa: BLE001 - named below, in one line
    raise _culprit(gin, gin_files, gin_bindings, error) from None


def resolve_gin_file(path: str) -> str:
  """`path` if it exists as given, else its copy under the directory holding `agents` (the
  package's own gin files: `agents/python_agents/configs/...`), else `path` unchanged."""
  if os.path.isabs(path) or os.path.isfile(path):
    return path
  under_package = os.path.join(PACKAGE_PARENT, path)
  return under_package if os.path.isfile(under_package) else path


def _culprit(gin: Any, gin_files: Sequence[str], gin_bindings: Iterable[str],
             error: BaseException) -> GinConfigError:
  """The `GinConfigError` naming the gin file or binding that made `error`: parses them
  again one by one (not locking the configuration) and names the first that fails."""
  for path in gin_files:
    if not os.path.isfile(path):
      return GinConfigError(f'gin file {path}: no such file (nor under {PACKAGE_PARENT}).')
  try:
    for path in gin_files:
      _parse(gin, f'gin file {path}', [path], [])
    for binding in gin_bindings:
      _parse(gin, f'gin binding {binding!r}', [], [binding])
  except GinConfigError as named:
    return named
  return GinConfigError(f'gin configuration: {type(error).__name__}: {_first_line(error)}')


def _gin() -> Any:
  if agent_registry.gin is None:
    raise ImportError(f'bind_gin_variables needs gin-config: {GIN_EXTRA}.')
  return agent_registry.gin


def _parse(gin: Any, what: str, files: Sequence[str], bindings: Sequence[str]) -> None:
  """Parses gin files or bindings, refusing an error in one line naming `what`."""
  try:
    with _gin_lookups_quiet():
      gin.parse_config_files_and_bindings(files, bindings, finalize_config=False,
                                          skip_unknown=False)
  except (ValueError, SyntaxError, TypeError, KeyError, OSError, ImportError) as error:
    raise GinConfigError(f'{what}: {_first_line(error)}') from None
  except Exception as error:  # noqa: BLE001 - gin's tokenizer raises its own errors
    raise GinConfigError(f'{what}: does not parse ({type(error).__name__}: '
                         f'{_first_line(error)})') from None


@contextlib.contextmanager
def _gin_lookups_quiet() -> Iterator[None]:
  """While gin looks for a file it cannot open, its resource reader logs through the root
  logger (`Path not found: ...` at ERROR), and the first such call runs
  `logging.basicConfig()`, leaving a handler on the root logger. When the root logger has
  no handler, a `NullHandler` stands in meanwhile: neither happens, and the one-line error
  naming the file stays the only output. A root logger the user configured is left alone."""
  root = logging.getLogger()
  if root.handlers:
    yield
    return
  stand_in = logging.NullHandler()
  root.addHandler(stand_in)
  try:
    yield
  finally:
    root.removeHandler(stand_in)


def _first_line(error: BaseException) -> str:
  text = str(error).strip()
  if isinstance(error, KeyError) and len(error.args) == 1:
    text = str(error.args[0])
  return text.splitlines()[0] if text else type(error).__name__


def without_gin_context(text: str) -> str:
  """An error message without the context gin appends to errors of a configurable's call
  (`In call to configurable 'X' (<function ...>)`), which names no input."""
  return re.sub(r'\s*In call to configurable .*$', '', text, flags=re.DOTALL)
