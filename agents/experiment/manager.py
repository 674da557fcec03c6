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
"""

import copy
import cProfile
import io
import logging
import os
import pstats

import numpy as np

from agents.experiment import configs_and_training, fitting, manifest, writer_data
from agents.experiment import threads as threads_lib
from agents.tools import directory_lock

_LOG = logging.getLogger(__name__)

PARALLELIZATIONS = ('process', 'ray', 'inline')
# Config keys that may differ between a manager and the experiment already in its directory.
_RESUMABLE_KEYS = (configs_and_training.BUDGET_KEY, configs_and_training.TRACK_KEY)


class ExperimentError(ValueError):
  """An experiment's arguments are invalid or do not match the experiment on disk."""


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

  def __init__(self, config, n_fit=4, fit_budget=None, output_dir='experiments',
               parallelization='process', max_workers=None, seed=None, overrides=None,
               overrides_per_fit=None, eval_suite=None, name=None, ray_address=None,
               mp_context='spawn', quiet=False):
    """Resolves and checks every fit's config; picks up the experiment already on disk.

    Args:
      config: the name of a registered config, a path to a YAML config, or a
        resolved config mapping. Its algorithm may be any registered one.
      n_fit: number of independent fits, at least 1.
      fit_budget: training steps of each fit; None keeps the config's `loop.steps`.
      output_dir: folder of experiments; the manager's is `<output_dir>/<name>`.
      parallelization: 'process' (worker processes here), 'ray' (Ray tasks), or
        'inline' (one after another in this process: debugging and tests).
      max_workers: fits running at once; None runs min(n_fit, CPU count).
      seed: int, `numpy.random.SeedSequence` or None (fresh entropy, recorded
        in the manifest).
      overrides: dotted-key overrides for every fit, e.g.
        {'algorithm.learning_rate': 1e-3}.
      overrides_per_fit: optional list of `n_fit` override mappings, one per fit.
      eval_suite: evaluation suite of `eval_agents` (None: its default).
      name: the experiment's name and folder; defaults to the config's name.
      ray_address: Ray cluster address with parallelization='ray' (None
        starts or joins a local instance).
      mp_context: 'spawn' or 'forkserver', the start method of local workers.
      quiet: no progress bars or summary tables.

    Raises:
      ExperimentError: a bad argument, or the directory holds another experiment.
      configs_and_training.ConfigError: an unknown config, key or value (named).
    """
    if isinstance(n_fit, bool) or not isinstance(n_fit, (int, np.integer)) or n_fit < 1:
      raise ExperimentError(f'n_fit must be an int >= 1, got {n_fit!r}.')
    if parallelization not in PARALLELIZATIONS:
      raise ExperimentError(
          f'parallelization must be one of {PARALLELIZATIONS}, got {parallelization!r}.')
    if max_workers is not None and (not isinstance(max_workers, int) or max_workers < 1):
      raise ExperimentError(f'max_workers must be None or an int >= 1, got {max_workers!r}.')
    if overrides_per_fit is not None and len(overrides_per_fit) != n_fit:
      raise ExperimentError(
          f'overrides_per_fit has {len(overrides_per_fit)} entries; n_fit is {n_fit}.')
    self.config_name = config if isinstance(config, str) and \
        not configs_and_training.is_yaml_path(config) else None
    self.overrides = dict(overrides or {})
    self.config = configs_and_training.resolve(config, self.overrides)
    if fit_budget is None:
      fit_budget = configs_and_training.get(self.config, configs_and_training.BUDGET_KEY)
    self.fit_budget = _check_budget(fit_budget, 'fit_budget')
    self.n_fit = int(n_fit)
    self.overrides_per_fit = [dict(item) for item in overrides_per_fit] \
        if overrides_per_fit is not None else None
    self.name = name or configs_and_training.label(config)
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
    for index in range(self.n_fit):
      self.fit_config(index)
    if previous is not None:
      self._adopt(previous)

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
    differences = [key for key in ('n_fit', 'seed_entropy', 'overrides_per_fit')
                   if previous.get(key) != mine[key]]
    previous_config = configs_and_training.migrate(previous.get('config', {}))
    old_config = _dotted(manifest.plain(_without(previous_config, _RESUMABLE_KEYS)))
    new_config = _dotted(manifest.plain(_without(self.config, _RESUMABLE_KEYS)))
    # A key declared since the experiment was saved, left at its default, changes nothing.
    declared = configs_and_training.defaults(self.config)
    for key in set(new_config) - set(old_config):
      if key in declared and new_config[key] == declared[key]:
        old_config[key] = new_config[key]
    differences += [f'config.{key}' for key in sorted(set(old_config) | set(new_config))
                    if old_config.get(key) != new_config.get(key)]
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
    # In the experiment trackers, fit k is the run '<name>-fit<k>' of the experiment <name>.
    specs = [fitting.FitSpec(index, self.run_dir(index), self.fit_config(index), self.fit_budget,
                             threads, run_name=f'{self.name}-fit{index:02d}',
                             run_group=self.tracking_group)
             for index in todo]
    from agents.experiment import progress as progress_lib
    progress = progress_lib.FitProgress([(spec.index, spec.run_dir) for spec in specs],
                                        self.fit_budget, quiet=self.quiet)
    try:
      if self.parallelization == 'ray':
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

  def _record(self, outcome):
    fit = self.fits[outcome.index]
    fit['status'] = outcome.status
    fit['error'] = outcome.error
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
                       path=None, references=None):
    """Mean of `tag` over the fits with a confidence band; other managers on the same axes.

    Args:
      tag: a logged value, e.g. 'mean_score'.
      phase: the phase whose rows are plotted.
      smooth: moving-average window (rows) applied to each fit before averaging.
      ci: confidence level of the band (Student's t over fits); 0 draws none.
      managers: other managers to draw beside this one.
      path: PNG to write; defaults to `<directory>/<tag>.png`.
      references: optional {label: value} drawn as dashed horizontal lines.

    Returns:
      The matplotlib Figure.
    """
    from agents.experiment import plots
    frames = [self.get_writer_data()] + [m.get_writer_data() for m in (managers or [])]
    path = path or os.path.join(self.directory, f'{tag.replace("/", "_")}.png')
    return plots.plot_writer_data(frames, tag, phase=phase, smooth=smooth, ci=ci, path=path,
                                  references=references)

  # --- Search, evaluation, profiling. ---

  def optimize_hyperparams(self, n_trials=20, timeout=None, n_fit=2, sampler='tpe',
                           pruner='median', fit_fraction=0.25, continue_previous=False,
                           n_workers=1, objective=None, search_space=None, budget=None):
    """Searches hyperparameters with Optuna; see `agents.experiment.search.optimize`.

    Returns:
      The best parameters (dotted keys); `self.config` is updated with them and
      the best config is written as `<directory>/best_config.yaml`.
    """
    from agents.experiment import search
    return search.optimize(
        self, n_trials=n_trials, timeout=timeout, n_fit=n_fit, sampler=sampler, pruner=pruner,
        fit_fraction=fit_fraction, continue_previous=continue_previous, n_workers=n_workers,
        objective=objective, search_space=search_space, budget=budget)

  def eval_agents(self, suite=None, workers=None, use_ray=None):
    """Evaluates every finished fit on a suite through the evaluation API (`agents.evaluation`).

    Each fit's policy (`run:<run_dir>`, its latest checkpoint) flies every seed
    of the suite; the results go to `<run_dir>/eval-<suite>/` (the evaluation's
    own shard files, so an interrupted evaluation resumes).

    Args:
      suite: a suite name (see `agents.evaluation.suite_names()`) or `Suite`;
        defaults to the manager's `eval_suite`, else 'small_eval'.
      workers: local worker processes of each evaluation (None: the CPU count).
      use_ray: fly on Ray (default: when the manager's parallelization is 'ray').

    Returns:
      DataFrame with one row per fit and seed: name, fit, seed, and the
      evaluation's per-seed fields (twr50, cumulative_reward, ...).

    Raises:
      NotImplementedError: the evaluation package is not installed in this tree.
      ExperimentError: no fit has finished.
    """
    try:
      from agents import evaluation
    except ImportError as error:
      raise NotImplementedError(
          'eval_agents needs the evaluation API agents.evaluation (issue 11), which is not '
          f'in this tree ({error}); final training scores are in final_scores() and '
          'get_writer_data().') from error
    import pandas as pd
    suite = suite or self.eval_suite or 'small_eval'
    suite_name = suite if isinstance(suite, str) else suite.name
    finished = [fit for fit in self.fits if fit['status'] == fitting.FINISHED]
    if not finished:
      raise ExperimentError(f'{self.name}: no fit has finished; call fit() first.')
    rows = []
    for fit in finished:
      run_dir = self.run_dir(fit['index'])
      eval_dir = os.path.join(run_dir, f'eval-{suite_name}')
      evaluation.evaluate(
          f'run:{run_dir}', suite, eval_dir,
          workers=workers if workers is not None else (os.cpu_count() or 1),
          use_ray=self.parallelization == 'ray' if use_ray is None else use_ray,
          ray_address=self.ray_address, progress=not self.quiet, artifacts=False)
      _, results = evaluation.load(eval_dir)  # Every seed, also those flown before.
      for result in results:
        record = result.to_dict()
        record.pop('flight_path', None)
        rows.append(dict(name=self.name, fit=fit['index'], **record))
    return pd.DataFrame(rows).sort_values(['fit', 'seed']).reset_index(drop=True)

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
    spec = fitting.FitSpec(0, run_dir, self.fit_config(0, budget), budget, threads=1)
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
    return dict(
        name=self.name, config_name=self.config_name, config=copy.deepcopy(self.config),
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
    manager = cls(data['config'], n_fit=data['n_fit'], fit_budget=data['fit_budget'],
                  output_dir=os.path.dirname(path), parallelization=data['parallelization'],
                  max_workers=data['max_workers'], seed=data['seed_entropy'],
                  overrides_per_fit=data['overrides_per_fit'], eval_suite=data['eval_suite'],
                  name=os.path.basename(path), ray_address=data.get('ray_address'), quiet=quiet)
    manager.config_name = data.get('config_name')
    manager.overrides = dict(data.get('overrides') or {})
    return manager

  def __repr__(self):
    return (f'ExperimentManager(name={self.name!r}, n_fit={self.n_fit}, '
            f'fit_budget={self.fit_budget}, directory={self.directory!r})')


def _check_budget(budget, what):
  if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
    raise ExperimentError(f'{what} must be an int >= 1 (training steps), got {budget!r}.')
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
