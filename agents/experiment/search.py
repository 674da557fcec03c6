"""Hyperparameter search of an experiment with Optuna, resumable, with pruning.

Each trial samples a point of the search space (`search_distributions.py`, or an agent
class's `sample_parameters(trial)`), then trains `n_fit` fits with those values as a
small experiment of its own under `<experiment>/trials/trial-<hash of the values>/`. The fits run
in chunks of `fit_fraction` of the budget, resuming the same run directories;
after each chunk the objective (by default the mean over fits of the final
training `mean_score`) is reported to Optuna so the pruner can stop a bad
trial early.

The study lives in `<experiment>/optuna.db` (SQLite), which the Optuna
dashboard reads (`optuna-dashboard sqlite:///<experiment>/optuna.db`). With
`continue_previous=True` the last study continues: the trials cut off by a
Ctrl-C or a killed process are queued again with the same values, and since
their directories are named by those values, their fits resume from their
checkpoints. A trial that raises is recorded as failed and the search goes on.
"""

import hashlib
import json
import math
import os
import signal
import threading
import warnings

from agents.experiment import fitting, search_distributions

SAMPLERS = ('tpe', 'random', 'grid', 'cmaes')
PRUNERS = ('none', 'median', 'halving')
STORAGE_NAME = 'optuna.db'
BEST_CONFIG_NAME = 'best_config.yaml'


class SearchError(ValueError):
  """Bad arguments of a search, or a search that cannot run."""


class TrialFitError(RuntimeError):
  """A fit of a trial failed; the trial is recorded as failed."""


def mean_final_score(manager):
  """The default objective: mean over the fits of their last training `mean_score`.

  Raises:
    TrialFitError: a fit logged no score (no episode finished within the budget).
  """
  scores = manager.final_scores('mean_score', 'train')
  if not len(scores) or any(math.isnan(score) for score in scores):
    raise TrialFitError(f'{manager.name}: a fit logged no mean_score (no episode ended '
                        'within its budget); raise the budget or shorten the episodes.')
  return float(scores.mean())


def on_trained_agents(custom_eval_function):
  """rlberry's `custom_eval_function(trained_agents) -> float` as an objective of a trial."""
  def objective(manager):
    return custom_eval_function(manager.get_agent_instances())
  return objective


def storage_url(directory):
  """The SQLite URL of the study storage in an experiment directory."""
  return 'sqlite:///' + os.path.join(os.path.abspath(directory), STORAGE_NAME)


def make_sampler(name, space, seed, sampler_kwargs=None):
  """The Optuna sampler called `name` ('tpe', 'random', 'grid' or 'cmaes'), with
  `sampler_kwargs` (keyword arguments of its Optuna class) winning over the defaults."""
  import optuna
  kwargs = dict(sampler_kwargs or {})
  if name == 'tpe':
    with warnings.catch_warnings():
      # `group` is marked experimental; it is what searches of conditional spaces need.
      warnings.simplefilter('ignore', optuna.exceptions.ExperimentalWarning)
      return optuna.samplers.TPESampler(**dict(dict(seed=seed, multivariate=True, group=True),
                                               **kwargs))
  if name == 'random':
    return optuna.samplers.RandomSampler(**dict(dict(seed=seed), **kwargs))
  if name == 'grid':
    if 'search_space' not in kwargs:
      kwargs['search_space'] = search_distributions.grid(space)
    return optuna.samplers.GridSampler(**dict(dict(seed=seed), **kwargs))
  if name == 'cmaes':
    try:
      # Optuna's CMA-ES sampler needs it.
      import cmaes  # noqa: F401  pylint: disable=unused-import
    except ImportError as error:
      raise SearchError("sampler='cmaes' needs the 'cmaes' package: pip install "
                        "'batchppo-agents[experiment]' (or pip install cmaes).") from error
    return optuna.samplers.CmaEsSampler(**dict(dict(seed=seed, warn_independent_sampling=False),
                                               **kwargs))
  raise SearchError(f'sampler must be one of {SAMPLERS}, got {name!r}.')


