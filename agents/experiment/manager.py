"""`ExperimentManager`: rlberry's experiment manager, on this project's fits.

    from agents.experiment import AgentWithSimplePolicy, ExperimentManager

    manager = ExperimentManager(MyAgent, ('CartPole-v1', {}), fit_budget=10_000,
                                eval_kwargs=dict(eval_horizon=500), n_fit=4, seed=0)
    manager.fit()                        # 4 agents, each MyAgent(env=...).fit(10_000)
    manager.eval_agents(4)               # 4 calls of agent.eval(**eval_kwargs): 4 floats
    data = manager.get_writer_data()     # name, tag, value, dw_time_elapsed, global_step, n_simu
    path = manager.save()                # a pathlib.Path; ExperimentManager.load(path)

Its arguments and methods are rlberry's (name, order, defaults). Fit `i` runs in
`<directory>/fit0i-<agent_name>/`, the agent's `output_dir`, with the `i`-th seed spawned
from the manager's seed; `directory` is `<output_dir>/manager_data/<agent_name>_<id>`
(`outdir_id_style`). An agent class written for BLE (`agents.python_agents.agent.Agent`)
is fitted through `agents.python_agents.fit_adapter.FitAdapter` (see `agent_classes.py`).

The configs of this project have their own entry, `ExperimentManager.from_config(config,
...)`, which returns a `ConfigExperiment` (`config_experiment.py`): the command line's
experiments. `docs/coming_from_rlberry.md` lists what differs from rlberry, and why.
"""

import functools
import logging
import os
import pathlib
import time
import uuid

import numpy as np

from agents.experiment import (
    agent_classes,
    agent_fitting,
    experiment_base,
    fitting,
    manifest,
    writer_data,
)
from agents.experiment.errors import ExperimentError

_LOG = logging.getLogger(__name__)
# Agent classes managers of this process were built with, by 'module:qualname': `load`
# finds a class defined in a notebook or a function here (no code is read from disk).
_CLASSES_SEEN = {}
# The rlberry release whose manager this one follows (rlberry's `rlberry_version`).
RLBERRY_VERSION = '0.7.3'

PARALLELIZATIONS = ('thread', 'process', 'ray', 'inline')
START_METHODS = ('spawn', 'forkserver')
OUTDIR_ID_STYLES = (None, 'unique', 'timestamp')
SAMPLERS = {'optuna_default': 'tpe', 'tpe': 'tpe', 'random': 'random', 'grid': 'grid',
            'cmaes': 'cmaes'}
DEFAULT_OUTPUT_DIR = 'experiments'


