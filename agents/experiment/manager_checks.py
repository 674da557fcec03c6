"""The checks of `ExperimentManager`'s arguments, and where a recorded agent class is found.

`manager.py` holds rlberry's manager; this module holds what it checks its arguments
against (`PARALLELIZATIONS`, `START_METHODS`, ...), its agents' name and budget, and the
classes `ExperimentManager.load` finds by their recorded `module:qualname`. The public
names stay importable from `agents.experiment.manager`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.experiment import agent_classes
from agents.experiment.errors import ExperimentError

PARALLELIZATIONS = ('thread', 'process', 'ray', 'inline')
START_METHODS = ('spawn', 'forkserver')
OUTDIR_ID_STYLES = (None, 'unique', 'timestamp')
SAMPLERS = {'optuna_default': 'tpe', 'tpe': 'tpe', 'random': 'random', 'grid': 'grid',
            'cmaes': 'cmaes'}
DEFAULT_OUTPUT_DIR = 'experiments'
# Agent classes managers of this process were built with, by 'module:qualname': `load`
# finds a class defined in a notebook or a function here (no code is read from disk).
_CLASSES_SEEN: dict[str, type] = {}


def name_of_agent(agent_class: Any, agent_name: str | None = None) -> str:
  """The agent's name: `agent_name`, else the class's `name`, else the class name."""
  if agent_name is not None:
    return str(agent_name)
  name = getattr(agent_class, 'name', None)
  if isinstance(name, str) and name:
    return name
  return str(getattr(agent_class, '__name__', repr(agent_class)))


def check_agent_name(name: str) -> str:
  """`name` as the manager's folder name.

  Raises:
    ExperimentError: a path, or an empty or dot name.
  """
  if os.sep in name or name in ('', '.', '..'):
    raise ExperimentError(f'agent_name must be a plain folder name, got {name!r}.')
  return name


def check_agent_budget(budget: Any, what: str) -> int:
  """An agent class's budget: any int (its unit is the agent's; rlberry passes it as given).

  Raises:
    ExperimentError: not an int (a float with an integral value, as `1e4`, is taken).
  """
  if isinstance(budget, float) and budget.is_integer():
    budget = int(budget)
  if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
    raise ExperimentError(f'{what} must be an int (the agent\'s budget), got {budget!r}.')
  return int(budget)


def check_parallelization(parallelization: str, mp_context: str, max_workers: int | None,
                          outdir_id_style: str | None) -> tuple[str, str]:
  """`(parallelization, mp_context)`, a start method given as `parallelization` read as
  'process' started that way.

  Raises:
    ExperimentError: a value outside its choices (named).
  """
  if parallelization in START_METHODS:  # A start method names processes started so.
    parallelization, mp_context = 'process', parallelization
  if parallelization not in PARALLELIZATIONS:
    raise ExperimentError(
        f'parallelization must be one of {PARALLELIZATIONS}, got {parallelization!r}.')
  if mp_context not in START_METHODS:
    raise ExperimentError(f'mp_context must be one of {START_METHODS}, got {mp_context!r} '
                          '(forking a process that may run TensorFlow can deadlock).')
  if max_workers is not None and (not isinstance(max_workers, int) or max_workers < 1):
    raise ExperimentError(f'max_workers must be None or an int >= 1, got {max_workers!r}.')
  if outdir_id_style not in OUTDIR_ID_STYLES:
    raise ExperimentError(
        f'outdir_id_style must be one of {OUTDIR_ID_STYLES}, got {outdir_id_style!r}.')
  return parallelization, mp_context


def check_per_instance(init_kwargs_per_instance: Sequence[Mapping[str, Any]] | None,
                       n_fit: int) -> list[dict[str, Any]] | None:
  """Copies of the `n_fit` mappings of `init_kwargs_per_instance` (None stays None).

  Raises:
    ExperimentError: not `n_fit` of them.
  """
  if init_kwargs_per_instance is None:
    return None
  if len(init_kwargs_per_instance) != n_fit:
    raise ExperimentError(f'init_kwargs_per_instance has {len(init_kwargs_per_instance)} '
                          f'entries; n_fit is {n_fit}.')
  return [dict(item) for item in init_kwargs_per_instance]


def check_writer(idx: Any, writer_fn: Any, n_fit: int) -> int:
  """`set_writer`'s `idx`, as an int, once it and `writer_fn` are checked.

  Raises:
    ExperimentError: `idx` outside [0, n_fit), or `writer_fn` neither 'default', None nor
      a callable.
  """
  if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)) or not 0 <= idx < n_fit:
    raise ExperimentError(f'set_writer: idx must be in [0, {n_fit}), got {idx!r}.')
  if writer_fn != 'default' and writer_fn is not None and not callable(writer_fn):
    raise ExperimentError(f"set_writer: writer_fn must be 'default', None or a callable, "
                          f'got {writer_fn!r}.')
  return int(idx)


def check_eval(n_simulations: Any, agent_id: Any, n_fit: int) -> int:
  """`eval_agents`' number of simulations (None: 2 * n_fit) once `agent_id` is checked.

  Raises:
    ExperimentError: `agent_id` outside [0, n_fit), or `n_simulations` not an int >= 1.
  """
  if agent_id is not None and not 0 <= agent_id < n_fit:
    raise ExperimentError(f'agent_id must be in [0, {n_fit}), got {agent_id!r}.')
  n_simulations = n_simulations or 2 * n_fit
  if isinstance(n_simulations, bool) or not isinstance(n_simulations, (int, np.integer)) \
      or n_simulations < 1:
    raise ExperimentError(f'n_simulations must be an int >= 1, got {n_simulations!r}.')
  return int(n_simulations)


def remember_class(agent_class: type) -> None:
  """Keeps `agent_class` for `find_agent_class` (by its `module:qualname`)."""
  _CLASSES_SEEN[agent_classes.class_path(agent_class)] = agent_class


def find_agent_class(path: str) -> type:
  """The agent class recorded as `module:qualname`: one built in this process, or imported.

  Raises:
    ExperimentError: in one line, how to make a class that is not importable loadable.
  """
  if path in _CLASSES_SEEN:
    return _CLASSES_SEEN[path]
  module, _, qualname = str(path).partition(':')
  if module == '__main__' or '<locals>' in qualname:
    where = 'inside a function' if '<locals>' in qualname else 'in a notebook or script'
    raise ExperimentError(
        f'agent_class {path} was defined {where}, so it cannot be imported: move it to a '
        'module (a .py file on sys.path) and save again, or pass load(..., agent_class=it); '
        'load unpickles no code (docs/trust.md).')
  found: type = agent_classes.import_path(path, 'agent_class')
  return found


def implements_sample_parameters(agent_class: type) -> bool:
  """Whether the class overrides `sample_parameters` (the base `Agent`'s raises)."""
  from agents.experiment import agent_base
  method: Any = getattr(agent_class, 'sample_parameters', None)
  if not callable(method):
    return False
  base = agent_base.Agent.__dict__['sample_parameters'].__func__  # The classmethod's function.
  return getattr(method, '__func__', method) is not base


def search_space(agent_class: type, init_kwargs: Mapping[str, Any],
                 init_kwargs_per_instance: Sequence[Mapping[str, Any]] | None,
                 space: Mapping[str, Any] | None) -> dict[str, Any] | None:
  """The parsed space of a manager's search (None: the class's `sample_parameters` samples).

  Raises:
    search.SearchError: no space and no `sample_parameters`, or a key the constructor
      refuses or that `init_kwargs_per_instance` sets.
  """
  from agents.experiment import search, search_distributions
  if space is None:
    if implements_sample_parameters(agent_class):
      return None
    raise search.SearchError(f'agent_class {agent_class.__name__} has no '
                             'sample_parameters(trial); pass search_space= with its '
                             'constructor arguments.')
  parsed: dict[str, Any] = search_distributions.parse(space)
  per_instance = {key for entry in init_kwargs_per_instance or () for key in entry}
  for key, distribution in parsed.items():
    if key in per_instance:
      raise search.SearchError(f"Search space key '{key}' is set by "
                               'init_kwargs_per_instance; a value given per fit cannot be '
                               'searched.')
    value = distribution.choices[0] if isinstance(
        distribution, search_distributions.Categorical) else distribution.low
    try:
      agent_classes.check_init_kwargs(agent_class, dict(init_kwargs, **{key: value}))
    except ValueError as error:
      raise search.SearchError(f"Search space key '{key}': {error}") from None
  return parsed
