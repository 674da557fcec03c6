"""Resolves a run config: a named config or a YAML file, overrides, then validation.

Every value is checked against its declaration (type, range, choices), the
relations between keys are checked by the algorithm, and the environment id is
looked up in Gymnasium's registry after the config's imports, all before
anything is built or written. Errors are `ConfigError`s that name the key, the
value and what is allowed.
"""

import copy
import difflib
import importlib
import inspect
import math
import os
from collections.abc import Mapping
from typing import Any

import gymnasium

from agents import config_fields, plugins
from agents.algorithms import registry
from agents.config_fields import ConfigError
from agents.configs import batchppo, named, sections, yaml_io
from agents.configs.run_config import RunConfig


def resolve(name_or_path: str,
            overrides: Mapping[str, Any] | None = None) -> RunConfig:
  """Builds a named config (or loads a YAML config file), applies overrides, validates.

  Args:
    name_or_path: a key of `CONFIGS`, or the path of a YAML config file (a full
      config such as a run's config.yaml, or a partial one merged onto the named
      config of its top key `base` (default 'default').
    overrides: optional mapping of dotted keys ('algorithm.learning_rate'), or
      leaf names that are unique ('learning_rate'), to values. Setting
      'algorithm.name' switches the algorithm: its `algorithm` and `network`
      sections start from the new algorithm's defaults.

  Returns:
    The validated config, a frozen `RunConfig`: typed sections (`config.loop.steps`)
    that also read as the plain nested mapping (`config['loop']['steps']`).

  Raises:
    ConfigError: naming the unknown config, key or the bad value.
  """
  return apply_overrides(base_config(name_or_path), overrides)


def base_config(name_or_path):
  """The full config of a name, a YAML file or a 'module:function', before overrides and
  validation."""
  if name_or_path in plugins.CONFIGS:
    return called_config(plugins.CONFIGS.get(name_or_path), name_or_path)
  if str(name_or_path).endswith(('.yaml', '.yml')) or os.path.isfile(name_or_path):
    return from_mapping(yaml_io.read_yaml(name_or_path))
  if isinstance(name_or_path, str) and name_or_path.count(':') == 1:
    function = plugins.import_path(name_or_path, 'Config function')
    return called_config(function, name_or_path)
  raise ConfigError(f'Unknown config {name_or_path!r}; expected one of '
                    f"{plugins.CONFIGS.names()}, the path of a YAML config file or a "
                    "'module:function' returning a config.")


def called_config(function, name):
  """The run config a config function returns: nested as is, or BatchPPO's flat
  `locals()` translated (`agents.configs.batchppo`)."""
  if not callable(function):
    raise ConfigError(f'Config {name!r} is not a function, but {type(function).__name__}.')
  config = function()
  if not isinstance(config, dict):
    raise ConfigError(f'Config function {name!r} returned {type(config).__name__}, not a '
                      'mapping.')
  return batchppo.translate(config, name) if batchppo.is_flat(config) else config


def from_mapping(data):
  """A full config from a mapping read from YAML: full or partial.

  A partial mapping is merged onto the named config of its optional top key
  `base` (default: 'default'); `base` itself is not part of the result.
  """
  data = dict(data)
  base = data.pop('base', 'default')
  if base not in plugins.CONFIGS:
    raise ConfigError(f"Config key 'base' must be one of {plugins.CONFIGS.names()}, got "
                      f'{base!r}.')
  name = data.get('algorithm', {}).get('name', 'ppo') if isinstance(
      data.get('algorithm'), dict) else 'ppo'
  config = with_algorithm(called_config(plugins.CONFIGS.get(base), base), name)
  kind = data['network'].get('kind') if isinstance(data.get('network'), dict) else None
  if kind is not None and kind != config['network'].get('kind'):
    config = sections.with_network_kind(config, kind)
  return named.merge(config, data)


def with_algorithm(config, name):
  """The config with the named algorithm: its own defaults for `algorithm` and `network`."""
  if config['algorithm'].get('name') == name:
    return copy.deepcopy(config)
  defaults = sections.defaults_of(name)
  return dict(copy.deepcopy(config), algorithm=defaults['algorithm'],
              network=defaults['network'])


