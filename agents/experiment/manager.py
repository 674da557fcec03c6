"""`ExperimentManager`: N independent fits of one config, their data, search and statistics.

    manager = ExperimentManager('pendulum', n_fit=4, fit_budget=200_000,
                                output_dir='experiments', seed=0)
    manager.fit()                       # 4 run directories, trained in parallel
    frame = manager.get_writer_data()   # name, fit, step, phase, tag, value
    manager.plot_writer_data('mean_score')

The manager's directory is `<output_dir>/<name>/`: `experiment.yaml` (the
manifest, see `manifest.py`) and one ordinary run directory per fit,
`fit00-<name>/`, `fit01-<name>/`, ... (when the name is the config's,
`agents.scripts.train --logdir=<output_dir>/<name> --timestamp=fit00
--config=<name>` resumes a fit by hand). Fit `i` gets the `i`-th seed spawned from one
`numpy.random.SeedSequence`. Building a manager whose directory already holds
the same experiment picks up its state, so `fit` resumes where it stopped.

The manager also takes an agent class, as rlberry's does (see `agent_classes.py`):

    manager = ExperimentManager(agent_class=MyAgent, train_env=('CartPole-v1', {}),
                                fit_budget=10_000, init_kwargs=dict(learning_rate=1e-3),
                                eval_kwargs=dict(n_simulations=5), n_fit=3, seed=0)
    manager.fit()                           # MyAgent(env=..., **init_kwargs).fit(10_000)
    manager.eval_agents(n_simulations=6)    # six calls of agent.eval(**eval_kwargs)
    agents = manager.get_agent_instances()

An agent class written for BLE (`agents.python_agents.agent.Agent`) is fitted through
`agents.python_agents.fit_adapter.FitAdapter`: `run_training_loop`, then TWR50 on a suite.
"""

import copy
import cProfile
import io
import logging
import os
import pstats
import shutil

import numpy as np

from agents.experiment import (
    agent_classes,
    agent_fitting,
    configs_and_training,
    fitting,
    manifest,
    writer_data,
)
from agents.experiment import threads as threads_lib
from agents.experiment.errors import ExperimentError
from agents.run import directory_lock

_LOG = logging.getLogger(__name__)

PARALLELIZATIONS = ('process', 'ray', 'inline', 'thread')
# 'thread' fits agent classes only: a config's training loop takes over the signals,
# which only the main thread may do.
_CONFIG_PARALLELIZATIONS = ('process', 'ray', 'inline')
# Config keys that may differ between a manager and the experiment already in its directory.
_RESUMABLE_KEYS = (configs_and_training.BUDGET_KEY, configs_and_training.TRACK_KEY)


def _seed_entropy(seed):
  if seed is None:
    return int(np.random.SeedSequence().entropy)
  if isinstance(seed, np.random.SeedSequence):
    if seed.spawn_key:
      raise ExperimentError('seed: pass a root SeedSequence (no spawn_key) or an int.')
    return int(seed.entropy)
  if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
    return int(seed)
  raise ExperimentError(f'seed must be None, a non-negative int or a SeedSequence, got {seed!r}.')


def fit_seeds(entropy, n_fit):
  """The seeds of `n_fit` fits, spawned from `SeedSequence(entropy)` (31-bit ints)."""
  children = np.random.SeedSequence(entropy).spawn(n_fit)
  return [int(child.generate_state(1, dtype=np.uint32)[0] >> 1) for child in children]


