"""Starting a session in a run directory: its config.yaml, its run.yaml and its trackers.

`prepare_run` checks a config against the run's saved one (a resumed run may change
only the resumable keys) and writes config.yaml; `start_trackers` records the session
in run.yaml and starts the experiment trackers of `loop.track`.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Mapping
from typing import Any

from agents import configs
from agents.run import run_manifest, tracking

_LOG = logging.getLogger(__name__)


def prepare_run(config: Mapping[str, Any], run_dir: str) -> configs.RunConfig:
  """Validates `config` against the run's saved one and writes config.yaml.

  Returns:
    The config to train with.

  Raises:
    ConfigError: the run exists with a config that differs in more than the
      resumable keys, or its config.yaml is unreadable.
  """
  config = configs.validate(config)
  tracking.check_names(config.loop.track)
  config_path = os.path.join(run_dir, 'config.yaml')
  if os.path.exists(config_path):
    saved = configs.load_yaml(config_path)
    config, changed = configs.resume_config(saved, config)
    if changed:
      _LOG.info('Resuming %s with changed %s.', run_dir, ', '.join(changed))
  os.makedirs(run_dir, exist_ok=True)
  configs.save_yaml(config, config_path)
  return config


def start_trackers(config: Mapping[str, Any], run_dir: str, name: str | None,
                   group: str | None,
                   environments: Mapping[str, Any] | None = None) -> list[Any]:
  """Records this start in run.yaml, then starts the trackers of `loop.track` (reopening
  the runs they opened before when resumed); returns the trackers that started.

  Args:
    config: the run's config, or a Python agent run's (its `loop.track`; its keys are the
      trackers' parameters).
    run_dir: the run directory.
    name: the run's name in the trackers; None: the run directory's name.
    group: the experiment the trackers file the run under, or None.
    environments: where the environments step (`Placement.as_record()`), for run.yaml.
  """
  track = list(config['loop']['track'])  # a run config's, or a Python agent run's
  started = []

  def start(previous: dict[str, Any]) -> Mapping[str, Any]:
    if not track:
      return {}
    run = tracking.TrackedRun(name=name or os.path.basename(os.path.abspath(run_dir)),
                              group=group, run_dir=run_dir, config=copy.deepcopy(dict(config)),
                              params=configs.flatten(config))
    trackers, states = tracking.start(track, run, previous)
    started.extend(trackers)
    return states

  run_manifest.record_session(run_dir, environments, start)
  return started