def apply_overrides(config: Mapping[str, Any],
                    overrides: Mapping[str, Any] | None) -> RunConfig:
  """Applies overrides (dotted keys or unique leaf names) to a full config; validates."""
  overrides = dict(overrides or {})
  for key in ('algorithm.name', 'name'):
    if key in overrides:
      config = with_algorithm(config, _checked_name(overrides.pop(key)))
  for key in ('network.kind', 'kind'):
    if key in overrides and 'kind' in config['network']:
      config = sections.with_network_kind(config, overrides.pop(key))
  specs = sections.specs_for(config)
  updated = copy.deepcopy(dict(config))
  for key, value in overrides.items():
    dotted = dotted_key(key, specs)
    if '.' in dotted:
      section, leaf = dotted.split('.', 1)
      updated[section][leaf] = value
    else:
      updated[dotted] = value
  return validate(updated)


def dotted_key(key, specs):
  """The dotted key of `key` (dotted already, or a unique leaf name).

  Raises:
    ConfigError: no key of that name, or the leaf name is in several sections.
  """
  if key in specs:
    return key
  matches = [dotted for dotted in specs if dotted.rsplit('.', 1)[-1] == key]
  if len(matches) == 1:
    return matches[0]
  if matches:
    raise ConfigError(f'Config key {key!r} is ambiguous; write one of {sorted(matches)}.')
  leaves = sorted(set(specs) | {dotted.rsplit('.', 1)[-1] for dotted in specs})
  close = difflib.get_close_matches(key, leaves, n=1)
  hint = f' Did you mean {close[0]!r}?' if close else ''
  raise ConfigError(f'Unknown config key {key!r}.{hint}')


def validate(config: Mapping[str, Any]) -> RunConfig:
  """Checks every key, value and relation of a full config; returns it normalised, as a
  frozen `RunConfig`.

  Floats given as ints (or as strings such as '1e-3', which YAML 1.2 reads as
  text) become floats; lists stay lists.

  Raises:
    ConfigError: naming the first unknown, missing or bad key.
  """
  if not isinstance(config, dict):
    raise ConfigError(f'A config must be a mapping, got {type(config).__name__}.')
  expected = {'seed', *sections.SECTIONS}
  for key in config:
    if key not in expected:
      raise ConfigError(f'Unknown config key {key!r} at the top; expected {sorted(expected)}.')
  for section in sections.SECTIONS:
    if section not in config:
      raise ConfigError(f'Config is missing the section {section!r}.')
    if not isinstance(config[section], dict):
      raise ConfigError(f'Config section {section!r} must be a mapping, got '
                        f'{config.get(section)!r}.')
  name = _checked_name(config['algorithm'].get('name'))
  kind = config['network'].get('kind')
  specs = sections.specs_of(name, kind if isinstance(kind, str) else None)
  resolved: dict[str, Any] = {section: {} for section in sections.SECTIONS}
  present = [('seed', config['seed'])] if 'seed' in config else []
  present += [(f'{section}.{key}', value) for section in sections.SECTIONS
              for key, value in config[section].items()]
  for dotted, value in present:
    if dotted not in specs:
      dotted_key(dotted, specs)  # Raises naming the key, with a hint.
    value = config_fields.check_value(dotted, _float_text(value, specs[dotted]), specs[dotted])
    if '.' in dotted:
      section, leaf = dotted.split('.', 1)
      resolved[section][leaf] = value
    else:
      resolved[dotted] = value
  missing = sorted(set(specs) - {dotted for dotted, _ in present})
  if missing:
    raise ConfigError(f'Config is missing the key {missing[0]!r} ({specs[missing[0]].doc}).')
  ordered = {'seed': resolved['seed']}
  ordered.update((section, resolved[section]) for section in sections.SECTIONS)
  _check_relations(ordered)
  # What the environment defaults to, named (its plug-in's complete_config: the balloon's
  # wind).
  environment = ordered['environment']
  ordered['environment'] = plugins.environment_plugin(environment['id']).complete_config(
      environment)
  check_environment(ordered)
  run_config = RunConfig(ordered)
  # The relations an algorithm or a network kind declares, over the typed sections.
  for config_class in (sections.section_classes(name)['algorithm'],
                       sections.network_kind_config(name, ordered['network'].get('kind'))):
    if config_class is not None and hasattr(config_class, 'check_run'):
      config_class.check_run(run_config)
  return run_config


