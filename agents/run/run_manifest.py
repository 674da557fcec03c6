"""A run's manifest, `run.yaml`: which versions ran it, and its runs in experiment trackers.

    format: 1
    project_version: 0.1.0          # agents.__version__ that started the run
    sessions:                       # one entry per start and per resume
    - {started: '2026-11-25T08:50:52', project_version: 0.1.0, commit: 9dbb4ea1b18c...,
       python: 3.11.7, tensorflow: 2.21.0, platform: Linux-6.1-x86_64,
       environments: {processes: false, rule: auto, workers: 2, step_us: 9.3, hop_us: 150.0}}
    trackers:                       # what each tracker needs to reopen its run
      mlflow: {run_id: 5f0c..., tracking_uri: 'http://localhost:5000'}
      wandb: {id: m7l7l3vs, project: agents}

`config.yaml` beside it holds the config alone (it is read back as a config); this
file holds what is about the run rather than its settings. `record_session` is its one
writer: once per start, atomically, with the trackers that start then. One that cannot
be read is set aside as `run.yaml.unreadable` and started anew, since nothing in it is
needed to resume the run.

A session's `environments` says where its environments stepped and why
(`agents.tools.placement`: `environment.processes: auto` decides at each start). A
session's `commit` is the git commit of the source tree the package was imported from
(with `-dirty` when tracked files differ from it), or null for an installed wheel.
"""

from __future__ import annotations

import datetime
import logging
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import Any

import agents
from agents.config_fields import ConfigError
from agents.configs import yaml_io

FILENAME = 'run.yaml'
FORMAT = 1

_LOG = logging.getLogger(__name__)


def path_in(run_dir: str) -> str:
  """The manifest's path in a run directory."""
  return os.path.join(run_dir, FILENAME)


def read(run_dir: str, set_aside: bool = True) -> dict[str, Any]:
  """The run's manifest as a mapping; {} when there is none or it cannot be read.

  Args:
    run_dir: the run directory.
    set_aside: move an unreadable manifest to `run.yaml.unreadable` (so the run writes it
      anew); False leaves the run untouched (a reader such as export).
  """
  path = path_in(run_dir)
  if not os.path.exists(path):
    return {}
  try:
    return yaml_io.read_yaml(path)
  except ConfigError as error:
    if not set_aside:
      _LOG.warning('%s; read as empty.', error)
      return {}
    _LOG.warning('%s; it is kept as %s.unreadable and written anew.', error, FILENAME)
    os.replace(path, path + '.unreadable')
    return {}


def record_session(
    run_dir: str, environments: Mapping[str, Any] | None = None,
    start_trackers: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
  """Adds this start (or resume) of the run, with the versions it runs on, and what the
  trackers started now need to reopen their runs; writes run.yaml once and returns the data.

  Args:
    run_dir: the run directory.
    environments: where the environments step (`Placement.as_record()`), or None.
    start_trackers: None, or a function that takes the trackers' states kept so far
      ({name: state}; a resumed run's) and returns those of the trackers it started
      ({name: state}; an empty state is not kept). The session is written even when it
      raises.
  """
  data = read(run_dir)
  data.setdefault('format', FORMAT)
  data.setdefault('project_version', agents.__version__)
  session = _session()
  if environments is not None:
    session['environments'] = dict(environments)
  data.setdefault('sessions', []).append(session)
  trackers = data.setdefault('trackers', {})
  try:
    if start_trackers is not None:
      states = start_trackers(dict(trackers))
      trackers.update({name: dict(state) for name, state in states.items() if state})
  finally:
    yaml_io.save_yaml(data, path_in(run_dir))
  return data


def source_commit() -> str | None:
  """The git commit of the source tree this package runs from, or None.

  None when the package is not the top folder of a git work tree (an installed wheel, or
  git missing); `<sha>-dirty` when tracked files differ from the commit.
  """
  package_root = os.path.dirname(os.path.dirname(os.path.abspath(agents.__file__)))

  def git(*arguments: str) -> str:
    return subprocess.run(['git', '-C', package_root, *arguments], capture_output=True,
                          text=True, timeout=10, check=True).stdout.strip()

  try:
    # A site-packages inside someone else's repository is not our source tree.
    if os.path.realpath(git('rev-parse', '--show-toplevel')) != os.path.realpath(package_root):
      return None
    commit = git('rev-parse', 'HEAD')
    dirty = git('status', '--porcelain', '--untracked-files=no')
  except (OSError, subprocess.SubprocessError):
    return None
  return commit + ('-dirty' if dirty else '')


def _session() -> dict[str, Any]:
  tensorflow = sys.modules.get('tensorflow')
  return dict(
      started=datetime.datetime.now().isoformat(timespec='seconds'),
      project_version=agents.__version__, commit=source_commit(),
      python=platform.python_version(),
      tensorflow=getattr(tensorflow, '__version__', None),
      platform=f'{platform.system()}-{platform.release()}-{platform.machine()}')
