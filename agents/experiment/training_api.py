"""The one place where the experiment package meets configs and training.

Everything in `agents/experiment/` reads and changes configs through dotted
keys (`'algorithm.learning_rate'`, `'loop.steps'`, `'seed'`) and trains through
`train`, so switching from today's flat configs (`agents.scripts.configs`,
`agents.scripts.train`) to the nested ones of the config redesign
(`agents.configs.resolve`, `agents.training.train`) changes only this file.

Today's configs are flat: a dotted key maps to its last component (or to the
renamed flat key in `_FLAT_ALIASES`), so search spaces and overrides written
for the nested configs already work.
"""

import copy
import os

from agents.scripts import config_schema
from agents.scripts import configs as configs_lib

ConfigError = config_schema.ConfigError
UnknownConfigError = configs_lib.UnknownConfigError

# Nested keys whose flat name is not their last component.
_FLAT_ALIASES = {
    'algorithm.name': 'algorithm',
    'environment.id': 'env',
    'environment.kwargs': 'env_kwargs',
    'environment.imports': 'env_imports',
    'environment.processes': 'env_processes',
    'environment.vector': 'vector_env',
    'network.kind': 'network',
}

BUDGET_KEY = 'loop.steps'
SEED_KEY = 'seed'
THREADS_KEY = 'loop.tf_threads'


def config_names():
  """Names of the registered configs."""
  return sorted(configs_lib.CONFIGS)


def _flat_key(key):
  if key in _FLAT_ALIASES:
    return _FLAT_ALIASES[key]
  return key.rsplit('.', 1)[-1]


def has_key(config, key):
  """Whether the dotted `key` names a value of the resolved `config`."""
  return _flat_key(key) in config


def get(config, key):
  """The value of the dotted `key` in a resolved config.

  Raises:
    ConfigError: the key is not in the config.
  """
  if not has_key(config, key):
    raise ConfigError(f"Unknown config key '{key}'.")
  return config[_flat_key(key)]


def without(config, key):
  """A copy of `config` without the dotted `key` (for comparing configs that may differ there)."""
  config = copy.deepcopy(dict(config))
  config.pop(_flat_key(key), None)
  return config


def resolve(config, overrides=None):
  """Builds a validated config from a name or a mapping, with dotted overrides.

  Args:
    config: the name of a registered config, a YAML config file (`.yaml`,
      `.yml`), or a (resolved) config mapping.
    overrides: optional mapping of dotted keys to values.

  Returns:
    A new validated config mapping.

  Raises:
    UnknownConfigError: no config has that name.
    ConfigError: an override names an unknown key or has a bad value.
  """
  flat = {_flat_key(key): value for key, value in (overrides or {}).items()}
  if is_yaml_path(config):
    config = load_yaml(config)
  elif isinstance(config, str):
    return configs_lib.resolve(config, flat)
  resolved = copy.deepcopy(dict(config))
  for key, value in flat.items():
    config_schema.check_key(key, value)
    resolved[key] = value
  return config_schema.validate(resolved)


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
  """Reads and validates a config from YAML with the safe loader.

  Raises:
    ConfigError: the file is missing or does not hold a valid config.
  """
  if not os.path.isfile(path):
    raise ConfigError(f'Config file {path} does not exist.')
  return config_schema.load_yaml(path)


def save_yaml(data, path):
  """Writes a plain mapping as YAML."""
  config_schema.save_yaml(data, path)


def train(config, run_dir, quiet=True, export_policy=True):
  """Trains or resumes the run in `run_dir` with `config`; returns the summary dict.

  The summary has `step`, `interrupted`, `mean_score` and `run_dir`. A run
  directory with a checkpoint resumes, and `loop.steps` may grow on resume.
  """
  from agents.scripts import train as train_lib
  os.makedirs(run_dir, exist_ok=True)
  return train_lib.train(config, run_dir, quiet=quiet, export_policy=export_policy)
