"""`ExperimentManager`'s hyperparameter search (rlberry's `optimize_hyperparams`).

`SearchMixin` holds the manager's search methods and the study's results; the search
itself (Optuna, the trials, the pruner) is `search.py`'s, which asks the manager for its
space, objective and trials. `ExperimentManager` (`manager.py`) inherits it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.experiment import manager_checks as checks
from agents.experiment.errors import ExperimentError

if TYPE_CHECKING:
  import optuna


class SearchMixin:
  """The search methods of `ExperimentManager`, over the attributes it sets."""

  # Set by the manager (`manager.ExperimentManager._configure`).
  agent_class: type
  directory: str
  init_kwargs: dict[str, Any]
  init_kwargs_per_instance: list[dict[str, Any]] | None
  parallelization: str
  study: dict[str, Any] | None
  _trial_parallelization: str
  _writers_off: bool

  @property
  def best_hyperparams(self) -> dict[str, Any] | None:
    """The best constructor arguments of the last `optimize_hyperparams` (None before)."""
    return dict(self.study['best_params']) if self.study and self.study.get('best_params') \
        else None

  @property
  def optuna_study(self) -> optuna.Study | None:
    """The `optuna.Study` of the last `optimize_hyperparams` (None before)."""
    if not self.study:
      return None
    import optuna

    from agents.experiment import search
    return optuna.load_study(study_name=self.study['study_name'],
                             storage=search.storage_url(self.directory))

  def optimize_hyperparams(
      self, n_trials: int | None = 256, timeout: float | None = 60, n_fit: int = 2,
      n_optuna_workers: int = 2, optuna_parallelization: str = 'thread',
      sampler_method: str = 'optuna_default', pruner_method: str = 'halving',
      continue_previous: bool = False, fit_fraction: float = 1.0,
      sampler_kwargs: Mapping[str, Any] | None = None, disable_evaluation_writers: bool = True,
      custom_eval_function: Callable[[Sequence[Any]], float] | None = None, *,
      search_space: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Searches the constructor's arguments with Optuna; updates `init_kwargs` with the best.

    Each trial is a manager of its own under `<directory>/trials/`, with `n_fit` agents
    fitted in chunks of `fit_fraction` of `fit_budget` (reported to the pruner after each).

    Args:
      n_trials: trials (complete or pruned) to run; None runs until `timeout`.
      timeout: seconds after which no trial starts; None: no limit.
      n_fit: agents per trial.
      n_optuna_workers: trials at once.
      optuna_parallelization: 'thread': each trial fits as the manager's `parallelization`
        says; 'process': each trial fits its agents in worker processes. Trials are
        started from threads of this process either way.
      sampler_method: 'optuna_default' (TPE), 'random', 'grid' or 'cmaes'.
      pruner_method: 'halving', 'median' or 'none'.
      continue_previous: continue the last study in the folder (its cut-off trials again).
      fit_fraction: a trial fits and reports in chunks of this fraction, in (0, 1].
      sampler_kwargs: keyword arguments of the Optuna sampler (for 'grid', its
        `search_space`).
      disable_evaluation_writers: the trials' agents get no writer.
      custom_eval_function: callable(list of a trial's trained agents) -> float to
        maximise; None: the mean of the trial's `eval_agents()`.
      search_space: instead of the class's `sample_parameters(trial)`, a space of
        constructor arguments (see `search_distributions.py`).

    Returns:
      dict of the best constructor arguments.

    Raises:
      ExperimentError: a bad sampler, pruner or parallelization.
      search.SearchError: bad arguments, or no trial completed.
    """
    from agents.experiment import search
    if optuna_parallelization not in ('thread', 'process'):
      raise ExperimentError("optuna_parallelization must be 'thread' or 'process', got "
                            f'{optuna_parallelization!r}.')
    self._trial_parallelization = 'process' if optuna_parallelization == 'process' and \
        self.parallelization in ('thread', 'inline') else self.parallelization
    if sampler_method not in checks.SAMPLERS:
      raise ExperimentError(f'sampler_method must be one of {tuple(checks.SAMPLERS)}, got '
                            f'{sampler_method!r}.')
    self._writers_off = bool(disable_evaluation_writers)
    try:
      best: dict[str, Any] = search.optimize(
          self, n_trials=n_trials, timeout=timeout, n_fit=n_fit,
          sampler=checks.SAMPLERS[sampler_method], pruner=pruner_method, fit_fraction=fit_fraction,
          continue_previous=continue_previous, n_workers=n_optuna_workers,
          search_space=search_space, custom_eval_function=custom_eval_function,
          sampler_kwargs=sampler_kwargs)
      return best
    finally:
      self._writers_off = False
      self._trial_parallelization = self.parallelization

  def search_space(self, search_space: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The parsed space of a search (None: the class's `sample_parameters` samples).

    Raises:
      search.SearchError: no space and no `sample_parameters`, or a key the constructor
        refuses or that `init_kwargs_per_instance` sets.
    """
    return checks.search_space(self.agent_class, self.init_kwargs,
                               self.init_kwargs_per_instance, search_space)

  def default_objective(self) -> Callable[[Any], float]:
    """The mean of a trial's `eval_agents()` (rlberry's objective)."""
    return lambda trial_manager: float(np.mean(trial_manager.eval_agents(verbose=False)))