def _complete_saved(data):
  """A saved config's mapping with what its environment then defaulted to named
  (its plug-in's complete_saved_config), before validation names today's defaults."""
  environment = data.get('environment')
  env_id = environment.get('id') if isinstance(environment, dict) else None
  if not isinstance(env_id, str):
    return data
  return dict(data, environment=plugins.environment_plugin(env_id).complete_saved_config(
      environment))


def check_environment(config):
  """Imports `environment.imports`, looks the id up in Gymnasium's registry, checks kwargs.

  Raises:
    ConfigError: an import fails, the id is not registered, or a key of
      `environment.kwargs` is not a parameter of the environment's constructor.
  """
  environment = config['environment']
  import_modules(environment['imports'])
  try:
    spec = gymnasium.spec(environment['id'])
  except gymnasium.error.Error as error:
    imports = f" after importing {environment['imports']}" if environment['imports'] else ''
    raise ConfigError(f"Config key 'environment.id' = {environment['id']!r} is not a registered "
                      f'Gymnasium environment{imports} ({error}).') from None
  _check_kwargs(environment['id'], spec, environment['kwargs'])


# Keywords of gymnasium.make itself, which never reach the constructor.
_MAKE_KEYWORDS = frozenset(inspect.signature(gymnasium.make).parameters) - {'id', 'kwargs'}


def _check_kwargs(env_id, spec, kwargs):
  """Refuses a kwarg the constructor does not take (a typo would otherwise fail in a worker)."""
  try:
    creator = (gymnasium.envs.registration.load_env_creator(spec.entry_point)
               if isinstance(spec.entry_point, str) else spec.entry_point)
    parameters = inspect.signature(creator).parameters
  except (ImportError, AttributeError, TypeError, ValueError):
    return  # Not introspectable: the constructor will judge.
  if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values()):
    return
  accepted = set(parameters) | _MAKE_KEYWORDS
  unknown = sorted(set(kwargs) - accepted)
  if unknown:
    raise ConfigError(f"Config key 'environment.kwargs' names {unknown}, which {env_id} does "
                      f'not take; it takes {sorted(set(parameters) - {"self"})}.')


def import_modules(modules):
  """Imports the modules that register environments; a failure is a `ConfigError`."""
  for module in modules:
    try:
      importlib.import_module(module)
    except ImportError as error:
      raise ConfigError(f"Config key 'environment.imports': cannot import {module!r} "
                        f'({error}).') from None


def resume_config(saved: Mapping[str, Any],
                  requested: Mapping[str, Any]) -> tuple[RunConfig, list[str]]:
  """The config a resumed run continues with, and the keys that changed.

  Only keys declared `resumable` (the step budget and the cadences) may change.

  Args:
    saved: the validated config of the run (its config.yaml).
    requested: the validated config asked for now.

  Returns:
    (requested, sorted list of the dotted keys that changed).

  Raises:
    ConfigError: a key that is not resumable changed; names every such key.
  """
  changed = sorted(key for key in set(flatten(saved)) | set(flatten(requested))
                   if flatten(saved).get(key) != flatten(requested).get(key))
  specs = sections.specs_for(saved)
  refused = [key for key in changed if key not in specs or not specs[key].resumable]
  if refused:
    allowed = sorted(key for key, spec in specs.items() if spec.resumable)
    details = ', '.join(f'{key} ({flatten(saved).get(key)!r} -> {flatten(requested).get(key)!r})'
                        for key in refused)
    raise ConfigError(f'The run exists with another config; on resume only {allowed} may '
                      f'change, not {details}.')
  return as_run_config(requested), changed


