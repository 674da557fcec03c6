"""Configs on disk: YAML written atomically, read with ruamel.yaml's safe loader only.

Nothing read here is executed or unpickled: a tag such as `!!python/object`
is refused, and so is a file that is not text or not a mapping, each with a
`ConfigError` naming the file.
"""

import copy
import io
import os
import uuid

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from agents.config_fields import ConfigError


def _yaml(width=None):
  yaml = YAML(typ='safe', pure=True)
  yaml.default_flow_style = False
  if width:
    yaml.width = width
  # Keys in declaration order: seed, environment, network, algorithm (name first), loop.
  yaml.representer.sort_base_mapping_type_on_output = False
  return yaml


def dump_yaml(config, width=None):
  """Returns the config as a YAML string; `width` is the line length at which long strings
  fold (None: the library's, 80)."""
  stream = io.StringIO()
  # A plain deep copy: the YAML writer knows plain dicts only, not a frozen `RunConfig`.
  _yaml(width).dump(copy.deepcopy(config), stream)
  return stream.getvalue()


def save_yaml(config, path, width=None):
  """Writes the config to `path` as YAML: a temporary file, then an atomic rename.

  Args:
    config: the mapping to write.
    path: the file.
    width: the line length at which long strings fold (None: 80).
  """
  folder = os.path.dirname(os.path.abspath(path))
  # A fresh name created exclusively (as mkstemp would), but with the mode a plain open()
  # gives (mkstemp's files are private, 0600).
  temporary = os.path.join(folder, f'.config-{uuid.uuid4().hex}.yaml')
  try:
    with open(temporary, 'x', encoding='utf-8') as file:
      file.write(dump_yaml(config, width))
    os.replace(temporary, path)
  except BaseException:
    if os.path.exists(temporary):
      os.remove(temporary)
    raise


def parse_value(text, where):
  """Reads one value written as YAML (safe loader), e.g. '[64, 64]' or 'true'.

  Args:
    text: the YAML text.
    where: what the text is, for the message (e.g. "--set 'policy_layers=[0'").

  Raises:
    ConfigError: the text is not plain YAML, or carries a tag the safe loader refuses.
  """
  try:
    return _yaml().load(text) if text.strip() else None
  except YAMLError as error:
    raise ConfigError(f'{where}: not a plain YAML value ({_first_line(error)}).') from None


def read_yaml(path):
  """Reads a YAML mapping from `path`.

  Raises:
    ConfigError: the file is missing, unreadable, not UTF-8 text, not YAML, carries a
      refused tag, or does not hold a mapping.
  """
  try:
    with open(path, encoding='utf-8') as file:
      text = file.read()
  except FileNotFoundError:
    raise ConfigError(f'Config file {path} does not exist.') from None
  except UnicodeDecodeError:
    raise ConfigError(f'Config file {path} is not UTF-8 text (corrupted or binary); restore '
                      'it or start a new run.') from None
  except OSError as error:
    raise ConfigError(f'Config file {path} cannot be read: {error.strerror}.') from None
  if '\x00' in text:
    raise ConfigError(f'Config file {path} holds NUL bytes (corrupted or binary); restore it '
                      'or start a new run.')
  try:
    data = _yaml().load(text)
  except YAMLError as error:
    raise ConfigError(f'Config file {path} is not valid YAML ({_first_line(error)}).') from None
  if not isinstance(data, dict):
    raise ConfigError(f'Config file {path} does not hold a mapping of config keys.')
  return data


def _first_line(error):
  """The problem and its place, e.g. 'while parsing a flow sequence, line 1, column 7'."""
  problem = getattr(error, 'problem', None) or getattr(error, 'context', None)
  mark = getattr(error, 'problem_mark', None) or getattr(error, 'context_mark', None)
  if problem is None:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
  where = f', line {mark.line + 1}, column {mark.column + 1}' if mark is not None else ''
  context = getattr(error, 'context', None)
  return f'{context + ": " if context and context != problem else ""}{problem}{where}'