def make_pruner(name, n_chunks):
  """The Optuna pruner called `name` ('none', 'median' or 'halving')."""
  import optuna
  if name == 'none':
    return optuna.pruners.NopPruner()
  if name == 'median':
    # Judge nothing before 3 trials have finished, nor on the first chunk alone
    # when there are several (early returns say little).
    return optuna.pruners.MedianPruner(n_startup_trials=3,
                                       n_warmup_steps=0 if n_chunks < 3 else 1)
  if name == 'halving':
    return optuna.pruners.SuccessiveHalvingPruner()
  raise SearchError(f'pruner must be one of {PRUNERS}, got {name!r}.')


def chunk_budgets(budget, fit_fraction):
  """The budgets a trial's fits reach, chunk by chunk, ending at `budget`."""
  if not 0 < fit_fraction <= 1:
    raise SearchError(f'fit_fraction must be in (0, 1], got {fit_fraction!r}.')
  chunks = math.ceil(round(1 / fit_fraction, 9))
  budgets = sorted({max(1, round(budget * k / chunks)) for k in range(1, chunks + 1)})
  return budgets


def trial_name(params):
  """A folder name for a trial, fixed by its values (so a queued-again trial resumes)."""
  text = json.dumps(params, sort_keys=True, default=repr)
  return 'trial-' + hashlib.sha1(text.encode()).hexdigest()[:10]


def _study_names(storage):
  import optuna
  return [summary.study_name for summary in optuna.get_all_study_summaries(storage)]


def _requeue_cut_off_trials(study):
  """Queues again the trials a Ctrl-C or a killed process cut off (same values)."""
  import optuna
  states = optuna.trial.TrialState
  trials = study.get_trials(deepcopy=False)
  requeued = {trial.user_attrs.get('requeue_of') for trial in trials}
  for trial in trials:
    cut_off = trial.state == states.RUNNING or (
        trial.state == states.FAIL and trial.user_attrs.get('interrupted'))
    if not cut_off or trial.number in requeued:
      continue
    if trial.state == states.RUNNING:
      study._storage.set_trial_state_values(trial._trial_id, states.FAIL)
    study.enqueue_trial(trial.params, user_attrs={'requeue_of': trial.number})


class _StopOnSigint:
  """While active, a Ctrl-C asks every running fit (in every trial thread) to stop."""

  def __enter__(self):
    fitting.STOP.clear()
    self._previous = None
    if threading.current_thread() is threading.main_thread():
      self._previous = signal.signal(signal.SIGINT, self._handle)
    return self

  def _handle(self, signum, frame):
    del signum, frame
    fitting.STOP.set()
    signal.signal(signal.SIGINT, signal.default_int_handler)  # A second Ctrl-C raises.

  def __exit__(self, *exc_info):
    if self._previous is not None:
      signal.signal(signal.SIGINT, self._previous)
    stopped = fitting.STOP.is_set()
    fitting.STOP.clear()
    if stopped and exc_info[0] is None:
      raise KeyboardInterrupt('search stopped; optimize(continue_previous=True) resumes it.')
    return False


