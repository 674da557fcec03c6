"""A run's manifest, `run.yaml`: which versions ran it, and its runs in experiment trackers.

    format: 1
    project_version: 0.1.0          # agents.__version__ that started the run
    sessions:                       # one entry per start and per resume
    - {started: '2026-11-25T08:50:52', project_version: 0.1.0, python: 3.11.7,
       tensorflow: 2.21.0, platform: Linux-6.1-x86_64}
    trackers:                       # what each tracker needs to reopen its run
      mlflow: {run_id: 5f0c..., tracking_uri: 'http://localhost:5000'}
      wandb: {id: m7l7l3vs, project: agents}

`config.yaml` beside it holds the config alone (it is read back as a config); this
file holds what is about the run rather than its settings. It is written atomically;
one that cannot be read is set aside as `run.yaml.unreadable` and started anew, since
nothing in it is needed to resume the run.
"""

import datetime
import logging
import os
import platform
import sys

import agents
from agents.config_fields import ConfigError
from agents.configs import yaml_io

FILENAME = 'run.yaml'
FORMAT = 1

_LOG = logging.getLogger(__name__)


def path_in(run_dir):
  """The manifest's path in a run directory."""
  return os.path.join(run_dir, FILENAME)


def read(run_dir):
  """The run's manifest as a mapping; {} when there is none or it cannot be read."""
  path = path_in(run_dir)
  if not os.path.exists(path):
    return {}
  try:
    return yaml_io.read_yaml(path)
  except ConfigError as error:
    _LOG.warning('%s; it is kept as %s.unreadable and written anew.', error, FILENAME)
    os.replace(path, path + '.unreadable')
    return {}


def record_session(run_dir):
  """Adds this start (or resume) of the run, with the versions it runs on; returns the data."""
  data = read(run_dir)
  data.setdefault('format', FORMAT)
  data.setdefault('project_version', agents.__version__)
  data.setdefault('sessions', []).append(_session())
  data.setdefault('trackers', {})
  yaml_io.save_yaml(data, path_in(run_dir))
  return data


def record_trackers(run_dir, states):
  """Keeps what each started tracker returned ({name: state}), so a resume reopens it."""
  data = read(run_dir)
  data.setdefault('trackers', {}).update(
      {name: dict(state) for name, state in states.items() if state})
  yaml_io.save_yaml(data, path_in(run_dir))


def _session():
  tensorflow = sys.modules.get('tensorflow')
  return dict(
      started=datetime.datetime.now().isoformat(timespec='seconds'),
      project_version=agents.__version__, python=platform.python_version(),
      tensorflow=getattr(tensorflow, '__version__', None),
      platform=f'{platform.system()}-{platform.release()}-{platform.machine()}')