class ExperimentManager(experiment_base.Experiment):
  """Trains, evaluates and searches `n_fit` instances of an agent class (rlberry's manager).

  Its arguments are kept, checked, as attributes of the same names (`agent_class`,
  `train_env`, `init_kwargs`, `fit_budget`, ...); `output_dir` is the `pathlib.Path` of
  the manager's folder (`directory`, as a str).

  With what it inherits it has more than 25 methods, on purpose: 13 are rlberry's public
  API, which users call by name on this one class; 4 answer the search (`search_space`,
  `default_objective`, `trial_manager`, `take_best`); the rest are the fit machinery of
  `experiment_base.Experiment`, shared with `ConfigExperiment`.
  """

  rlberry_version = RLBERRY_VERSION
  unique_id = timestamp_id = None
  _class_given = False  # True when `load(..., agent_class=)` stands the class in

  def __init__(self, agent_class, train_env=(None, None), fit_budget=None, eval_env=None,
               init_kwargs=None, fit_kwargs=None, eval_kwargs=None, agent_name=None,
               n_fit=4, output_dir=None, parallelization='thread', max_workers=None,
               mp_context='spawn', worker_logging_level=None, seed=None,
               enable_tensorboard=False, outdir_id_style='timestamp',
               default_writer_kwargs=None, init_kwargs_per_instance=None,
               thread_shared_data=None):
    """Checks every argument and every fit's constructor arguments before anything runs.

    Args:
      agent_class: a class with `fit(budget, **kwargs)` and `eval(**kwargs)`, such as a
        subclass of `agents.experiment.Agent` (or a class with BLE's Agent interface).
      train_env: `(constructor or Gymnasium id, kwargs)` of the training environment.
      fit_budget: what one `fit()` call trains each agent for; None takes
        `fit_kwargs['fit_budget']`.
      eval_env: `(constructor or Gymnasium id, kwargs)` of evaluation; None: `train_env`.
      init_kwargs: the constructor's keyword arguments, shared by every fit.
      fit_kwargs: extra keyword arguments of the agents' `fit`.
      eval_kwargs: keyword arguments of the agents' `eval` (`eval_agents`).
      agent_name: the name of the agents and of the manager's folder; None: the class's
        `name` attribute, else its class name.
      n_fit: agents to fit, at least 1.
      output_dir: where the manager's folder goes (None: 'experiments').
      parallelization: 'thread' (threads of this process), 'process' (worker processes),
        'ray' (Ray tasks) or 'inline' (one after another in this thread). A start method
        ('spawn', 'forkserver') here means 'process' started that way.
      max_workers: fits at once; None: min(n_fit, CPU count).
      mp_context: 'spawn' or 'forkserver', the start method of worker processes.
      worker_logging_level: level of the `agents` logger while fits run (None: unchanged).
      seed: None (fresh entropy), an int, a `numpy.random.SeedSequence` or a `Seeder`.
      enable_tensorboard: the agents' writers also write TensorBoard events to
        `<directory>/tensorboard/<fit index>/`.
      outdir_id_style: the folder's name: None `<agent_name>` (a second manager of the same
        experiment picks up its fits), 'unique' `<agent_name>_<random id>`, or 'timestamp'
        `<agent_name>_<date>_<time>_<short id>`.
      default_writer_kwargs: arguments of every agent's `DefaultWriter`, e.g.
        `{'style_log': 'one_line'}`.
      init_kwargs_per_instance: optional list of `n_fit` mappings that add to (and win
        over) `init_kwargs`, one per fit.
      thread_shared_data: a mapping every agent sees as `thread_shared_data` (shared in
        threads, a copy in each process).

    Raises:
      ExperimentError: a bad argument (named), or the folder holds another experiment.
    """
    name = name_of_agent(agent_class, agent_name)
    self.unique_id = uuid.uuid4().hex
    self.timestamp_id = f'{time.strftime("%Y-%m-%d_%H-%M-%S")}_{self.unique_id[:8]}'
    self._configure(
        agent_class, train_env, fit_budget, eval_env, init_kwargs, fit_kwargs, eval_kwargs,
        name, n_fit, parallelization, max_workers, mp_context, worker_logging_level,
        enable_tensorboard, outdir_id_style, default_writer_kwargs, init_kwargs_per_instance,
        thread_shared_data)
    root = os.path.abspath(os.path.expanduser(os.fspath(output_dir or DEFAULT_OUTPUT_DIR)))
    folder = {None: name, 'unique': f'{name}_{self.unique_id}',
              'timestamp': f'{name}_{self.timestamp_id}'}[outdir_id_style]
    self._start(os.path.join(root, 'manager_data', folder), seed)

  @classmethod
  def from_config(cls, config, **kwargs):
    """The experiment of a config of this project (the command line's): a `ConfigExperiment`.

    Args:
      config: a registered config's name, a YAML config file or a config mapping.
      **kwargs: `ConfigExperiment`'s other arguments (n_fit, fit_budget, output_dir,
        parallelization, max_workers, seed, overrides, overrides_per_fit, eval_suite, name,
        ray_address, mp_context, quiet).
    """
    from agents.experiment import config_experiment
    return config_experiment.ConfigExperiment(config, **kwargs)

  def _configure(self, agent_class, train_env, fit_budget, eval_env, init_kwargs, fit_kwargs,
                 eval_kwargs, agent_name, n_fit, parallelization, max_workers, mp_context,
                 worker_logging_level, enable_tensorboard, outdir_id_style,
                 default_writer_kwargs, init_kwargs_per_instance, thread_shared_data):
    self.agent_class = agent_classes.check_agent_class(agent_class)
    _CLASSES_SEEN[agent_classes.class_path(agent_class)] = agent_class
    self.n_fit = experiment_base.check_n_fit(n_fit)
    self.agent_name = self.name = agent_name
    if os.sep in self.name or self.name in ('', '.', '..'):
      raise ExperimentError(f'agent_name must be a plain folder name, got {self.name!r}.')
    self.train_env = agent_classes.check_env(train_env, 'train_env')
    self.eval_env = agent_classes.check_env(eval_env, 'eval_env') \
        if eval_env is not None else None
    self.init_kwargs = dict(init_kwargs or {})
    self.fit_kwargs = dict(fit_kwargs or {})
    self.eval_kwargs = dict(eval_kwargs or {})
    if fit_budget is None:
      fit_budget = self.fit_kwargs.pop('fit_budget', None)
    if fit_budget is None:
      raise ExperimentError('[ExperimentManager] fit_budget missing in __init__(). Pass '
                            "fit_budget= (or fit_kwargs['fit_budget']).")
    self.fit_budget = _check_agent_budget(fit_budget, 'fit_budget')
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
    self.parallelization, self.max_workers, self.mp_context = \
        parallelization, max_workers, mp_context
    self._trial_parallelization = parallelization  # How a search's trials fit.
    self.ray_address = None
    self.worker_logging_level = worker_logging_level
    self.enable_tensorboard = bool(enable_tensorboard)
    self.outdir_id_style = outdir_id_style
    self.default_writer_kwargs = dict(default_writer_kwargs or {})
    if init_kwargs_per_instance is not None and len(init_kwargs_per_instance) != self.n_fit:
      raise ExperimentError(f'init_kwargs_per_instance has {len(init_kwargs_per_instance)} '
                            f'entries; n_fit is {self.n_fit}.')
    self.init_kwargs_per_instance = [dict(item) for item in init_kwargs_per_instance] \
        if init_kwargs_per_instance is not None else None
    self.thread_shared_data = thread_shared_data  # Not copied: the threads share it.
    self.writers = [('default', None)] * self.n_fit
    self._writers_off = False
    for index in range(self.n_fit):
      agent_classes.check_init_kwargs(self.agent_class, self.instance_kwargs(index),
                                      f'init_kwargs of fit {index}')

  def _start(self, directory, seed):
    """Takes `directory` as the manager's folder and opens (or picks up) its fits."""
    self.directory = directory
    if os.path.exists(directory) and not os.path.isdir(directory):
      raise ExperimentError(f'output_dir: {directory} is a file, not a folder.')
    self._open(seed)
    self._eval_rng = np.random.default_rng([self.seed_entropy, 1])

  @property
  def output_dir(self):
    """Where the manager's folder is, a `pathlib.Path`: the `output_dir` given (rlberry's)."""
    return pathlib.Path(self.directory).parent.parent

  @property
  def output_dir_(self):
    """The manager's folder, `<output_dir>/manager_data/<name>[_<id>]` (rlberry's)."""
    return pathlib.Path(self.directory)

  @property
  def seeder(self):
    """The `Seeder` of the manager's seed (each fit's seed is spawned from it)."""
    from agents.experiment import agent_base
    return agent_base.Seeder(np.random.SeedSequence(self.seed_entropy), spawn_seed_seq=False)

  @property
  def agent_handlers(self):
    """The trained agents, in fit order (rlberry's); empty before the first `fit`."""
    if not any(fit['index'] in self._instances or fit.get('saved_agent') for fit in self.fits):
      return []
    return self.get_agent_instances()

  @property
  def best_hyperparams(self):
    """The best constructor arguments of the last `optimize_hyperparams` (None before)."""
    return dict(self.study['best_params']) if self.study and self.study.get('best_params') \
        else None

  @property
  def optuna_study(self):
    """The `optuna.Study` of the last `optimize_hyperparams` (None before)."""
    if not self.study:
      return None
    import optuna

    from agents.experiment import search
    return optuna.load_study(study_name=self.study['study_name'],
                             storage=search.storage_url(self.directory))

  def __eq__(self, other):
    """Same agent class, environments, arguments, budget, fits and seed (rlberry's); the
    folder and the fits' progress do not count."""
    if not isinstance(other, ExperimentManager):
      return NotImplemented
    mine, theirs = self._manifest_data(), other._manifest_data()
    ignored = ('fits', 'study', 'unique_id', 'timestamp_id')
    return all(mine[key] == theirs[key] for key in mine if key not in ignored)

  __hash__ = None  # Equal managers are equal by value, and a manager changes as it fits.

  def instance_kwargs(self, index):
    """The constructor arguments of fit `index`: `init_kwargs`, then its own
    `init_kwargs_per_instance` entry, which wins."""
    own = self.init_kwargs_per_instance[index] if self.init_kwargs_per_instance else {}
    return dict(self.init_kwargs, **own)

  def _check_folder_use(self, previous):
    if previous.get('agent') is None:
      raise ExperimentError(f'{self.directory} holds the experiment of a config; load it '
                            'with ExperimentManager.load.')

  def _compared_keys(self, previous):
    mine = self._manifest_data()
    if self._class_given:  # load(..., agent_class=): it stands in.
      mine['agent'] = dict(mine['agent'], agent_class=previous['agent']['agent_class'])
    return [key for key in ('n_fit', 'seed_entropy', 'agent') if previous.get(key) != mine[key]]

  # --- Fitting. ---

  def fit(self, budget=None, **kwargs):
    """Fits every agent for `budget` more (rlberry's `fit`), in parallel.

    A fit that raises is reported with its index and the others go on. Ctrl-C starts no
    new fit; the state is saved and KeyboardInterrupt propagates.

    Args:
      budget: what each agent's `fit` gets (None: `fit_budget`).
      **kwargs: extra keyword arguments of this call's `fit`s (on top of `fit_kwargs`).

    Raises:
      ExperimentError: a bad budget, or another process is fitting this experiment.
    """
    budget = _check_agent_budget(self.fit_budget if budget is None else budget, 'budget')
    self._run({fit['index']: fit['step'] + budget for fit in self.fits}, fit_kwargs=kwargs)
    _LOG.info("The ExperimentManager was saved in : '%s'", manifest.path_in(self.directory))

  def _writer_kwargs(self, index):
    tensorboard = dict(log_dir=os.path.join(self.directory, 'tensorboard', str(index))) \
        if self.enable_tensorboard else None
    return dict(dict(name=self.agent_name, log_interval=3, tensorboard_kwargs=tensorboard,
                     execution_metadata={'fit': index}), **self.default_writer_kwargs)

  def _fit_spec(self, index, budget, threads=1, run_dir=None, fresh=False):
    fit = self.fits[index]
    saved = fit.get('saved_agent')
    writer = (None, None) if self._writers_off else self.writers[index]
    base_kwargs = dict(_default_writer_kwargs=self._writer_kwargs(index),
                       _execution_metadata={'fit': index},
                       _thread_shared_data=self.thread_shared_data)
    agent = agent_fitting.AgentFit(
        self.agent_class, self.train_env, self.eval_env, self.instance_kwargs(index),
        dict(self.fit_kwargs), done=0 if fresh else fit['step'],
        saved=os.path.join(self.directory, saved) if saved and not fresh else None,
        writer=writer, base_kwargs=base_kwargs, logging_level=self.worker_logging_level)
    return fitting.FitSpec(index, run_dir or self.run_dir(index), None, budget, threads,
                           seed=fit['seed'], agent=agent)

  def set_writer(self, idx, writer_fn, writer_kwargs=None):
    """Sets the writer of agent `idx` for the next fits (rlberry's `set_writer`).

    Args:
      idx: the fit's index, 0 <= idx < n_fit.
      writer_fn: 'default' (the agent's `DefaultWriter`), None (a `NullWriter`, which keeps
        nothing and is false in `if agent.writer:`), or a callable
        returning the writer (`writer_fn(**writer_kwargs)`), handed to the agent's
        `set_writer`. Only a `DefaultWriter`'s rows reach `get_writer_data`.
      writer_kwargs: keyword arguments of `writer_fn`.

    Raises:
      ExperimentError: a bad index or writer_fn.
    """
    if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)) \
        or not 0 <= idx < self.n_fit:
      raise ExperimentError(f'set_writer: idx must be in [0, {self.n_fit}), got {idx!r}.')
    if writer_fn != 'default' and writer_fn is not None and not callable(writer_fn):
      raise ExperimentError(f"set_writer: writer_fn must be 'default', None or a callable, "
                            f'got {writer_fn!r}.')
    self.writers[int(idx)] = (writer_fn, dict(writer_kwargs or {}))

  # --- Agents and their data. ---

  def get_agent_instances(self):
    """The `n_fit` trained agents, in fit order.

    The agents fitted in this process, else those their `save` wrote, restored with the
    class's `load(filename, env=..., **init_kwargs)`.

    Raises:
      ExperimentError: a fit has no trained agent here (not fitted yet, or fitted in
        another process by a class without save and load).
    """
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

  def eval_agents(self, n_simulations=None, eval_kwargs=None, agent_id=None, verbose=True):
    """Calls the agents' `eval(**eval_kwargs)` `n_simulations` times; a list of the floats.

    Args:
      n_simulations: how many `eval` calls (None: 2 * n_fit).
      eval_kwargs: the calls' keyword arguments (None: the manager's `eval_kwargs`).
      agent_id: the fit whose agent evaluates; None: one drawn at random per call (drawn
        from the manager's seed).
      verbose: log each call at INFO (logger `agents.experiment.manager`).

    Returns:
      list of `n_simulations` floats.

    Raises:
      ExperimentError: a bad argument, or an agent is not fitted.
    """
    instances = self.get_agent_instances()
    if agent_id is not None and not 0 <= agent_id < self.n_fit:
      raise ExperimentError(f'agent_id must be in [0, {self.n_fit}), got {agent_id!r}.')
    n_simulations = n_simulations or 2 * self.n_fit
    if isinstance(n_simulations, bool) or not isinstance(n_simulations, (int, np.integer)) \
        or n_simulations < 1:
      raise ExperimentError(f'n_simulations must be an int >= 1, got {n_simulations!r}.')
    kwargs = dict(eval_kwargs or self.eval_kwargs)
    values = []
    for simulation in range(n_simulations):
      index = agent_id if agent_id is not None else int(self._eval_rng.integers(self.n_fit))
      values.append(float(instances[index].eval(**kwargs)))
      if verbose:
        _LOG.info('[eval] %s: simulation %d/%d (agent %d) = %.6g', self.name, simulation + 1,
                  n_simulations, index, values[-1])
    return values

  def get_writer_data(self):
    """What each fit's writer logged: {fit index: DataFrame} (rlberry's), each with the
    columns `name, tag, value, dw_time_elapsed, global_step`; a fit that logged nothing
    yet is left out.

    A BLE agent class's `metrics.jsonl` rows come too (`dw_time_elapsed` NaN).
    `agents.experiment.read_writer_data(manager)` gives them as one DataFrame.
    """
    frame = writer_data.read_writer_rows(
        self.agent_name, [(fit['index'], self.run_dir(fit['index'])) for fit in self.fits])
    columns = list(writer_data.WRITER_COLUMNS[:-1])
    return {int(index): rows[columns].reset_index(drop=True)
            for index, rows in frame.groupby('n_simu', sort=True)}

  def build_eval_env(self):
    """A new evaluation environment (`eval_env`, else `train_env`), seeded from the seed."""
    seed = int(np.random.SeedSequence(self.seed_entropy).generate_state(1)[0] >> 1)
    return agent_classes.make_env(self.eval_env or self.train_env, seed)

  def clear_handlers(self):
    """Deletes the agents' saved files (`save` wrote them in the run directories); the
    agents fitted in this process stay in memory."""
    for fit in self.fits:
      saved = fit.pop('saved_agent', None)
      path = os.path.join(self.directory, saved) if saved else None
      if path and os.path.isfile(path):
        os.remove(path)
    if os.path.isdir(self.directory):
      self.save()

  def generate_profile(self, budget=None, fname=None):
    """Fits agent 0 afresh in this process under cProfile; prints the 20 costliest lines.

    Args:
      budget: the profiled fit's budget (None: `fit_budget`).
      fname: the `.prof` file; None: `<directory>/<agent_name>_profile.prof`.

    Returns:
      The path of the saved profile.
    """
    budget = _check_agent_budget(self.fit_budget if budget is None else budget, 'budget')
    spec = self._fit_spec(0, budget, run_dir=os.path.join(self.directory, 'profile-run'),
                          fresh=True)
    fname = fname or os.path.join(self.directory, f'{self.agent_name}_profile.prof')
    return self._profile(spec, fname)

  # --- Search. ---

  def optimize_hyperparams(self, n_trials=256, timeout=60, n_fit=2, n_optuna_workers=2,
                           optuna_parallelization='thread', sampler_method='optuna_default',
                           pruner_method='halving', continue_previous=False, fit_fraction=1.0,
                           sampler_kwargs=None, disable_evaluation_writers=True,
                           custom_eval_function=None, *, search_space=None):
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
    if sampler_method not in SAMPLERS:
      raise ExperimentError(f'sampler_method must be one of {tuple(SAMPLERS)}, got '
                            f'{sampler_method!r}.')
    self._writers_off = bool(disable_evaluation_writers)
    try:
      return search.optimize(
          self, n_trials=n_trials, timeout=timeout, n_fit=n_fit,
          sampler=SAMPLERS[sampler_method], pruner=pruner_method, fit_fraction=fit_fraction,
          continue_previous=continue_previous, n_workers=n_optuna_workers,
          search_space=search_space, custom_eval_function=custom_eval_function,
          sampler_kwargs=sampler_kwargs)
    finally:
      self._writers_off = False
      self._trial_parallelization = self.parallelization

  def search_space(self, search_space):
    """The parsed space of a search (None: the class's `sample_parameters` samples).

    Raises:
      search.SearchError: no space and no `sample_parameters`, or a key the constructor
        refuses or that `init_kwargs_per_instance` sets.
    """
    from agents.experiment import search, search_distributions
    name = self.agent_class.__name__
    if search_space is None:
      if _implements_sample_parameters(self.agent_class):
        return None
      raise search.SearchError(f'agent_class {name} has no sample_parameters(trial); pass '
                               'search_space= with its constructor arguments.')
    space = search_distributions.parse(search_space)
    per_instance = {key for entry in self.init_kwargs_per_instance or () for key in entry}
    for key, distribution in space.items():
      if key in per_instance:
        raise search.SearchError(f"Search space key '{key}' is set by "
                                 'init_kwargs_per_instance; a value given per fit cannot be '
                                 'searched.')
      value = distribution.choices[0] if isinstance(
          distribution, search_distributions.Categorical) else distribution.low
      try:
        agent_classes.check_init_kwargs(self.agent_class, dict(self.init_kwargs, **{key: value}))
      except ValueError as error:
        raise search.SearchError(f"Search space key '{key}': {error}") from None
    return space

  def default_objective(self):
    """The mean of a trial's `eval_agents()` (rlberry's objective)."""
    return lambda trial_manager: float(np.mean(trial_manager.eval_agents(verbose=False)))

  def trial_manager(self, params, n_fit, budget, output_dir, max_workers, name):
    """The manager of one search trial, in `<output_dir>/<name>`: this one with `params`
    added to `init_kwargs` and `n_fit` agents of its own."""
    per_instance = None
    if self.init_kwargs_per_instance:  # Fit i of a trial takes entry i (cycled).
      entries = self.init_kwargs_per_instance
      per_instance = [entries[i % len(entries)] for i in range(n_fit)]
    child = type(self).__new__(type(self))
    child._configure(
        self.agent_class, self.train_env, budget, self.eval_env,
        dict(self.init_kwargs, **params), self.fit_kwargs, self.eval_kwargs, name, n_fit,
        self._trial_parallelization, max_workers, self.mp_context, self.worker_logging_level,
        False, None, self.default_writer_kwargs, per_instance, self.thread_shared_data)
    child._writers_off = self._writers_off
    child.unique_id = uuid.uuid4().hex
    child._start(os.path.join(output_dir, name), self.seed_entropy)
    return child

  def take_best(self, best, budget):
    """Merges the best values into `init_kwargs` (saved); says so for the summary line."""
    del budget
    self.init_kwargs.update(best)
    self.save()
    return 'init_kwargs updated'

  # --- Saving and loading. ---

  def _manifest_data(self):
    record = agent_classes.record
    agent = dict(
        agent_class=agent_classes.class_path(self.agent_class),
        train_env=agent_classes.env_to_record(self.train_env),
        eval_env=agent_classes.env_to_record(self.eval_env),
        init_kwargs=record(self.init_kwargs),
        init_kwargs_per_instance=record(self.init_kwargs_per_instance),
        fit_kwargs=record(self.fit_kwargs), eval_kwargs=record(self.eval_kwargs))
    return dict(
        agent=agent, name=self.name, unique_id=self.unique_id, timestamp_id=self.timestamp_id,
        n_fit=self.n_fit, fit_budget=self.fit_budget,
        seed_entropy=self.seed_entropy, parallelization=self.parallelization,
        max_workers=self.max_workers, mp_context=self.mp_context,
        worker_logging_level=self.worker_logging_level,
        enable_tensorboard=self.enable_tensorboard, outdir_id_style=self.outdir_id_style,
        default_writer_kwargs=record(self.default_writer_kwargs), fits=self.fits,
        study=self.study)

  @classmethod
  def load(cls, filename, *, agent_class=None):
    """The manager `save` wrote (its `experiment.yaml`, or the folder holding it).

    A folder of a config's experiment loads as the `ConfigExperiment` it is. The agent
    class is found by its recorded `module:qualname`: imported, or the class of that name
    a manager of this process was built with. Nothing is unpickled to get it.

    Args:
      filename: the `experiment.yaml` or its folder.
      agent_class: the class to use instead (one defined in a notebook or a function).

    Raises:
      manifest.NotAnExperimentError: `filename` holds no experiment manifest.
      ExperimentError: the agent class cannot be found (the message says how to fix it).
    """
    path = os.path.abspath(os.path.expanduser(os.fspath(filename)))
    if os.path.basename(path) == manifest.FILENAME:
      path = os.path.dirname(path)
    data = manifest.read(path)
    agent = data.get('agent')
    if agent is None:
      from agents.experiment import config_experiment
      return config_experiment.ConfigExperiment.load(path, quiet=True)
    manager = cls.__new__(cls)
    manager.unique_id = data.get('unique_id') or uuid.uuid4().hex
    manager.timestamp_id = data.get('timestamp_id')
    manager._class_given = agent_class is not None
    manager._configure(  # The arguments as recorded: plain values come back as given.
        agent_class or _find_agent_class(agent['agent_class']),
        agent_classes.env_from_record(agent['train_env'], 'train_env'),
        data['fit_budget'], agent_classes.env_from_record(agent['eval_env'], 'eval_env'),
        agent['init_kwargs'], agent['fit_kwargs'], agent['eval_kwargs'], data['name'],
        data['n_fit'], data['parallelization'], data['max_workers'],
        data.get('mp_context', 'spawn'), data.get('worker_logging_level'),
        data.get('enable_tensorboard', False), data.get('outdir_id_style'),
        data.get('default_writer_kwargs'), agent['init_kwargs_per_instance'], None)
    manager._start(path, data['seed_entropy'])
    return manager

  def __repr__(self):
    return (f'ExperimentManager({self.agent_class.__name__}, n_fit={self.n_fit}, '
            f'fit_budget={self.fit_budget}, output_dir={self.directory!r})')