def optimize(manager, n_trials=20, timeout=None, n_fit=2, sampler='tpe', pruner='median',
             fit_fraction=0.25, continue_previous=False, n_workers=1, objective=None,
             search_space=None, budget=None, custom_eval_function=None, sampler_kwargs=None):
  """Searches the hyperparameters of an experiment (a config's or an agent class's) with Optuna.

  The experiment says what is searched and how a trial runs: `search_space(space)`
  parses the space (None: the agent class's `sample_parameters(trial)` samples),
  `default_objective()`, `trial_manager(...)` builds a trial's experiment, and
  `take_best(best, budget)` keeps the best values.

  Args:
    manager: the `ConfigExperiment` or `ExperimentManager`; its seed gives every trial the
      same fit seeds, and its parallelization runs the trials' fits.
    n_trials: finished (complete or pruned) trials the study should hold; None
      runs until `timeout`.
    timeout: seconds after which no new trial starts; None for no limit.
    n_fit: fits per trial.
    sampler: 'tpe', 'random', 'grid' or 'cmaes'.
    pruner: 'none', 'median' or 'halving'.
    fit_fraction: a trial trains and reports in chunks of this fraction of
      the budget.
    continue_previous: continue the last study in the experiment's storage
      (re-running cut-off trials); False starts a new study beside it.
    n_workers: trials running at once (threads, each running its fits in
      worker processes or Ray tasks); they share the cores, each trial's fits
      using at most its 1/n_workers part in threads (and Ray CPUs).
    objective: callable(trial_manager) -> float to maximise; defaults to the
      experiment's `default_objective()`.
    search_space: search space (see `search_distributions.py`); None: the experiment's
      default (a named config's, or the agent class's `sample_parameters`).
    budget: what each fit of a trial reaches; defaults to the experiment's fit_budget.
    custom_eval_function: rlberry's objective, callable(list of a trial's trained
      agents) -> float; give it or `objective`, not both.
    sampler_kwargs: keyword arguments of the Optuna sampler.

  Returns:
    Dict of the best trial's values; the experiment keeps them (`take_best`) and the
    study is recorded in the manifest.

  Raises:
    SearchError: bad arguments, or no trial completed.
    search_distributions.SearchSpaceError: the space is empty or names an unknown key.
    KeyboardInterrupt: after a Ctrl-C, with every fit checkpointed.
  """
  import optuna
  if objective is not None and custom_eval_function is not None:
    raise SearchError('Give objective or custom_eval_function, not both.')
  if custom_eval_function is not None:
    if not callable(custom_eval_function):
      raise SearchError(f'custom_eval_function must be callable, got {custom_eval_function!r}.')
    objective = on_trained_agents(custom_eval_function)
  space = manager.search_space(search_space)
  if n_trials is None and timeout is None:
    raise SearchError('Give n_trials, timeout, or both; otherwise the search never ends.')
  if n_trials is not None and (not isinstance(n_trials, int) or n_trials < 1):
    raise SearchError(f'n_trials must be an int >= 1 or None, got {n_trials!r}.')
  if not isinstance(n_fit, int) or isinstance(n_fit, bool) or n_fit < 1:
    raise SearchError(f'n_fit must be an int >= 1, got {n_fit!r}.')
  if not isinstance(n_workers, int) or n_workers < 1:
    raise SearchError(f'n_workers must be an int >= 1, got {n_workers!r}.')
  # Both names are checked before either is built: building one may print Optuna's
  # warnings, which must not come before the error about the other.
  if sampler not in SAMPLERS:
    raise SearchError(f'sampler must be one of {SAMPLERS}, got {sampler!r}.')
  if pruner not in PRUNERS:
    raise SearchError(f'pruner must be one of {PRUNERS}, got {pruner!r}.')
  budget = budget or manager.fit_budget
  budgets = chunk_budgets(budget, fit_fraction)
  if sampler == 'grid' and space is None and 'search_space' not in (sampler_kwargs or {}):
    raise SearchError("sampler='grid' needs a search_space, not sample_parameters.")
  sampler_object = make_sampler(sampler, space, manager.seed_entropy % 2**32, sampler_kwargs)
  pruner_object = make_pruner(pruner, len(budgets))
  objective = objective or manager.default_objective()

  optuna.logging.set_verbosity(optuna.logging.WARNING)
  os.makedirs(manager.directory, exist_ok=True)
  storage = storage_url(manager.directory)
  existing = _study_names(storage)
  if continue_previous and existing:
    study_name = (manager.study or {}).get('study_name') or existing[-1]
  else:
    study_name = f'{manager.name}-search-{len(existing) + 1}'
  optuna.logging.set_verbosity(optuna.logging.WARNING)  # from the study's creation on
  study = optuna.create_study(storage=storage, study_name=study_name, direction='maximize',
                              sampler=sampler_object, pruner=pruner_object, load_if_exists=True)
  if space is not None:
    study.set_user_attr('search_space', search_distributions.to_plain(space))
  study.set_user_attr('budget', budget)
  study.set_user_attr('n_fit', n_fit)
  if continue_previous:
    _requeue_cut_off_trials(study)

  trials_dir = os.path.join(manager.directory, 'trials')
  per_trial_workers = max(1, (manager.max_workers or os.cpu_count() or 1) // n_workers)
  # The trials at once share the cores: each trial's fits get its part.
  per_trial_cpus = max(1, (os.cpu_count() or 1) // n_workers)

  def run_trial(trial):
    if space is None:  # The agent class samples its own arguments (rlberry's way).
      params = dict(manager.agent_class.sample_parameters(trial))
    else:
      params = search_distributions.sample(trial, space)
    child = manager.trial_manager(params, n_fit, budget, trials_dir, per_trial_workers,
                                  trial_name(params))
    child.cpu_share = per_trial_cpus
    trial.set_user_attr('directory', os.path.relpath(child.directory, manager.directory))
    score = None
    for chunk_budget in budgets:
      try:
        child.fit_to(chunk_budget)
      except KeyboardInterrupt:
        trial.set_user_attr('interrupted', True)
        raise
      failed = child.failed_fits()
      if failed:
        last = child.fits[failed[0]]['error'].strip().splitlines()[-1]
        raise TrialFitError(f'Trial {trial.number}: fits {failed} failed; fit {failed[0]}: '
                            f'{last} (see {child.run_dir(failed[0])}/fit.log)')
      score = float(objective(child))
      trial.report(score, chunk_budget)
      if chunk_budget < budget and trial.should_prune():
        raise optuna.TrialPruned(f'score {score:.3g} at step {chunk_budget}')
    return score

  try:
    with _StopOnSigint():
      _run_study(study, run_trial, n_trials, timeout, n_workers, quiet=manager.quiet)
  finally:
    manager.study = _study_record(study)
    manager.save()
  if manager.study['best_value'] is None:
    raise SearchError(f'No trial of study {study_name!r} completed; see the failed trials '
                      f'with optuna-dashboard {storage}.')
  best = dict(manager.study['best_params'])
  where = manager.take_best(best, budget)
  if not manager.quiet:
    print(summary_table(study).to_string(index=False))
    print(f'Best value {manager.study["best_value"]:.4g} with {best}; {where}')
  return best


def _run_study(study, run_trial, n_trials, timeout, n_workers, quiet):
  """Runs trials until `n_trials` are complete or pruned (failed ones are replaced, at most
  `n_trials` times), or until `timeout` seconds have passed."""
  import time

  import optuna
  done_states = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
  deadline = None if timeout is None else time.monotonic() + timeout
  replacements = n_trials or 0
  while True:
    already = len(study.get_trials(deepcopy=False, states=done_states))
    remaining = None if n_trials is None else n_trials - already
    left = None if deadline is None else deadline - time.monotonic()
    if remaining is not None and remaining <= 0 or left is not None and left <= 0:
      return
    before = len(study.trials)
    study.optimize(run_trial, n_trials=remaining, timeout=left, n_jobs=n_workers,
                   catch=(Exception,), show_progress_bar=not quiet and remaining is not None)
    ran = len(study.trials) - before
    finished = len(study.get_trials(deepcopy=False, states=done_states)) - already
    replacements -= ran - finished
    if remaining is None or replacements < 0 or ran == 0:
      return


def trial_values(study, trial):
  """A trial's values in config terms (list-valued choices are stored by index)."""
  if 'search_space' not in study.user_attrs:  # Sampled by the agent class itself.
    return dict(trial.params)
  space = search_distributions.parse(study.user_attrs['search_space'])
  values = {}
  for key, value in trial.params.items():
    distribution = space.get(key)
    if isinstance(distribution, search_distributions.Categorical) and \
        value not in distribution.choices and isinstance(value, int):
      value = distribution.choices[value]
    values[key] = value
  return values


def _study_record(study):
  import optuna
  states = optuna.trial.TrialState
  trials = study.get_trials(deepcopy=False)
  complete = [t for t in trials if t.state == states.COMPLETE]
  best = max(complete, key=lambda t: t.value) if complete else None
  return dict(
      storage=STORAGE_NAME, study_name=study.study_name,
      best_params=trial_values(study, best) if best else None,
      best_value=float(best.value) if best else None, best_trial=best.number if best else None,
      best_config=BEST_CONFIG_NAME if best else None,
      trials=len(trials), complete=len(complete),
      pruned=sum(t.state == states.PRUNED for t in trials),
      failed=sum(t.state == states.FAIL for t in trials))


def summary_table(study):
  """A DataFrame with one row per trial: number, state, value, last step and values."""
  import pandas as pd
  rows = []
  for trial in study.get_trials(deepcopy=False):
    last_step = max(trial.intermediate_values) if trial.intermediate_values else None
    rows.append(dict(trial=trial.number, state=trial.state.name.lower(), value=trial.value,
                     step=last_step, **trial.params))
  return pd.DataFrame(rows)