class ExperimentManager:
  """Trains `n_fit` independent instances of a config and gathers their results."""

  def __init__(self, config=None, n_fit=4, fit_budget=None, output_dir='experiments',
               parallelization=None, max_workers=None, seed=None, overrides=None,
               overrides_per_fit=None, eval_suite=None, name=None, ray_address=None,
               mp_context='spawn', quiet=False, *, agent_class=None, train_env=None,
               eval_env=None, init_kwargs=None, init_kwargs_per_instance=None,
               fit_kwargs=None, eval_kwargs=None, agent_name=None):
    """Resolves and checks every fit's config (or agent class); picks up the experiment
    already on disk.

    Args:
      config: the name of a registered config, a path to a YAML config, or a
        resolved config mapping. Its algorithm may be any registered one. A class
        here is taken as `agent_class`.
      n_fit: number of independent fits, at least 1.
      fit_budget: what each fit reaches: training steps of a config (None keeps its
        `loop.steps`); for an agent class, the total budget its `fit` calls add up to
        (required, here or as `fit_kwargs['fit_budget']`, as in rlberry).
      output_dir: folder of experiments; the manager's is `<output_dir>/<name>`.
      parallelization: 'process' (worker processes here; a config's default),
        'thread' (threads of this process; an agent class's default, as rlberry's, and
        for agent classes only), 'ray' (Ray tasks), or 'inline' (one after another in
        this thread: debugging and tests). An agent class fitted in processes or on Ray
        must be importable by its module and name.
      max_workers: fits running at once; None runs min(n_fit, CPU count).
      seed: int, `numpy.random.SeedSequence` or None (fresh entropy, recorded
        in the manifest).
      overrides: dotted-key overrides for every fit, e.g.
        {'algorithm.learning_rate': 1e-3}.
      overrides_per_fit: optional list of `n_fit` override mappings, one per fit.
      eval_suite: evaluation suite of `eval_agents` (None: its default).
      name: the experiment's name and folder; defaults to the config's name, or the
        agent class's (its `name` attribute, else the class name).
      ray_address: Ray cluster address with parallelization='ray' (None
        starts or joins a local instance).
      mp_context: 'spawn' or 'forkserver', the start method of local workers.
      quiet: no progress bars or summary tables.
      agent_class: a class with rlberry's `fit(budget, **fit_kwargs)` and
        `eval(**eval_kwargs)`, or with BLE's Agent interface (see `agent_classes.py`).
      train_env: `(gymnasium id or constructor, kwargs)`, the environment the agent
        class gets as `env` (agent classes only).
      eval_env: `(gymnasium id or constructor, kwargs)` of evaluation, for
        `build_eval_env` and for a constructor that names `eval_env`; None: `train_env`.
      init_kwargs: keyword arguments of the agent class's constructor, for every fit.
      init_kwargs_per_instance: optional list of `n_fit` mappings, one per fit, that
        add to (and win over) `init_kwargs`.
      fit_kwargs: extra keyword arguments of `fit`.
      eval_kwargs: keyword arguments of `eval` in `eval_agents`.
      agent_name: rlberry's name for `name`.

    Raises:
      ExperimentError: a bad argument, or the directory holds another experiment.
      configs_and_training.ConfigError: an unknown config, key or value (named).
    """
    if agent_classes.is_agent_class(config):
      if agent_class is not None:
        raise ExperimentError('Give the agent class once: as config or as agent_class.')
      config, agent_class = None, config
    if (config is None) == (agent_class is None):
      raise ExperimentError('Give a config or an agent_class (and not both).')
    if isinstance(n_fit, bool) or not isinstance(n_fit, (int, np.integer)) or n_fit < 1:
      raise ExperimentError(f'n_fit must be an int >= 1, got {n_fit!r}.')
    allowed = PARALLELIZATIONS if agent_class is not None else _CONFIG_PARALLELIZATIONS
    parallelization = parallelization or ('thread' if agent_class is not None else 'process')
    if parallelization not in allowed:
      raise ExperimentError(
          f'parallelization must be one of {allowed}, got {parallelization!r}.')
    if max_workers is not None and (not isinstance(max_workers, int) or max_workers < 1):
      raise ExperimentError(f'max_workers must be None or an int >= 1, got {max_workers!r}.')
    if name is not None and agent_name is not None and name != agent_name:
      raise ExperimentError(f'name {name!r} and agent_name {agent_name!r} differ; give one.')
    name = name or agent_name
    self.n_fit = int(n_fit)
    self.agent_class = None
    self.config = self.config_name = None
    self.overrides, self.overrides_per_fit = {}, None
    if agent_class is not None:
      if overrides or overrides_per_fit:
        raise ExperimentError('overrides and overrides_per_fit change a config; an agent '
                              'class takes init_kwargs and init_kwargs_per_instance.')
      self._init_agent_class(agent_class, fit_budget, train_env, eval_env, init_kwargs,
                             init_kwargs_per_instance, fit_kwargs, eval_kwargs)
      name = name or _agent_class_name(agent_class)
    else:
      agent_only = dict(train_env=train_env, eval_env=eval_env, init_kwargs=init_kwargs,
                        init_kwargs_per_instance=init_kwargs_per_instance,
                        fit_kwargs=fit_kwargs, eval_kwargs=eval_kwargs)
      given = [key for key, value in agent_only.items() if value is not None]
      if given:
        raise ExperimentError(f'{given[0]} is an argument of an agent_class experiment; a '
                              'config takes overrides and overrides_per_fit.')
      self._init_config(config, fit_budget, overrides, overrides_per_fit)
      name = name or configs_and_training.label(config)
    self.name = name
    if os.sep in self.name or self.name in ('', '.', '..'):
      raise ExperimentError(f'name must be a plain folder name, got {self.name!r}.')
    self.output_dir = os.path.abspath(os.path.expanduser(output_dir))
    for folder in (self.output_dir, os.path.join(self.output_dir, self.name)):
      if os.path.exists(folder) and not os.path.isdir(folder):
        raise ExperimentError(f'output_dir: {folder} is a file, not a folder of experiments.')
    self.parallelization = parallelization
    self.max_workers = max_workers
    self.eval_suite = eval_suite
    self.ray_address = ray_address
    self.mp_context = mp_context
    self.quiet = quiet
    self.study = None
    # The trained agents of an agent class fitted in this process, by fit index.
    self._instances = {}
    # The experiment the trackers of `loop.track` file the fits under (a search's
    # trials, each an experiment of its own, share the search's).
    self.tracking_group = self.name
    previous = manifest.read(self.directory) if manifest.exists(self.directory) else None
    if previous is not None and seed is None:
      self.seed_entropy = int(previous['seed_entropy'])
    else:
      self.seed_entropy = _seed_entropy(seed)
    self.fits = self._new_fits()
    # Every fit's config resolves now: a bad per-fit override fails before anything runs.
    for index in range(self.n_fit if self.config is not None else 0):
      self.fit_config(index)
    if previous is not None:
      self._adopt(previous)

  def _init_config(self, config, fit_budget, overrides, overrides_per_fit):
    if overrides_per_fit is not None and len(overrides_per_fit) != self.n_fit:
      raise ExperimentError(
          f'overrides_per_fit has {len(overrides_per_fit)} entries; n_fit is {self.n_fit}.')
    self.config_name = config if isinstance(config, str) and \
        not configs_and_training.is_yaml_path(config) else None
    self.overrides = dict(overrides or {})
    self.config = configs_and_training.resolve(config, self.overrides)
    if fit_budget is None:
      fit_budget = configs_and_training.get(self.config, configs_and_training.BUDGET_KEY)
    self.fit_budget = _check_budget(fit_budget, 'fit_budget')
    self.overrides_per_fit = [dict(item) for item in overrides_per_fit] \
        if overrides_per_fit is not None else None

  def _init_agent_class(self, agent_class, fit_budget, train_env, eval_env, init_kwargs,
                        init_kwargs_per_instance, fit_kwargs, eval_kwargs):
    self.agent_class = agent_classes.check_agent_class(agent_class)
    if train_env is None or train_env == (None, None):
      raise ExperimentError(f'agent_class {agent_class.__name__} needs train_env='
                            '(gymnasium id or constructor, kwargs).')
    self.train_env = agent_classes.check_env(train_env, 'train_env')
    self.eval_env = agent_classes.check_env(eval_env, 'eval_env') \
        if eval_env is not None else None
    self.init_kwargs = dict(init_kwargs or {})
    self.fit_kwargs = dict(fit_kwargs or {})
    self.eval_kwargs = dict(eval_kwargs or {})
    if fit_budget is None:
      fit_budget = self.fit_kwargs.pop('fit_budget', None)
    if fit_budget is None:
      raise ExperimentError(f'agent_class {agent_class.__name__} needs fit_budget (or '
                            "fit_kwargs['fit_budget']).")
    self.fit_budget = _check_budget(fit_budget, 'fit_budget')
    if init_kwargs_per_instance is not None and len(init_kwargs_per_instance) != self.n_fit:
      raise ExperimentError(f'init_kwargs_per_instance has {len(init_kwargs_per_instance)} '
                            f'entries; n_fit is {self.n_fit}.')
    self.init_kwargs_per_instance = [dict(item) for item in init_kwargs_per_instance] \
        if init_kwargs_per_instance is not None else None
    # Every fit's constructor arguments are checked now, before anything runs.
    for index in range(self.n_fit):
      agent_classes.check_init_kwargs(self.agent_class, self.instance_kwargs(index),
                                      f'init_kwargs of fit {index}')

  def instance_kwargs(self, index):
    """The constructor arguments of fit `index`: `init_kwargs`, then its own
    `init_kwargs_per_instance` entry, which wins (rlberry's rule)."""
    own = self.init_kwargs_per_instance[index] if self.init_kwargs_per_instance else {}
    return dict(self.init_kwargs, **own)

  @property
  def directory(self):
    """The manager's folder, `<output_dir>/<name>`."""
    return os.path.join(self.output_dir, self.name)

  def _new_fits(self):
    return [dict(index=index, seed=seed, run_dir=f'fit{index:02d}-{self.name}',
                 status=fitting.PENDING, step=0, mean_score=None, error=None)
            for index, seed in enumerate(fit_seeds(self.seed_entropy, self.n_fit))]

  def run_dir(self, index):
    """The absolute run directory of fit `index`."""
    return os.path.join(self.directory, self.fits[index]['run_dir'])

  def fit_config(self, index, budget=None):
    """The resolved config of fit `index`: base config, its overrides, its seed, the budget."""
    overrides = dict(self.overrides_per_fit[index]) if self.overrides_per_fit else {}
    overrides[configs_and_training.SEED_KEY] = self.fits[index]['seed']
    overrides[configs_and_training.BUDGET_KEY] = budget or self.fit_budget
    try:
      return configs_and_training.resolve(self.config, overrides)
    except configs_and_training.ConfigError as error:
      raise type(error)(f'Fit {index}: {error}') from error

  def _adopt(self, previous):
    """Takes over the fits' states of the same experiment saved in the directory."""
    mine = self._manifest_data()
    differences = [key for key in ('n_fit', 'seed_entropy', 'overrides_per_fit', 'agent')
                   if previous.get(key) != mine[key]]
    if self.agent_class is not None or previous.get('agent') is not None:
      self._adopt_fits(previous, differences)
      return
    previous_config = previous.get('config', {})
    old_config = _dotted(manifest.plain(_without(previous_config, _RESUMABLE_KEYS)))
    new_config = _dotted(manifest.plain(_without(self.config, _RESUMABLE_KEYS)))
    # A key declared since the experiment was saved, left at its default, changes nothing.
    declared = configs_and_training.defaults(self.config)
    for key in set(new_config) - set(old_config):
      if key in declared and new_config[key] == declared[key]:
        old_config[key] = new_config[key]
    differences += [f'config.{key}' for key in sorted(set(old_config) | set(new_config))
                    if old_config.get(key) != new_config.get(key)]
    self._adopt_fits(previous, differences)

  def _adopt_fits(self, previous, differences):
    if differences:
      raise ExperimentError(
          f'{self.directory} already holds another experiment (differs in '
          f'{", ".join(differences)}); choose another name or output_dir, or use '
          'ExperimentManager.load to continue it.')
    self.fits = [dict(fit) for fit in previous['fits']]
    self.study = previous.get('study')

  # --- Fitting. ---

  def fit(self, budget=None):
    """Trains every unfinished fit to `budget` steps, in parallel; resumes from checkpoints.

    A fit that raises or dies is reported with its index and the others go on.
    Ctrl-C makes every running fit save a checkpoint and stop; the state is
    saved and KeyboardInterrupt propagates. Calling `fit` again (or with a
    larger budget) resumes.

    Args:
      budget: training steps of each fit; None keeps `fit_budget`, a larger
        one extends finished fits.

    Returns:
      The summary DataFrame of `summary()`.

    Raises:
      KeyboardInterrupt: after a Ctrl-C, with every finished fit kept.
      ExperimentError: another process is fitting this experiment (nothing is touched).
    """
    try:
      with directory_lock.hold(self.directory, 'experiment'):
        return self._fit(budget)
    except directory_lock.DirectoryBusyError as error:
      raise ExperimentError(str(error)) from None

  def _fit(self, budget):
    if budget is not None:
      self.fit_budget = _check_budget(budget, 'budget')
    todo = [fit['index'] for fit in self.fits
            if not (fit['status'] == fitting.FINISHED and fit['step'] >= self.fit_budget)]
    self.save()
    if not todo:
      return self.summary()
    max_workers = min(self.max_workers or (os.cpu_count() or 1), len(todo))
    threads = threads_lib.threads_per_fit(max_workers)
    specs = [self._fit_spec(index, self.fit_budget, threads) for index in todo]
    from agents.experiment import progress as progress_lib
    progress = progress_lib.FitProgress([(spec.index, spec.run_dir) for spec in specs],
                                        self.fit_budget, quiet=self.quiet)
    try:
      if self.parallelization in ('thread', 'inline') and self.agent_class is not None:
        _, interrupted = agent_fitting.run_agent_fits(
            specs, max_workers if self.parallelization == 'thread' else 1, self._instances,
            progress=progress, on_outcome=self._record)
      elif self.parallelization == 'ray':
        from agents.experiment import ray_fitting
        _, interrupted = ray_fitting.run_fits_on_ray(
            specs, max_workers, progress=progress, address=self.ray_address,
            on_outcome=self._record)
      elif self.parallelization == 'inline':
        _, interrupted = fitting.run_fits_inline(specs, progress=progress,
                                                 on_outcome=self._record)
      else:
        _, interrupted = fitting.run_fits_locally(
            specs, max_workers, progress=progress, context=self.mp_context,
            on_outcome=self._record)
    finally:
      progress.close()
      self.save()
    summary = self.summary()
    if not self.quiet:
      print(summary.to_string(index=False))
    failed = [fit['index'] for fit in self.fits if fit['status'] == fitting.FAILED]
    for index in failed:
      _LOG.error('Fit %d of %s failed:\n%s', index, self.name, self.fits[index]['error'])
    if interrupted:
      raise KeyboardInterrupt(f'{self.name}: fits stopped with checkpoints; fit() resumes them.')
    return summary

  def _fit_spec(self, index, budget, threads=1, run_dir=None, fresh=False):
    """The `FitSpec` of fit `index`: its config, or its agent class with its arguments."""
    fit = self.fits[index]
    run_dir = run_dir or self.run_dir(index)
    if self.agent_class is None:
      # In the experiment trackers, fit k is the run '<name>-fit<k>' of the experiment <name>.
      return fitting.FitSpec(index, run_dir, self.fit_config(index, budget), budget, threads,
                             run_name=f'{self.name}-fit{index:02d}',
                             run_group=self.tracking_group)
    saved = fit.get('saved_agent')
    agent = agent_fitting.AgentFit(
        self.agent_class, self.train_env, self.eval_env, self.instance_kwargs(index),
        self.fit_kwargs, done=0 if fresh else fit['step'],
        saved=os.path.join(self.directory, saved) if saved and not fresh else None)
    return fitting.FitSpec(index, run_dir, None, budget, threads, seed=fit['seed'],
                           agent=agent)

  def _record(self, outcome):
    fit = self.fits[outcome.index]
    fit['status'] = outcome.status
    fit['error'] = outcome.error
    if outcome.saved_agent is not None:  # Kept relative, as the run directories are.
      fit['saved_agent'] = os.path.relpath(outcome.saved_agent, self.directory)
    if outcome.step is not None:
      fit['step'] = outcome.step
    if outcome.mean_score is not None:
      fit['mean_score'] = outcome.mean_score
    self.save()

  def summary(self):
    """A DataFrame with one row per fit: index, seed, status, step, mean_score, run_dir."""
    import pandas as pd
    return pd.DataFrame([
        dict(fit=fit['index'], seed=fit['seed'], status=fit['status'], step=fit['step'],
             mean_score=fit['mean_score'], run_dir=fit['run_dir'])
        for fit in self.fits])

  def failed_fits(self):
    """Indices of the fits whose last attempt failed."""
    return [fit['index'] for fit in self.fits if fit['status'] == fitting.FAILED]

  # --- Data. ---

  def get_writer_data(self):
    """One row per logged value of every fit: `name, fit, step, phase, tag, value`."""
    return writer_data.read_fits(
        self.name, [(fit['index'], self.run_dir(fit['index'])) for fit in self.fits])

  def final_scores(self, tag='mean_score', phase='train'):
    """The last logged `tag` of every fit, as a NumPy array in fit order (NaN when missing)."""
    values = writer_data.final_values(self.get_writer_data(), tag, phase)
    return np.array([values.get((self.name, fit['index']), np.nan) for fit in self.fits])

  def plot_writer_data(self, tag='mean_score', phase='train', smooth=1, ci=0.95, managers=None,
                       path=None, references=None, labels=None):
    """Mean of `tag` over the fits with a confidence band; other managers on the same axes.

    Args:
      tag: a logged value, e.g. 'mean_score'.
      phase: the phase whose rows are plotted.
      smooth: moving-average window (rows) applied to each fit before averaging.
      ci: confidence level of the band (Student's t over fits); 0 draws none.
      managers: other managers to draw beside this one.
      path: PNG to write; defaults to `<directory>/<tag>.png`.
      references: optional {label: value} drawn as dashed horizontal lines.
      labels: optional curve labels, this experiment's first, then one per manager
        (default: the experiments' names).

    Returns:
      The matplotlib Figure.
    """
    from agents.experiment import plots
    frames = [self.get_writer_data()] + [m.get_writer_data() for m in (managers or [])]
    path = path or os.path.join(self.directory, f'{tag.replace("/", "_")}.png')
    return plots.plot_writer_data(frames, tag, phase=phase, smooth=smooth, ci=ci, path=path,
                                  references=references, labels=labels)

  # --- Search, evaluation, profiling. ---

  def optimize_hyperparams(self, n_trials=20, timeout=None, n_fit=2, sampler='tpe',
                           pruner='median', fit_fraction=0.25, continue_previous=False,
                           n_workers=1, objective=None, search_space=None, budget=None,
                           custom_eval_function=None):
    """Searches hyperparameters with Optuna; see `agents.experiment.search.optimize`.

    With an agent class, the space's keys are constructor arguments (or the class's
    `sample_parameters(trial)` classmethod samples them, as in rlberry), the default
    objective is the mean of `eval(**eval_kwargs)` over a trial's agents, and the best
    values are merged into `init_kwargs`. The arguments are `search.optimize`'s, with
    rlberry's `custom_eval_function`: a callable taking the list of a trial's trained
    agents (`get_agent_instances()` of the trial) and returning the float to maximise
    (give it or `objective`, not both).

    Returns:
      The best parameters (dotted keys, or constructor arguments); `self.config` (or
      `self.init_kwargs`) is updated with them and, for a config, the best config is
      written as `<directory>/best_config.yaml`.
    """
    from agents.experiment import search
    return search.optimize(
        self, n_trials=n_trials, timeout=timeout, n_fit=n_fit, sampler=sampler, pruner=pruner,
        fit_fraction=fit_fraction, continue_previous=continue_previous, n_workers=n_workers,
        objective=objective, search_space=search_space, budget=budget,
        custom_eval_function=custom_eval_function)

  def trial_manager(self, params, n_fit, budget, output_dir, max_workers, name):
    """The experiment of one search trial: this one with `params` and its own fits.

    Args:
      params: the trial's values (dotted config keys, or constructor arguments).
      n_fit: the trial's fits.
      budget: their budget.
      output_dir: the folder of the trials.
      max_workers: fits of the trial at once.
      name: the trial's folder name.
    """
    common = dict(n_fit=n_fit, fit_budget=budget, output_dir=output_dir,
                  parallelization=self.parallelization, max_workers=max_workers,
                  seed=self.seed_entropy, name=name, ray_address=self.ray_address,
                  mp_context=self.mp_context, quiet=True)
    if self.agent_class is None:
      child = type(self)(self.config, overrides=params, **common)
    else:
      per_instance = None
      if self.init_kwargs_per_instance:  # Fit i of a trial takes entry i (cycled).
        entries = self.init_kwargs_per_instance
        per_instance = [entries[i % len(entries)] for i in range(n_fit)]
      child = type(self)(
          agent_class=self.agent_class, train_env=self.train_env, eval_env=self.eval_env,
          init_kwargs=dict(self.init_kwargs, **params), init_kwargs_per_instance=per_instance,
          fit_kwargs=self.fit_kwargs, eval_kwargs=self.eval_kwargs, **common)
    child.tracking_group = self.tracking_group
    return child

  def eval_agents(self, suite=None, workers=None, use_ray=None, *, n_simulations=None,
                  eval_kwargs=None, agent_id=None, weights='newest'):
    """Evaluates every finished fit on a suite through the evaluation API (`agents.evaluation`).

    With an agent class, it is rlberry's `eval_agents` instead: `n_simulations` calls
    of `agent.eval(**eval_kwargs)` (default `2 * n_fit` calls, with the manager's
    `eval_kwargs`), each on fit `agent_id`'s agent or on one drawn at random (seeded by
    the manager's seed); it returns the list of their values.

    Each fit's policy (`run:<run_dir>`, its latest checkpoint) flies every seed
    of the suite; the results go to `<run_dir>/eval-<suite>/` (the evaluation's
    own shard files, so an interrupted evaluation resumes), replacing results of an
    earlier checkpoint of the run there. A fit whose last training evaluation phase
    (`loop.eval_suite`) flew that checkpoint on the same suite is not flown again: its
    rows are that phase's, `<run_dir>/eval_suite/step-<STEP>/`, and an
    `eval-<suite>/` holding an earlier checkpoint's results is removed, so no folder
    of the fit shows stale results.

    With `weights='best'`, each fit's `best_policy/` flies instead: the weights that
    scored best on the run's `loop.select_suite` (`agents.training.trainer.BestPolicy`). The
    training evaluation phase of the same step flew those weights, so its rows are taken
    when it flew this suite; otherwise they fly into
    `<run_dir>/eval-<suite>-best-step-<STEP>/`, and the folder of an earlier choice goes.

    Args:
      suite: a suite name (see `agents.evaluation.suite_names()`) or `Suite`;
        defaults to the manager's `eval_suite`, else 'small_eval'.
      workers: local worker processes of each evaluation (None: the CPU count).
      use_ray: fly on Ray (default: when the manager's parallelization is 'ray').
      weights: 'newest' (the latest checkpoint) or 'best' (`best_policy/`).

    Returns:
      DataFrame with one row per fit and seed: name, fit, seed, and the
      evaluation's per-seed fields (twr50, cumulative_reward, ...).

    Raises:
      NotImplementedError: the evaluation package is not installed in this tree.
      ExperimentError: no fit has finished, `weights` is unknown, or a fit has no
        `best_policy/` (trained without `loop.select_suite`) for `weights='best'`.
    """
    if weights not in ('newest', 'best'):
      raise ExperimentError(f"weights must be 'newest' or 'best', got {weights!r}.")
    if self.agent_class is not None:
      if suite is not None or workers is not None or use_ray is not None \
          or weights != 'newest':
        raise ExperimentError('suite, workers, use_ray and weights evaluate configs; an '
                              'agent class takes n_simulations, eval_kwargs and agent_id.')
      return self._eval_agent_instances(n_simulations, eval_kwargs, agent_id)
    if (n_simulations, eval_kwargs, agent_id) != (None, None, None):
      raise ExperimentError('n_simulations, eval_kwargs and agent_id evaluate an agent '
                            'class; a config takes suite, workers and use_ray.')
    try:
      from agents.evaluation import during_training, policies
    except ImportError as error:
      raise NotImplementedError(
          'eval_agents needs the evaluation API agents.evaluation (issue 11), which is not '
          f'in this tree ({error}); final training scores are in final_scores() and '
          'get_writer_data().') from error
    import pandas as pd
    suite = suite or self.eval_suite or 'small_eval'
    finished = [fit for fit in self.fits if fit['status'] == fitting.FINISHED]
    if not finished:
      raise ExperimentError(f'{self.name}: no fit has finished; call fit() first.')
    rows = []
    for fit in finished:
      run_dir = self.run_dir(fit['index'])
      if weights == 'best':
        results = self._best_results(fit['index'], suite, workers, use_ray)
      else:
        newest = policies.describe_agent(f'run:{run_dir}')['checkpoint']
        # Training's last evaluation phase may have flown this checkpoint on this suite.
        results = during_training.phase_results(run_dir, newest, suite)
        if results is None:
          results = self._fly(run_dir, newest, suite, workers, use_ray)
        else:
          _drop_stale_results(run_dir, newest, suite)
      for result in results:
        record = result.to_dict()
        record.pop('flight_path', None)
        rows.append(dict(name=self.name, fit=fit['index'], **record))
    return pd.DataFrame(rows).sort_values(['fit', 'seed']).reset_index(drop=True)

  def _best_results(self, index, suite, workers, use_ray):
    """A fit's `best_policy/` on a suite: its training phase's rows, else flown."""
    from agents.evaluation import during_training
    from agents.training import trainer
    run_dir = self.run_dir(index)
    selection = trainer.BestPolicy.read(run_dir)
    if selection is None:
      raise ExperimentError(f'{self.name}: fit {index} has no best_policy/ (it was trained '
                            'without loop.select_suite); evaluate its newest weights.')
    results = during_training.phase_results(run_dir, f"ckpt-{selection['step']}", suite)
    if results is not None:
      return results
    # One folder per choice, named by its step: those of earlier choices are removed.
    eval_dir = f"{_eval_dir(run_dir, suite)}-best-step-{selection['step']}"
    prefix = os.path.basename(_eval_dir(run_dir, suite)) + '-best-step-'
    for name in os.listdir(run_dir):
      if name.startswith(prefix) and os.path.join(run_dir, name) != eval_dir:
        shutil.rmtree(os.path.join(run_dir, name))
    return self._evaluate(f'savedmodel:{os.path.join(run_dir, trainer.BestPolicy.FOLDER)}',
                          suite, eval_dir, workers, use_ray)

  def _fly(self, run_dir, checkpoint, suite, workers, use_ray):
    """Flies a fit's newest checkpoint on a suite into `<run_dir>/eval-<suite>/`; its results."""
    from agents.evaluation import results as results_lib
    eval_dir = _eval_dir(run_dir, suite)
    # The folder holds the run's newest checkpoint's results: those of an earlier one
    # (a search evaluates after every chunk of training) are replaced.
    stale = results_lib.run_checkpoints(eval_dir, run_dir) - {checkpoint}
    return self._evaluate(f'run:{run_dir}', suite, eval_dir, workers, use_ray,
                          overwrite=bool(stale))

  def _evaluate(self, spec, suite, eval_dir, workers, use_ray, overwrite=False):
    """Flies an agent spec on a suite into `eval_dir` (resuming it); every seed's results."""
    from agents import evaluation
    evaluation.evaluate(
        spec, suite, eval_dir,
        workers=workers if workers is not None else (os.cpu_count() or 1),
        use_ray=self.parallelization == 'ray' if use_ray is None else use_ray,
        ray_address=self.ray_address, progress=not self.quiet, artifacts=False,
        overwrite=overwrite)
    _, results = evaluation.load(eval_dir)  # Every seed, also those flown before.
    return results

  def _eval_agent_instances(self, n_simulations, eval_kwargs, agent_id):
    instances = self.get_agent_instances()
    if agent_id is not None and not 0 <= agent_id < self.n_fit:
      raise ExperimentError(f'agent_id must be in [0, {self.n_fit}), got {agent_id!r}.')
    n_simulations = 2 * self.n_fit if n_simulations is None else n_simulations
    if isinstance(n_simulations, bool) or not isinstance(n_simulations, int) \
        or n_simulations < 1:
      raise ExperimentError(f'n_simulations must be an int >= 1, got {n_simulations!r}.')
    kwargs = self.eval_kwargs if eval_kwargs is None else dict(eval_kwargs)
    generator = np.random.default_rng(self.seed_entropy)
    values = []
    for _ in range(n_simulations):
      index = agent_id if agent_id is not None else int(generator.integers(self.n_fit))
      values.append(float(instances[index].eval(**kwargs)))
    return values

  def get_agent_instances(self):
    """The `n_fit` trained agents, in fit order (rlberry's `get_agent_instances`).

    For an agent class: the agents fitted in this process, else those their `save`
    wrote, restored with the class's `load(filename, env=..., **init_kwargs)`. For a
    config: each fit's trained policy as the evaluation API flies it (`run:<run_dir>`,
    its newest checkpoint; a batched policy of one row).

    Raises:
      ExperimentError: a fit has no trained agent here (not fitted yet, or fitted in
        another process by a class without save and load).
    """
    if self.agent_class is None:
      return [self._fitted_policy(fit) for fit in self.fits]
    agents = []
    for fit in self.fits:
      agent = self._instances.get(fit['index'])
      if agent is None and fit.get('saved_agent') and fit['status'] == fitting.FINISHED:
        spec = self._fit_spec(fit['index'], fit['step'])
        agent, _ = agent_fitting.build_or_restore(spec)
        if spec.agent.saved is None or agent is None:
          agent = None
        else:
          self._instances[fit['index']] = agent
      if agent is None:
        raise ExperimentError(
            f'{self.name}: fit {fit["index"]} has no trained agent here (status '
            f'{fit["status"]}); call fit() first. An agent class fitted in other processes '
            'needs save(filename) and a classmethod load(filename, **kwargs).')
      agents.append(agent)
    return agents

  def _fitted_policy(self, fit):
    if fit['status'] != fitting.FINISHED:
      raise ExperimentError(f'{self.name}: fit {fit["index"]} has not finished (status '
                            f'{fit["status"]}); call fit() first.')
    from agents import evaluation
    return evaluation.make_policy(f'run:{self.run_dir(fit["index"])}', batch_size=1)

  def build_eval_env(self):
    """A new evaluation environment, seeded from the manager's seed (rlberry's).

    For an agent class: `eval_env` (else `train_env`) built as the fits' environments
    are; for a config: one environment of the config (`agents.training.builders.make_env`).
    """
    seed = int(np.random.SeedSequence(self.seed_entropy).generate_state(1)[0] >> 1)
    if self.agent_class is not None:
      return agent_classes.make_env(self.eval_env or self.train_env, seed)
    return configs_and_training.make_env(self.config, seed)

  def clear_output_dir(self):
    """Deletes the manager's folder, `<output_dir>/<name>`, with every fit, trial and
    search in it, and forgets the fits (rlberry's `clear_output_dir`); the manager
    starts afresh on the next `fit`.

    Raises:
      ExperimentError: another process is fitting this experiment (nothing is deleted).
    """
    if not os.path.isdir(self.directory):
      return
    try:
      with directory_lock.hold(self.directory, 'experiment'):
        shutil.rmtree(self.directory)
    except directory_lock.DirectoryBusyError as error:
      raise ExperimentError(str(error)) from None
    self.fits = self._new_fits()
    self.study = None
    self._instances = {}

  def generate_profile(self, budget=None, fname=None, lines=20):
    """Profiles a short fit in this process with cProfile; prints the top lines and saves it.

    Args:
      budget: training steps of the profiled fit (default 10 % of fit_budget).
      fname: `.prof` file to write; defaults to `<directory>/profile.prof`.
      lines: how many lines of the cumulative-time table to print.

    Returns:
      The path of the saved profile (readable with `pstats` or snakeviz).
    """
    budget = _check_budget(budget or max(1, self.fit_budget // 10), 'budget')
    run_dir = os.path.join(self.directory, 'profile-run')
    spec = self._fit_spec(0, budget, run_dir=run_dir, fresh=True)
    fname = fname or os.path.join(self.directory, 'profile.prof')
    os.makedirs(os.path.dirname(os.path.abspath(fname)), exist_ok=True)
    profiler = cProfile.Profile()
    profiler.enable()
    try:
      fitting.run_fit(spec)
    finally:
      profiler.disable()
    profiler.dump_stats(fname)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats('cumulative').print_stats(lines)
    print(text.getvalue())
    return fname

  # --- Saving and loading. ---

  def _manifest_data(self):
    agent = None
    if self.agent_class is not None:
      agent = dict(
          agent_class=agent_classes.class_path(self.agent_class),
          train_env=agent_classes.env_to_record(self.train_env),
          eval_env=agent_classes.env_to_record(self.eval_env),
          init_kwargs=agent_classes.record(self.init_kwargs),
          init_kwargs_per_instance=agent_classes.record(self.init_kwargs_per_instance),
          fit_kwargs=agent_classes.record(self.fit_kwargs),
          eval_kwargs=agent_classes.record(self.eval_kwargs))
    return dict(
        agent=agent, name=self.name, config_name=self.config_name,
        config=copy.deepcopy(self.config),
        overrides=self.overrides, overrides_per_fit=self.overrides_per_fit, n_fit=self.n_fit,
        fit_budget=self.fit_budget, seed_entropy=self.seed_entropy,
        parallelization=self.parallelization, max_workers=self.max_workers,
        eval_suite=self.eval_suite, ray_address=self.ray_address, fits=self.fits,
        study=self.study)

  def save(self):
    """Writes `experiment.yaml` in the manager's directory; returns the directory."""
    manifest.write(self.directory, self._manifest_data())
    return self.directory

  @classmethod
  def load(cls, path, quiet=False):
    """Rebuilds a manager from its directory (or its `experiment.yaml`).

    Args:
      path: the experiment's directory (`<output_dir>/<name>`) or its manifest.
      quiet: no progress bars or summary tables.

    Returns:
      The `ExperimentManager`, its fits' states as saved.

    Raises:
      manifest.NotAnExperimentError: `path` holds no experiment manifest.
    """
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.basename(path) == manifest.FILENAME:
      path = os.path.dirname(path)
    data = manifest.read(path)
    common = dict(n_fit=data['n_fit'], fit_budget=data['fit_budget'],
                  output_dir=os.path.dirname(path), parallelization=data['parallelization'],
                  max_workers=data['max_workers'], seed=data['seed_entropy'],
                  eval_suite=data['eval_suite'], name=os.path.basename(path),
                  ray_address=data.get('ray_address'), quiet=quiet)
    agent = data.get('agent')
    if agent is not None:  # The arguments as recorded: plain values come back as given.
      return cls(
          agent_class=agent_classes.import_path(agent['agent_class'], 'agent_class'),
          train_env=agent_classes.env_from_record(agent['train_env'], 'train_env'),
          eval_env=agent_classes.env_from_record(agent['eval_env'], 'eval_env'),
          init_kwargs=agent['init_kwargs'],
          init_kwargs_per_instance=agent['init_kwargs_per_instance'],
          fit_kwargs=agent['fit_kwargs'], eval_kwargs=agent['eval_kwargs'], **common)
    manager = cls(data['config'], overrides_per_fit=data['overrides_per_fit'], **common)
    manager.config_name = data.get('config_name')
    manager.overrides = dict(data.get('overrides') or {})
    return manager

  def __repr__(self):
    what = f'agent_class={self.agent_class.__name__}, ' if self.agent_class else ''
    return (f'ExperimentManager({what}name={self.name!r}, n_fit={self.n_fit}, '
            f'fit_budget={self.fit_budget}, directory={self.directory!r})')


def _agent_class_name(agent_class):
  """rlberry's default name of an agent class's experiment: its `name`, else the class's."""
  name = getattr(agent_class, 'name', None)
  return name if isinstance(name, str) and name else agent_class.__name__


def _check_budget(budget, what):
  if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
    raise ExperimentError(f'{what} must be an int >= 1 (training steps, or an agent class\'s '
                          f'budget), got {budget!r}.')
  return int(budget)


def _dotted(mapping, prefix=''):
  """{dotted key: value} of a nested mapping (its sections' leaves)."""
  flat = {}
  for key, value in mapping.items():
    if isinstance(value, dict) and value:
      flat.update(_dotted(value, f'{prefix}{key}.'))
    else:
      flat[f'{prefix}{key}'] = value
  return flat


def _without(config, dotted_keys):
  for key in dotted_keys:
    config = configs_and_training.without(config, key)
  return config


def _eval_dir(run_dir, suite):
  """`<run_dir>/eval-<suite>/`, where `eval_agents` flies a fit (suite: a name or `Suite`)."""
  return os.path.join(run_dir, f'eval-{suite if isinstance(suite, str) else suite.name}')


def _drop_stale_results(run_dir, checkpoint, suite):
  """Removes `<run_dir>/eval-<suite>/` when it holds only results of the run's other
  checkpoints (its newest, `checkpoint`, was flown by a training evaluation phase)."""
  from agents.evaluation import results as results_lib
  eval_dir = _eval_dir(run_dir, suite)
  if not os.path.isdir(eval_dir):
    return
  flown = results_lib.run_checkpoints(eval_dir, run_dir)
  if flown and checkpoint not in flown:
    shutil.rmtree(eval_dir)
    _LOG.info('Removed %s: it held results of %s; %s was flown by training\'s last '
              'evaluation phase.', eval_dir, ', '.join(sorted(flown)), checkpoint)