def name_of_agent(agent_class, agent_name=None):
  """The agent's name: `agent_name`, else the class's `name`, else the class name."""
  if agent_name is not None:
    return str(agent_name)
  name = getattr(agent_class, 'name', None)
  if isinstance(name, str) and name:
    return name
  return getattr(agent_class, '__name__', repr(agent_class))


def _check_agent_budget(budget, what):
  """An agent class's budget: any int (its unit is the agent's; rlberry passes it as given).

  Raises:
    ExperimentError: not an int (a float with an integral value, as `1e4`, is taken).
  """
  if isinstance(budget, float) and budget.is_integer():
    budget = int(budget)
  if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
    raise ExperimentError(f'{what} must be an int (the agent\'s budget), got {budget!r}.')
  return int(budget)


def _find_agent_class(path):
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
  return agent_classes.import_path(path, 'agent_class')


def _implements_sample_parameters(agent_class):
  """Whether the class overrides `sample_parameters` (the base `Agent`'s raises)."""
  from agents.experiment import agent_base
  method = getattr(agent_class, 'sample_parameters', None)
  if not callable(method):
    return False
  return getattr(method, '__func__', method) is not agent_base.Agent.sample_parameters.__func__


def preset_manager(*args, **kwargs):
  """A subclass of `ExperimentManager` with some arguments set (rlberry's).

      make = preset_manager(train_env=('CartPole-v1', {}), n_fit=4, seed=42)
      ppo = make(PPOAgent, fit_budget=10_000)

  Args:
    *args: `ExperimentManager`'s positional arguments, given first.
    **kwargs: its keyword arguments, given first.

  Returns:
    The class, whose constructor takes the remaining arguments.
  """

  class Manager(ExperimentManager):
    __init__ = functools.partialmethod(ExperimentManager.__init__, *args, **kwargs)

  return Manager


AgentManager = ExperimentManager  # rlberry's former name of the class, kept by rlberry too.
