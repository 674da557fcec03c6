"""What both kinds of experiment share: `n_fit` seeded fits in one folder, run and recorded.

`ExperimentManager` (rlberry's, an agent class: `manager.py`) and `ConfigExperiment`
(a config of this project: `config_experiment.py`) both keep one folder with
`experiment.yaml` (the manifest, `manifest.py`) and one run directory per fit,
`fit00-<name>/`, `fit01-<name>/`, ... Fit `i` gets the `i`-th seed spawned from one
`numpy.random.SeedSequence`. This base class holds the fits' states, runs them
(processes, threads, Ray or inline) under the folder's lock, records each outcome in
the manifest as it arrives, and adopts the state of the same experiment found on disk.

A subclass provides `directory`, `_fit_spec(index, budget, threads, run_dir, fresh)`,
`_manifest_data()` and `_compared_keys(previous)` (the manifest differences that make
the folder another experiment).
"""

import cProfile
import io
import logging
import os
import pstats
import shutil

import numpy as np

from agents.experiment import agent_fitting, fitting, manifest
from agents.experiment import threads as threads_lib
from agents.experiment.errors import ExperimentError
from agents.run import directory_lock

_LOG = logging.getLogger(__name__)


def seed_entropy(seed):
  """The root entropy of `seed`: None (fresh), a non-negative int, a root `SeedSequence`, or
  an object with a `seed_seq` (a `Seeder`).

  Raises:
    ExperimentError: another kind of seed.
  """
  if seed is None:
    return int(np.random.SeedSequence().entropy)
  if isinstance(getattr(seed, 'seed_seq', None), np.random.SeedSequence):  # A Seeder:
    words = seed.seed_seq.generate_state(4)  # its sequence's state, spawned or not.
    return int(sum(int(word) << (32 * index) for index, word in enumerate(words)))
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


def check_budget(budget, what):
  """`budget` as an int >= 1 (a float with an integral value, as `1e4`, is taken).

  Raises:
    ExperimentError: anything else.
  """
  if isinstance(budget, float) and budget.is_integer():
    budget = int(budget)
  if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
    raise ExperimentError(f'{what} must be an int >= 1 (training steps, or an agent class\'s '
                          f'budget), got {budget!r}.')
  return int(budget)


def check_n_fit(n_fit):
  """`n_fit` as an int >= 1.

  Raises:
    ExperimentError: anything else.
  """
  if isinstance(n_fit, bool) or not isinstance(n_fit, (int, np.integer)) or n_fit < 1:
    raise ExperimentError(f'n_fit must be an int >= 1, got {n_fit!r}.')
  return int(n_fit)


class Experiment:
  """`n_fit` seeded fits in one folder: their states, runs, manifest and profile."""

  quiet = True
  # The CPUs this experiment's fits share (None: this machine's cores). A search running
  # trials at once gives each trial its part, so that its fits' threads (and the CPUs a
  # Ray task declares) add up to the machine instead of each trial taking all of it.
  cpu_share = None

  def _open(self, seed):
    """Sets the seeds and fits; adopts the same experiment's state found in `directory`."""
    previous = manifest.read(self.directory) if manifest.exists(self.directory) else None
    if previous is not None and seed is None:
      self.seed_entropy = int(previous['seed_entropy'])
    else:
      self.seed_entropy = seed_entropy(seed)
    self.fits = self._new_fits()
    self.study = None
    self._instances = {}  # The agents of an agent class fitted in this process, by index.
    if previous is not None:
      self._check_folder_use(previous)
      differences = self._compared_keys(previous)
      if differences:
        raise ExperimentError(
            f'{self.directory} already holds another experiment (differs in '
            f'{", ".join(differences)}); choose another name or output_dir, or use '
            'load to continue it.')
      self.fits = [dict(fit) for fit in previous['fits']]
      self.study = previous.get('study')

  def _check_folder_use(self, previous):
    """Hook: refuses a manifest of the other kind of experiment."""
    del previous

  def _new_fits(self):
    return [dict(index=index, seed=seed, run_dir=f'fit{index:02d}-{self.name}',
                 status=fitting.PENDING, step=0, mean_score=None, error=None)
            for index, seed in enumerate(fit_seeds(self.seed_entropy, self.n_fit))]

  def run_dir(self, index):
    """The absolute run directory of fit `index`."""
    return os.path.join(self.directory, self.fits[index]['run_dir'])

  def fit_to(self, budget):
    """Trains every fit that has not reached `budget` up to it, in parallel (resuming).

    A fit that raises or dies is reported with its index and the others go on. Ctrl-C
    makes every running fit save a checkpoint and stop; the state is saved and
    KeyboardInterrupt propagates.

    Raises:
      KeyboardInterrupt: after a Ctrl-C, with every finished fit kept.
      ExperimentError: another process is fitting this experiment (nothing is touched).
    """
    budget = check_budget(budget, 'budget')
    self._run({fit['index']: budget for fit in self.fits
               if not (fit['status'] == fitting.FINISHED and fit['step'] >= budget)})

  def _run(self, targets, fit_kwargs=None):
    """Runs fit `index` to `targets[index]` for every index given, under the folder's lock."""
    try:
      with directory_lock.hold(self.directory, 'experiment'):
        self._run_locked(targets, fit_kwargs)
    except directory_lock.DirectoryBusyError as error:
      raise ExperimentError(str(error)) from None

  def _run_locked(self, targets, fit_kwargs):
    self.save()
    if not targets:
      return
    max_workers = min(self.max_workers or (os.cpu_count() or 1), len(targets))
    threads = threads_lib.threads_per_fit(max_workers, self.cpu_share)
    specs = [self._fit_spec(index, budget, threads) for index, budget in targets.items()]
    if fit_kwargs:
      for spec in specs:
        spec.agent.fit_kwargs = dict(spec.agent.fit_kwargs, **fit_kwargs)
    from agents.experiment import progress as progress_lib
    progress = progress_lib.FitProgress([(spec.index, spec.run_dir) for spec in specs],
                                        max(targets.values()), quiet=self.quiet)
    in_memory = specs[0].agent is not None and self.parallelization in ('thread', 'inline')
    try:
      if in_memory:
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
    for index in self.failed_fits():
      _LOG.error('Fit %d of %s failed:\n%s', index, self.name, self.fits[index]['error'])
    if interrupted:
      raise KeyboardInterrupt(f'{self.name}: fits stopped with checkpoints; fit() resumes them.')

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

  def clear_output_dir(self):
    """Deletes the experiment's folder with every fit, trial and search in it, and forgets
    the fits; the experiment starts afresh on the next `fit`.

    Raises:
      ExperimentError: another process is fitting this experiment (nothing is deleted).
    """
    if os.path.isdir(self.directory):
      try:
        with directory_lock.hold(self.directory, 'experiment'):
          shutil.rmtree(self.directory)
      except directory_lock.DirectoryBusyError as error:
        raise ExperimentError(str(error)) from None
    self.fits = self._new_fits()
    self.study = None
    self._instances = {}

  def _profile(self, spec, fname, lines=20):
    """Runs one fit `spec` in this process under cProfile; prints the top `lines` and saves
    the profile to `fname` (returned)."""
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

  def save(self):
    """Writes `experiment.yaml` in the experiment's folder; returns its `pathlib.Path`."""
    import pathlib
    manifest.write(self.directory, self._manifest_data())
    return pathlib.Path(manifest.path_in(self.directory))