def as_run_config(config: Mapping[str, Any]) -> RunConfig:
  """`config` itself when it is a `RunConfig`, else `validate(config)`."""
  return config if isinstance(config, RunConfig) else validate(config)


def flatten(config: Mapping[str, Any]) -> dict[str, Any]:
  """{dotted key: value} of a nested config."""
  flat = {key: value for key, value in config.items() if key not in sections.SECTIONS}
  for section in sections.SECTIONS:
    flat.update({f'{section}.{key}': value for key, value in config.get(section, {}).items()})
  return flat


def load_yaml(path: str) -> dict[str, Any]:
  """Reads a full config file (a run's config.yaml).

  Raises:
    ConfigError: naming the file and the problem; a nested file must hold every key.
  """
  return from_saved(yaml_io.read_yaml(path), path)


def _with_legacy_keys(data):
  """A saved config's mapping with the keys added since it was saved, at the values it ran
  with (the keys declared with `param(..., legacy=...)`)."""
  algorithm, network = data.get('algorithm'), data.get('network')
  if not isinstance(algorithm, dict) or not isinstance(network, dict):
    return data  # validate names what is wrong
  try:
    specs = sections.specs_of(_checked_name(algorithm.get('name')), network.get('kind'))
  except ConfigError:
    return data
  completed = {key: dict(value) if isinstance(value, dict) else value
               for key, value in data.items()}
  for dotted, spec in specs.items():
    section, _, leaf = dotted.rpartition('.')
    if (spec.legacy is not config_fields.NO_LEGACY and isinstance(completed.get(section), dict)
        and leaf not in completed[section]):
      completed[section][leaf] = spec.legacy
  return completed


def from_saved(data, where):
  """A full config saved by a run (its config.yaml, the config of a policy record),
  validated.

  Args:
    data: the saved mapping.
    where: what it is, for the message (a path, or a path and field).

  Raises:
    ConfigError: naming `where` and the problem; a nested config must hold every key.
  """
  if not isinstance(data, dict):
    raise ConfigError(f'{where}: a config is a mapping, not {type(data).__name__}.')
  try:
    return validate(_with_legacy_keys(_complete_saved(data)))
  except ConfigError as error:
    raise ConfigError(f'{where}: {error}') from None


def parse_override(text: str) -> tuple[str, Any]:
  """Parses one `--set key=value`; the value is read as YAML (safe loader).

  Returns:
    (key, value); the key is checked when the overrides are applied.

  Raises:
    ConfigError: no '=', or the value is not plain YAML (e.g. it carries a tag).
  """
  if '=' not in text:
    raise ConfigError(f'Override {text!r} must look like key=value.')
  key, raw = text.split('=', 1)
  return key.strip(), yaml_io.parse_value(raw, f'--set {text!r}')


def _checked_name(name):
  registry.declarations(name)  # Raises naming the key when unknown.
  return name


def _check_relations(config):
  environment, loop = config['environment'], config['loop']
  agents = environment['num_agents']
  train_steps = loop['eval_every'] or loop['steps']
  key = 'loop.eval_every' if loop['eval_every'] else 'loop.steps'
  if train_steps < agents:
    raise ConfigError(f'Config key {key!r} = {train_steps} must be at least '
                      f"environment.num_agents = {agents} (one step of the batch).")
  if loop.get('select_suite') and not loop['eval_every']:
    raise ConfigError(f"Config key 'loop.select_suite' = {loop['select_suite']!r} is flown "
                      "after each evaluation phase: it needs loop.eval_every > 0.")
  if loop['eval_every'] and loop['eval_steps'] < agents:
    raise ConfigError(f"Config key 'loop.eval_steps' = {loop['eval_steps']} must be at least "
                      f'environment.num_agents = {agents} (one step of the batch).')


def _float_text(value, spec):
  """'1e-3' -> 1e-3 for float fields: YAML 1.2 reads such numbers as text."""
  if spec.kind is float and isinstance(value, str):
    try:
      number = float(value)
    except ValueError:
      return value
    return number if not math.isnan(number) or value.strip().lower() == 'nan' else value
  return value
