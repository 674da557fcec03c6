"""The one place where the experiment package meets configs and training.

Everything in `agents/experiment/` reads and changes configs through dotted
keys (`'algorithm.learning_rate'`, `'loop.steps'`, `'seed'`) and trains through
`train`: `agents.configs` resolves and validates the nested configs, and
`agents.training.train` trains or resumes a run (`loop.steps` may grow on
resume).
"""

import copy
import os

from agents import configs
from agents.configs import resolution, sections

ConfigError = configs.ConfigError

BUDGET_KEY = 'loop.steps'
SEED_KEY = 'seed'
TRACK_KEY = 'loop.track'


def _dotted(config, key):
  """The dotted key of `key` (dotted already, or a unique leaf name) in the config."""
  return resolution.dotted_key(key, configs.specs_for(config))


def has_key(config, key):
  """Whether the dotted `key` (or unique leaf name) names a value of the resolved `config`."""
  try:
    _dotted(config, key)
  except ConfigError:
    return False
  return True


def get(config, key):
  """The value of the dotted `key` in a resolved config.

  Raises:
    ConfigError: the key is not in the config.
  """
  return configs.flatten(config)[_dotted(config, key)]


def defaults(config):
  """{dotted key: declared default} of every key of a config of `config`'s algorithm (and
  network kind)."""
  return configs.flatten(sections.defaults_of(config['algorithm']['name'],
                                              config['network'].get('kind')))


def without(config, key):
  """A copy of `config` without the dotted `key` (for comparing configs that may differ there)."""
  config = copy.deepcopy(dict(config))
  dotted = _dotted(config, key) if has_key(config, key) else key
  if '.' in dotted:
    section, leaf = dotted.split('.', 1)
    config.get(section, {}).pop(leaf, None)
  else:
    config.pop(dotted, None)
  return config


def resolve(config, overrides=None):
  """Builds a validated config from a name, a YAML file or a mapping, with dotted overrides.

  Args:
    config: the name of a registered config, a YAML config file (`.yaml`,
      `.yml`), or a (resolved) config mapping.
    overrides: optional mapping of dotted keys (or unique leaf names) to values.

  Returns:
    A new validated config mapping.

  Raises:
    ConfigError: an unknown config or key, or a bad value (named).
  """
  if isinstance(config, str):
    if is_yaml_path(config) and not os.path.isfile(config):
      raise ConfigError(f'Config file {config} does not exist.')
    return configs.resolve(config, overrides)
  return configs.apply_overrides(copy.deepcopy(dict(config)), overrides)


def is_yaml_path(config):
  """Whether `config` names a YAML config file rather than a registered config."""
  return isinstance(config, str) and config.endswith(('.yaml', '.yml'))


def label(config):
  """A short name for a config: its name, its file's stem, or its environment's id."""
  if is_yaml_path(config):
    return os.path.splitext(os.path.basename(config))[0]
  if isinstance(config, str):
    return config
  env_id = get(config, 'environment.id')
  return env_id.split('/')[-1].split(':')[-1].lower().replace('-', '_')


def load_yaml(path):
  """Reads and validates a config file.

  Raises:
    ConfigError: the file is missing or does not hold a valid config.
  """
  if not os.path.isfile(path):
    raise ConfigError(f'Config file {path} does not exist.')
  return configs.load_yaml(path)


def save_yaml(data, path):
  """Writes a config as YAML."""
  configs.save_yaml(data, path)


def make_env(config, seed=None):
  """One environment of the config (`agents.training.builders.make_env`), reset with `seed`."""
  from agents.training import builders
  env = builders.make_env(config)
  if seed is not None:
    env.reset(seed=int(seed))
    env.action_space.seed(int(seed))
  return env


def train(config, run_dir, quiet=True, export_policy=True, run_name=None, run_group=None):
  """Trains or resumes the run in `run_dir` with `config`; returns the summary dict.

  The summary has `step`, `interrupted`, `mean_score` and `run_dir`. A run
  directory with a checkpoint resumes, and `loop.steps` may grow on resume.
  `run_name` and `run_group` name the run in the experiment trackers of `loop.track`.
  """
  from agents.training import trainer
  os.makedirs(run_dir, exist_ok=True)
  return trainer.train(config, run_dir, quiet=quiet, export_policy=export_policy,
                        run_name=run_name, run_group=run_group)
