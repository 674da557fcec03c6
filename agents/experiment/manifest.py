"""An experiment's manifest: `experiment.yaml`, plain YAML beside its run directories.

The manifest holds what it takes to rebuild an `ExperimentManager` without
pickle: the configs, the seeds, the fit directories (relative to the
manifest) and their states, the hyperparameter study, and the version of the
project that wrote it. Loading a manifest written by another version warns.
"""

import io
import os
import warnings

from ruamel.yaml import YAML

import agents

FILENAME = 'experiment.yaml'
FORMAT = 1
_DISTRIBUTION = 'batchppo-agents'


class NotAnExperimentError(ValueError):
  """A directory holds no experiment manifest, or an unreadable one."""


def project_version():
  """The version of the project, `agents.__version__`."""
  return agents.__version__


def plain(value):
  """`value` with tuples as lists and NumPy scalars as Python ones, recursively (for YAML)."""
  if isinstance(value, dict):
    return {key: plain(item) for key, item in value.items()}
  if isinstance(value, (list, tuple)):
    return [plain(item) for item in value]
  if hasattr(value, 'item') and not isinstance(value, (str, bytes)):
    return value.item()
  return value


def path_in(directory):
  """The manifest's path in an experiment directory."""
  return os.path.join(directory, FILENAME)


def exists(directory):
  """Whether `directory` holds a manifest."""
  return os.path.isfile(path_in(directory))


def write(directory, data):
  """Writes the manifest atomically (temporary file, then rename).

  Args:
    directory: the experiment directory (created when missing).
    data: plain mapping; `format` and `project_version` are added.
  """
  os.makedirs(directory, exist_ok=True)
  data = plain(dict(format=FORMAT, project_version=project_version(), **data))
  yaml = YAML(typ='safe', pure=True)
  yaml.default_flow_style = False
  text = io.StringIO()
  yaml.dump(data, text)
  path = path_in(directory)
  temporary = path + '.tmp'
  with open(temporary, 'w', encoding='utf-8') as file:
    file.write(text.getvalue())
  os.replace(temporary, path)


def read(directory):
  """Reads a manifest; warns when another version of the project wrote it.

  Args:
    directory: an experiment directory.

  Returns:
    The manifest mapping.

  Raises:
    NotAnExperimentError: no manifest, or not one this code can read.
  """
  path = path_in(directory)
  if not os.path.isdir(directory):
    raise NotAnExperimentError(f'{directory} is not a directory.')
  if not os.path.isfile(path):
    raise NotAnExperimentError(
        f'{directory} is not an experiment: it has no {FILENAME} '
        '(ExperimentManager.save writes one).')
  with open(path, encoding='utf-8') as file:
    try:
      data = YAML(typ='safe', pure=True).load(file)
    except Exception as error:  # ruamel raises several unrelated types.
      raise NotAnExperimentError(f'{path} is not valid YAML: {error}') from error
  if not isinstance(data, dict) or 'format' not in data:
    raise NotAnExperimentError(f'{path} is not an experiment manifest (no format key).')
  if data['format'] != FORMAT:
    raise NotAnExperimentError(
        f"{path} has manifest format {data['format']!r}; this version reads format {FORMAT}.")
  written_by = data.get('project_version')
  if written_by != project_version():
    warnings.warn(
        f'{path} was written by {_DISTRIBUTION} {written_by}, this is {project_version()}; '
        'results and resumed fits may differ.', stacklevel=3)
  return data
