"""`ConfigExperiment`: N independent fits of one config of this project, their data and search.

    experiment = ExperimentManager.from_config('pendulum', n_fit=4, fit_budget=200_000,
                                               output_dir='experiments', seed=0)
    experiment.fit()                       # 4 run directories, trained in parallel
    frame = experiment.get_writer_data()   # name, fit, step, phase, tag, value
    experiment.plot_writer_data('mean_score')

The experiment's folder is `<output_dir>/<name>/`: `experiment.yaml` (the manifest)
and one ordinary run directory per fit, `fit00-<name>/`, ... (when the name is the
config's, `agents.scripts.train --logdir=<output_dir>/<name> --timestamp=fit00
--config=<name>` resumes a fit by hand). Building an experiment whose folder already
holds the same experiment picks up its state, so `fit` resumes where it stopped.
`fit(budget)` trains every fit up to `budget` steps in total (a config's `loop.steps`).
The command line `python -m agents.scripts.experiment` runs these.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from agents import configs
from agents.configs import resolution
from agents.experiment import experiment_base, fitting, manifest, writer_data
from agents.experiment.errors import ExperimentError

if TYPE_CHECKING:
  import matplotlib.figure
  import pandas as pd

Config: TypeAlias = configs.RunConfig
"""A resolved config: {section: {key: value}}."""
ConfigSource: TypeAlias = str | Mapping[str, Any]
"""A config as given: a registered config's name, a YAML file's path or a mapping."""

PARALLELIZATIONS = ('process', 'ray', 'inline')
BUDGET_KEY = 'loop.steps'
SEED_KEY = 'seed'
# Config keys that may differ between an experiment and the one already in its folder.
_RESUMABLE_KEYS = (BUDGET_KEY, 'loop.track')


def is_yaml_path(config: object) -> bool:
  """Whether `config` names a YAML config file rather than a registered config."""
  return isinstance(config, str) and config.endswith(('.yaml', '.yml'))


def resolve(config: ConfigSource, overrides: Mapping[str, Any] | None = None) -> Config:
  """A validated config from a name, a YAML file or a mapping, with dotted overrides.

  Raises:
    configs.ConfigError: an unknown config or key, or a bad value (named).
  """
  if isinstance(config, str):
    if is_yaml_path(config) and not os.path.isfile(config):
      raise configs.ConfigError(f'Config file {config} does not exist.')
    return configs.resolve(config, overrides)
  return configs.apply_overrides(copy.deepcopy(dict(config)), overrides)


def label(config: ConfigSource) -> str:
  """A short name for a config: its name, its file's stem, or its environment's id."""
  if isinstance(config, str):
    return os.path.splitext(os.path.basename(config))[0] if is_yaml_path(config) else config
  env_id = configs.flatten(config)['environment.id']
  return env_id.split('/')[-1].split(':')[-1].lower().replace('-', '_')


class ConfigExperiment(experiment_base.Experiment):
  """Trains `n_fit` independent instances of a config and gathers their results.

  With what it inherits from `experiment_base.Experiment` it has more than 25 methods:
  the same public names as `ExperimentManager` (fit, eval_agents, get_writer_data, ...)
  so that code moves between the two, the search's 4 (`search_space`,
  `default_objective`, `trial_manager`, `take_best`) and a config's own (overrides, plots,
  final scores).
  """

  def __init__(self, config: ConfigSource, n_fit: int = 4, fit_budget: int | None = None,
               output_dir: str = 'experiments', parallelization: str = 'process',
               max_workers: int | None = None, seed: Any = None,
               overrides: Mapping[str, Any] | None = None,
               overrides_per_fit: Sequence[Mapping[str, Any]] | None = None,
               eval_suite: str | None = None, name: str | None = None,
               ray_address: str | None = None, mp_context: str = 'spawn',
               quiet: bool = False) -> None:
    """Resolves and checks every fit's config; picks up the experiment already on disk.

    Args:
      config: the name of a registered config, a path to a YAML config, or a resolved
        config mapping. Its algorithm may be any registered one.
      n_fit: number of independent fits, at least 1.
      fit_budget: training steps each fit reaches (None keeps the config's `loop.steps`).
      output_dir: folder of experiments; this one's is `<output_dir>/<name>`.
      parallelization: 'process' (worker processes here), 'ray' (Ray tasks), or 'inline'
        (one after another in this thread: debugging and tests).
      max_workers: fits running at once; None runs min(n_fit, CPU count).
      seed: int, `numpy.random.SeedSequence` or None (fresh entropy, recorded).
      overrides: dotted-key overrides for every fit, e.g. {'algorithm.learning_rate': 1e-3}.
      overrides_per_fit: optional list of `n_fit` override mappings, one per fit.
      eval_suite: evaluation suite of `eval_agents` (None: its default).
      name: the experiment's name and folder; defaults to the config's name.
      ray_address: Ray cluster address with parallelization='ray' (None: local).
      mp_context: 'spawn' or 'forkserver', the start method of local workers.
      quiet: no progress bars or summary tables.

    Raises:
      ExperimentError: a bad argument, or the folder holds another experiment.
      configs.ConfigError: an unknown config, key or value (named).
    """
    self.n_fit = experiment_base.check_n_fit(n_fit)
    if parallelization not in PARALLELIZATIONS:
      raise ExperimentError(f'parallelization must be one of {PARALLELIZATIONS}, got '
                            f'{parallelization!r} (a config trains in processes: its '
                            'training loop takes over the signals).')
    if max_workers is not None and (not isinstance(max_workers, int) or max_workers < 1):
      raise ExperimentError(f'max_workers must be None or an int >= 1, got {max_workers!r}.')
    if overrides_per_fit is not None and len(overrides_per_fit) != self.n_fit:
      raise ExperimentError(
          f'overrides_per_fit has {len(overrides_per_fit)} entries; n_fit is {self.n_fit}.')
    self.config_name = config if isinstance(config, str) and not is_yaml_path(config) else None
    self.overrides = dict(overrides or {})
    self.config = resolve(config, self.overrides)
    if fit_budget is None:
      fit_budget = configs.flatten(self.config)[BUDGET_KEY]
    self.fit_budget = experiment_base.check_budget(fit_budget, 'fit_budget')
    self.overrides_per_fit = [dict(item) for item in overrides_per_fit] \
        if overrides_per_fit is not None else None
    self.name = name or label(config)
    if os.sep in self.name or self.name in ('', '.', '..'):
      raise ExperimentError(f'name must be a plain folder name, got {self.name!r}.')
    self.output_dir = os.path.abspath(os.path.expanduser(output_dir))
    for folder in (self.output_dir, self.directory):
      if os.path.exists(folder) and not os.path.isdir(folder):
        raise ExperimentError(f'output_dir: {folder} is a file, not a folder of experiments.')
    self.parallelization, self.max_workers = parallelization, max_workers
    self.eval_suite, self.ray_address = eval_suite, ray_address
    self.mp_context, self.quiet = mp_context, quiet
    # The experiment the trackers of `loop.track` file the fits under (a search's
    # trials, each an experiment of its own, share the search's).
    self.tracking_group = self.name
    self._open(seed)
    # Every fit's config resolves now: a bad per-fit override fails before anything runs.
    for index in range(self.n_fit):
      self.fit_config(index)

  @property
  def directory(self) -> str:
    """The experiment's folder, `<output_dir>/<name>`."""
    return os.path.join(self.output_dir, self.name)

  def fit_config(self, index: int, budget: int | None = None) -> Config:
    """The resolved config of fit `index`: base config, its overrides, its seed, the budget."""
    overrides = dict(self.overrides_per_fit[index]) if self.overrides_per_fit else {}
    overrides[SEED_KEY] = self.fits[index]['seed']
    overrides[BUDGET_KEY] = budget or self.fit_budget
    try:
      return resolve(self.config, overrides)
    except configs.ConfigError as error:
      raise type(error)(f'Fit {index}: {error}') from error

  def _check_folder_use(self, previous: Mapping[str, Any]) -> None:
    if previous.get('agent') is not None:
      raise ExperimentError(f'{self.directory} holds an experiment of agent class '
                            f"{previous['agent']['agent_class']}; load it with "
                            'ExperimentManager.load.')

  def _compared_keys(self, previous: Mapping[str, Any]) -> list[str]:
    mine = self._manifest_data()
    differences = [key for key in ('n_fit', 'seed_entropy', 'overrides_per_fit')
                   if previous.get(key) != mine[key]]
    previous_config = previous.get('config', {})
    old_config = _dotted(manifest.plain(_without(previous_config, _RESUMABLE_KEYS)))
    new_config = _dotted(manifest.plain(_without(self.config, _RESUMABLE_KEYS)))
    # A key declared since the experiment was saved, left at its default, changes nothing.
    declared = configs.flatten(configs.defaults_of(self.config.algorithm_name,
                                                   self.config['network'].get('kind')))
    for key in set(new_config) - set(old_config):
      if key in declared and new_config[key] == declared[key]:
        old_config[key] = new_config[key]
    return differences + [f'config.{key}' for key in sorted(set(old_config) | set(new_config))
                          if old_config.get(key) != new_config.get(key)]

  def fit(self, budget: int | None = None) -> pd.DataFrame:
    """Trains every unfinished fit to `budget` steps, in parallel; resumes from checkpoints.

    Args:
      budget: training steps of each fit; None keeps `fit_budget`, a larger one extends
        finished fits.

    Returns:
      The summary DataFrame of `summary()`.

    Raises:
      KeyboardInterrupt: after a Ctrl-C, with every finished fit kept.
      ExperimentError: another process is fitting this experiment (nothing is touched).
    """
    if budget is not None:
      self.fit_budget = experiment_base.check_budget(budget, 'budget')
    self.fit_to(self.fit_budget)
    summary = self.summary()
    if not self.quiet:
      print(summary.to_string(index=False))
    return summary

  def _fit_spec(self, index: int, budget: int, threads: int = 1, run_dir: str | None = None,
                fresh: bool = False) -> fitting.FitSpec:
    del fresh
    # In the experiment trackers, fit k is the run '<name>-fit<k>' of the experiment <name>.
    return fitting.FitSpec(index, run_dir or self.run_dir(index), self.fit_config(index, budget),
                           budget, threads, run_name=f'{self.name}-fit{index:02d}',
                           run_group=self.tracking_group)

  # --- Data. ---

  def get_writer_data(self) -> pd.DataFrame:
    """One row per logged value of every fit: `name, fit, step, phase, tag, value`."""
    return writer_data.read_fits(
        self.name, [(fit['index'], self.run_dir(fit['index'])) for fit in self.fits])

  def final_scores(self, tag: str = 'mean_score', phase: str = 'train') -> np.ndarray:
    """The last logged `tag` of every fit, as a NumPy array in fit order (NaN when missing)."""
    values = writer_data.final_values(self.get_writer_data(), tag, phase)
    return np.array([values.get((self.name, fit['index']), np.nan) for fit in self.fits])

  def plot_writer_data(
      self, tag: str = 'mean_score', phase: str = 'train', smooth: int = 1, ci: float = 0.95,
      managers: Iterable[ConfigExperiment] | None = None, path: str | None = None,
      references: Mapping[str, float] | None = None,
      labels: Sequence[str] | None = None) -> matplotlib.figure.Figure:
    """Mean of `tag` over the fits with a confidence band; other experiments on the same axes.

    Args:
      tag: a logged value, e.g. 'mean_score'.
      phase: the phase whose rows are plotted.
      smooth: moving-average window (rows) applied to each fit before averaging.
      ci: confidence level of the band (Student's t over fits); 0 draws none.
      managers: other experiments to draw beside this one.
      path: PNG to write; defaults to `<directory>/<tag>.png`.
      references: optional {label: value} drawn as dashed horizontal lines.
      labels: optional curve labels, this experiment's first, then one per other one.

    Returns:
      The matplotlib Figure.
    """
    from agents.experiment import plots
    frames = [self.get_writer_data()] + [m.get_writer_data() for m in (managers or [])]
    path = path or os.path.join(self.directory, f'{tag.replace("/", "_")}.png')
    return plots.plot_writer_data(frames, tag, phase=phase, smooth=smooth, ci=ci, path=path,
                                  references=references, labels=labels)

  def eval_agents(self, suite: str | None = None, workers: int | None = None,
                  use_ray: bool | None = None, weights: str = 'newest') -> pd.DataFrame:
    """Flies every finished fit on an evaluation suite; one row per fit and seed.

    See `config_evaluation.eval_agents`.
    """
    from agents.experiment import config_evaluation
    return config_evaluation.eval_agents(self, suite, workers, use_ray, weights)

  def get_agent_instances(self) -> list[Any]:
    """Each fit's trained policy as the evaluation API flies it (`run:<run_dir>`, its newest
    checkpoint; a batched policy of one row), in fit order.

    Raises:
      ExperimentError: a fit has not finished.
    """
    from agents import evaluation
    for fit in self.fits:
      if fit['status'] != fitting.FINISHED:
        raise ExperimentError(f'{self.name}: fit {fit["index"]} has not finished (status '
                              f'{fit["status"]}); call fit() first.')
    return [evaluation.make_policy(f'run:{self.run_dir(fit["index"])}', batch_size=1)
            for fit in self.fits]

  def build_eval_env(self) -> Any:
    """One environment of the config (`agents.training.builders.make_env`), reset with a
    seed of the experiment's seed."""
    from agents.training import builders
    seed = int(np.random.SeedSequence(self.seed_entropy).generate_state(1)[0] >> 1)
    env = builders.make_env(self.config)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    return env

  def generate_profile(self, budget: int | None = None, fname: str | None = None,
                       lines: int = 20) -> str:
    """Profiles a short fit in this process with cProfile; prints the top lines and saves it.

    Args:
      budget: training steps of the profiled fit (default 10 % of fit_budget).
      fname: `.prof` file to write; defaults to `<directory>/profile.prof`.
      lines: how many lines of the cumulative-time table to print.

    Returns:
      The path of the saved profile (readable with `pstats` or snakeviz).
    """
    budget = experiment_base.check_budget(budget or max(1, self.fit_budget // 10), 'budget')
    spec = self._fit_spec(0, budget, run_dir=os.path.join(self.directory, 'profile-run'))
    return self._profile(spec, fname or os.path.join(self.directory, 'profile.prof'), lines)

  # --- Search. ---

  def optimize_hyperparams(
      self, n_trials: int | None = 20, timeout: float | None = None, n_fit: int = 2,
      sampler: str = 'tpe', pruner: str = 'median', fit_fraction: float = 0.25,
      continue_previous: bool = False, n_workers: int = 1,
      objective: Callable[[Any], float] | None = None,
      search_space: Mapping[str, Any] | None = None, budget: int | None = None,
      custom_eval_function: Callable[[Sequence[Any]], float] | None = None) -> dict[str, Any]:
    """Searches the config's hyperparameters with Optuna; see `search.optimize`.

    Returns:
      The best values (dotted keys); the best config is written as
      `<directory>/best_config.yaml`.
    """
    from agents.experiment import search
    best: dict[str, Any] = search.optimize(
        self, n_trials=n_trials, timeout=timeout, n_fit=n_fit, sampler=sampler, pruner=pruner,
        fit_fraction=fit_fraction, continue_previous=continue_previous, n_workers=n_workers,
        objective=objective, search_space=search_space, budget=budget,
        custom_eval_function=custom_eval_function)
    return best

  def search_space(self, search_space: Mapping[str, Any] | None) -> dict[str, Any]:
    """The parsed space of a search: `search_space`, else the one the config's name has."""
    from agents.experiment import search, search_distributions, search_spaces
    if search_space is None:
      if self.config_name is None:
        raise search.SearchError('The config is a mapping, not a named config: pass '
                                 'search_space=.')
      try:
        search_space = search_spaces.for_config(self.config_name)
      except KeyError as error:
        raise search.SearchError(error.args[0]) from error
    what = f'config {self.config_name!r}' if self.config_name else 'the config'
    return search_distributions.check(search_space, self.config, what)

  def default_objective(self) -> Callable[[Any], float]:
    """The objective of the environment's plug-in (`search_objective`), else the mean
    final training `mean_score` of a trial's fits."""
    from agents import plugins
    from agents.experiment import search
    plugin = plugins.environment_plugin(configs.flatten(self.config)['environment.id'])
    objective = plugin.search_objective(self.config)
    return objective if objective is not None else search.mean_final_score

  def trial_manager(self, params: Mapping[str, Any], n_fit: int, budget: int, output_dir: str,
                    max_workers: int | None, name: str) -> ConfigExperiment:
    """The experiment of one search trial: this config with `params` (dotted keys)."""
    child = type(self)(self.config, n_fit=n_fit, fit_budget=budget, output_dir=output_dir,
                       parallelization=self.parallelization, max_workers=max_workers,
                       seed=self.seed_entropy, overrides=params, name=name,
                       ray_address=self.ray_address, mp_context=self.mp_context, quiet=True)
    child.tracking_group = self.tracking_group
    return child

  def take_best(self, best: Mapping[str, Any], budget: int) -> str:
    """Writes the best config (base config, best values, full budget) as
    `<directory>/best_config.yaml`; returns where it went (for the summary line)."""
    from agents.experiment import search
    config = resolve(self.config, dict(best, **{BUDGET_KEY: budget}))
    path = os.path.join(self.directory, search.BEST_CONFIG_NAME)
    configs.save_yaml(config, path)
    return f'config written to {path}'

  # --- Saving and loading. ---

  def _manifest_data(self) -> dict[str, Any]:
    return dict(
        agent=None, name=self.name, config_name=self.config_name,
        config=copy.deepcopy(self.config), overrides=self.overrides,
        overrides_per_fit=self.overrides_per_fit, n_fit=self.n_fit,
        fit_budget=self.fit_budget, seed_entropy=self.seed_entropy,
        parallelization=self.parallelization, max_workers=self.max_workers,
        eval_suite=self.eval_suite, ray_address=self.ray_address, fits=self.fits,
        study=self.study)

  @classmethod
  def load(cls, path: str | os.PathLike[str], quiet: bool = False) -> ConfigExperiment:
    """Rebuilds an experiment from its folder (or its `experiment.yaml`).

    Raises:
      manifest.NotAnExperimentError: `path` holds no experiment manifest.
      ExperimentError: it holds an agent class's experiment (`ExperimentManager.load`).
    """
    path = os.path.abspath(os.path.expanduser(os.fspath(path)))
    if os.path.basename(path) == manifest.FILENAME:
      path = os.path.dirname(path)
    data = manifest.read(path)
    if data.get('agent') is not None:
      raise ExperimentError(f'{path} holds an experiment of an agent class; load it with '
                            'ExperimentManager.load.')
    experiment = cls(
        data['config'], n_fit=data['n_fit'], fit_budget=data['fit_budget'],
        output_dir=os.path.dirname(path), parallelization=data['parallelization'],
        max_workers=data['max_workers'], seed=data['seed_entropy'],
        overrides_per_fit=data['overrides_per_fit'], eval_suite=data['eval_suite'],
        name=os.path.basename(path), ray_address=data.get('ray_address'), quiet=quiet)
    experiment.config_name = data.get('config_name')
    experiment.overrides = dict(data.get('overrides') or {})
    return experiment

  def __repr__(self) -> str:
    return (f'ConfigExperiment(name={self.name!r}, n_fit={self.n_fit}, '
            f'fit_budget={self.fit_budget}, directory={self.directory!r})')


def _dotted(mapping: Mapping[str, Any], prefix: str = '') -> dict[str, Any]:
  """{dotted key: value} of a nested mapping (its sections' leaves)."""
  flat: dict[str, Any] = {}
  for key, value in mapping.items():
    if isinstance(value, dict) and value:
      flat.update(_dotted(value, f'{prefix}{key}.'))
    else:
      flat[f'{prefix}{key}'] = value
  return flat


def _without(config: Mapping[str, Any], dotted_keys: Iterable[str]) -> dict[str, Any]:
  """A copy of `config` without the dotted keys (for comparing configs that may differ there)."""
  copied: dict[str, Any] = copy.deepcopy(dict(config))
  for key in dotted_keys:
    try:
      key = resolution.dotted_key(key, configs.specs_for(copied))
    except (configs.ConfigError, KeyError, TypeError):
      pass
    section, _, leaf = key.rpartition('.')
    (copied.get(section, {}) if section else copied).pop(leaf, None)
  return copied
