"""An exported policy's record, `policy.yaml`: what the SavedModel beside it is.

    format: 1
    name: balloon_ppo
    algorithm: ppo
    env_id: BalloonLearningEnvironment-v0
    observation_shape: [1099]
    weights_sha256: 3f1c...        # of saved_model.pb and variables/, as exported
    exported: {date: '2026-11-25T10:40:00', project_version: 0.1.0, commit: aa25d91...}
    training:                      # from the run: its run.yaml, metrics.jsonl, checkpoint
      steps: 5577728               # environment steps of the exported checkpoint
      seconds: 603.2               # wall-clock time of the sessions up to them; null: unknown
      checkpoint: ckpt-5577728
      seed: 1097713535
      project_version: 0.1.0       # the version and commit that last trained it
      commit: 9dbb4ea...
    config: {seed: ..., environment: ..., network: ..., algorithm: ..., loop: ...}
    evaluations:                   # only what was measured on these weights; may be []
    - suite: {name: small_eval, num_seeds: 100, episode_length: 960}
      metric: twr50                # the headline metric; statistics holds every one
      statistics: {twr50: {mean: 0.341, mean_ci95: [0.272, 0.412], iqm: ..., median: ...}}
      command: python -m agents.scripts.evaluate --agent=savedmodel:... --suite=small_eval
      measured: {date: ..., project_version: 0.1.0, commit: ...}
      weights_sha256: 3f1c...
    load: {tensorflow: ..., evaluate: ..., visualize: ...}   # how to fly it
    notes: null                    # free text (e.g. how a record was reconstructed)

The record is written atomically (`agents.configs.yaml_io`) and validated when it is
written and when it is read: a missing or mistyped field is a `PolicyRecordError`
naming the file and the field. An evaluation is added only for the weights it measured
(`weights_sha256` must match the folder's), so the record never claims results of other
weights. The versions and commits come from `agents.run.run_manifest`.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import agents
from agents.config_fields import ConfigError
from agents.configs import yaml_io
from agents.run import run_manifest

FILENAME = 'policy.yaml'
FORMAT = 1

_TEXT = (str,)
_OPTIONAL_TEXT = (str, type(None))
_INT = (int,)
_OPTIONAL_INT = (int, type(None))
_OPTIONAL_NUMBER = (int, float, type(None))
_MAPPING = (dict,)
_LIST = (list,)
_CHECKPOINT_NAME = re.compile(r'ckpt-(\d+)')
_LINE_WIDTH = 4096

# field -> accepted types, for the record and each of its sections.
_FIELDS = {
    'format': _INT, 'name': _TEXT, 'algorithm': _TEXT, 'env_id': _TEXT,
    'observation_shape': _LIST, 'weights_sha256': _TEXT, 'exported': _MAPPING,
    'training': _MAPPING, 'config': _MAPPING, 'evaluations': _LIST, 'load': _MAPPING,
    'notes': _OPTIONAL_TEXT,
}
_PROVENANCE_FIELDS = {'date': _TEXT, 'project_version': _OPTIONAL_TEXT,
                      'commit': _OPTIONAL_TEXT}
_TRAINING_FIELDS = {
    'steps': _OPTIONAL_INT, 'seconds': _OPTIONAL_NUMBER, 'checkpoint': _OPTIONAL_TEXT,
    'seed': _OPTIONAL_INT, 'project_version': _OPTIONAL_TEXT, 'commit': _OPTIONAL_TEXT,
}
_EVALUATION_FIELDS = {
    'suite': _MAPPING, 'metric': _TEXT, 'statistics': _MAPPING, 'command': _TEXT,
    'measured': _MAPPING, 'weights_sha256': _TEXT,
}
_SUITE_FIELDS = {'name': _TEXT, 'num_seeds': _INT, 'episode_length': _INT}
_STATISTIC_FIELDS = {'mean': (int, float), 'mean_ci95': _LIST, 'iqm': (int, float),
                     'iqm_ci95': _LIST, 'median': (int, float)}
_LOAD_FIELDS = {'tensorflow': _TEXT, 'evaluate': _TEXT, 'visualize': _TEXT}


class PolicyRecordError(ConfigError):
  """A policy record that is missing a field, holds a wrong one, or cannot be read."""


def path_in(directory: str) -> str:
  """The record's path in an exported policy folder."""
  return os.path.join(directory, FILENAME)


def exists(directory: str) -> bool:
  """Whether `directory` holds a record."""
  return os.path.isfile(path_in(directory))


def remove(directory: str) -> None:
  """Removes the folder's record and card (before new weights are written over them)."""
  from agents.run import model_card
  for path in (path_in(directory), model_card.path_in(directory)):
    if os.path.exists(path):
      os.remove(path)


def load(directory: str) -> dict[str, Any] | None:
  """The validated record of an exported policy folder, or None when it has none.

  Folders exported before records existed have none; they still fly.

  Raises:
    PolicyRecordError: the record cannot be read or is not valid (naming file and field).
  """
  path = path_in(directory)
  if not os.path.exists(path):
    return None
  try:
    data = yaml_io.read_yaml(path)
  except ConfigError as error:
    # yaml_io speaks of config files; this one is a policy record.
    message = str(error).replace('Config file ', 'Policy record ', 1)
    raise PolicyRecordError(message.replace('a mapping of config keys', 'a mapping')) from None
  return validate(data, path)


def write(directory: str, record: Mapping[str, Any]) -> None:
  """Validates `record`, writes it atomically as policy.yaml, and writes its model card."""
  from agents.run import model_card
  validate(record, path_in(directory))
  # Commands and paths on one line each, so they copy and paste whole.
  yaml_io.save_yaml(record, path_in(directory), width=_LINE_WIDTH)
  model_card.write(directory, record)


def validate(record: Any, where: str = FILENAME) -> dict[str, Any]:
  """Checks every field of a record; returns it.

  Args:
    record: the record mapping.
    where: what it is, for the message (its path).

  Raises:
    PolicyRecordError: naming `where` and the first wrong field (dotted, e.g.
      `evaluations[0].suite.num_seeds`), with what was expected.
  """
  if not isinstance(record, dict):
    raise PolicyRecordError(f'{where}: a policy record is a mapping, not '
                            f'{type(record).__name__}.')
  if 'format' in record and record['format'] != FORMAT:
    raise PolicyRecordError(f'{where}: field format is {record["format"]!r}; this version of '
                            f'agents reads policy records of format {FORMAT}.')
  _check_fields(record, _FIELDS, '', where)
  if not all(isinstance(size, int) and size > 0 for size in record['observation_shape']):
    raise PolicyRecordError(f'{where}: field observation_shape must be a list of positive '
                            f'ints, got {record["observation_shape"]!r}.')
  _check_fields(record['exported'], _PROVENANCE_FIELDS, 'exported.', where)
  _check_fields(record['training'], _TRAINING_FIELDS, 'training.', where)
  _check_fields(record['load'], _LOAD_FIELDS, 'load.', where)
  for index, evaluation in enumerate(record['evaluations']):
    prefix = f'evaluations[{index}].'
    if not isinstance(evaluation, dict):
      raise PolicyRecordError(f'{where}: field {prefix[:-1]} must be a mapping, got '
                              f'{evaluation!r}.')
    _check_fields(evaluation, _EVALUATION_FIELDS, prefix, where)
    _check_fields(evaluation['suite'], _SUITE_FIELDS, prefix + 'suite.', where)
    _check_fields(evaluation['measured'], _PROVENANCE_FIELDS, prefix + 'measured.', where)
    if evaluation['metric'] not in evaluation['statistics']:
      raise PolicyRecordError(f'{where}: field {prefix}statistics has no entry for its metric '
                              f'{evaluation["metric"]!r}.')
    for name, statistics in evaluation['statistics'].items():
      _check_fields(statistics, _STATISTIC_FIELDS, f'{prefix}statistics.{name}.', where)
  return record


def _check_fields(mapping: Any, fields: Mapping[str, tuple[type, ...]], prefix: str,
                  where: str) -> None:
  if not isinstance(mapping, dict):
    raise PolicyRecordError(f'{where}: field {prefix[:-1]} must be a mapping, got {mapping!r}.')
  for field, types in fields.items():
    if field not in mapping:
      raise PolicyRecordError(f'{where}: field {prefix}{field} is missing.')
    value = mapping[field]
    # A bool is an int to Python, never to a record.
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
      expected = ' or '.join('null' if kind is type(None) else kind.__name__  # pylint: disable=unidiomatic-typecheck
                             for kind in types)
      raise PolicyRecordError(f'{where}: field {prefix}{field} must be {expected}, got '
                              f'{value!r}.')


def weights_digest(directory: str) -> str:
  """SHA-256 of a SavedModel folder's `saved_model.pb` and `variables/` files, in order."""
  digest = hashlib.sha256()
  paths = [os.path.join(directory, 'saved_model.pb')]
  variables = os.path.join(directory, 'variables')
  if os.path.isdir(variables):
    paths += [os.path.join(variables, name) for name in sorted(os.listdir(variables))]
  for path in paths:
    digest.update(os.path.relpath(path, directory).encode())
    with open(path, 'rb') as file:
      for block in iter(lambda: file.read(1 << 20), b''):  # pylint: disable=cell-var-from-loop
        digest.update(block)
  return digest.hexdigest()


def provenance() -> dict[str, Any]:
  """{date, project_version, commit} of this process: who exports or measures now."""
  return dict(date=datetime.datetime.now().isoformat(timespec='seconds'),
              project_version=agents.__version__, commit=run_manifest.source_commit())


def training_of(run_dir: str | None, config: Mapping[str, Any], step: int | None = None,
                checkpoint: str | None = None) -> dict[str, Any]:
  """The `training` section of a run's policy: steps, time, checkpoint, seed, provenance.

  Args:
    run_dir: the run directory, or None when the policy has none (nothing but the
      config's seed is then known).
    config: the run's config.
    step: the global step of the weights; None reads it from the checkpoint's name
      (`ckpt-<step>`).
    checkpoint: the checkpoint of the weights; None is `ckpt-<step>` when the run has it.

  The version and commit are those of the run's last session (`run.yaml`); the time is
  the wall-clock time of its sessions up to the last metrics row at or before `step`,
  without the pauses between them (None when the run has no run.yaml or metrics).
  """
  name = checkpoint and os.path.basename(checkpoint)
  matched = _CHECKPOINT_NAME.fullmatch(name) if step is None and name else None
  if matched:
    step = int(matched.group(1))
  if name is None and step is not None and run_dir and os.path.exists(
      os.path.join(run_dir, 'checkpoints', f'ckpt-{step}.index')):
    name = f'ckpt-{step}'
  sessions = run_dir and run_manifest.read(run_dir, set_aside=False).get('sessions') or []
  last = sessions[-1] if sessions else {}
  return dict(steps=None if step is None else int(step),
              seconds=_training_seconds(run_dir, sessions, step), checkpoint=name,
              seed=config.get('seed'), project_version=last.get('project_version'),
              commit=last.get('commit'))


def _training_seconds(run_dir: str | None, sessions: Sequence[Mapping[str, Any]],
                      step: int | None) -> float | None:
  from agents.run import metrics_writer
  if not sessions or step is None or not run_dir:
    return None
  path = os.path.join(run_dir, 'metrics.jsonl')
  if not os.path.exists(path):
    return None
  try:
    starts = [datetime.datetime.fromisoformat(session['started']).timestamp()
              for session in sessions]
  except (KeyError, TypeError, ValueError):
    return None
  times = [row['wall_time'] for row in metrics_writer.read_metrics(path)
           if isinstance(row.get('wall_time'), (int, float)) and row.get('step', 0) <= step]
  total = 0.0
  for start, end in zip(starts, starts[1:] + [float('inf')]):
    within = [time for time in times if start <= time < end]
    total += max(within) - start if within else 0.0
  return round(total, 1) if total else None


def load_instructions(directory: str, observation_shape: Sequence[int]) -> dict[str, str]:
  """The `load` section: how to fly the folder, in TensorFlow and with this package."""
  shape = ', '.join(str(size) for size in observation_shape)
  return dict(
      tensorflow=f"tf.saved_model.load('{directory}').action(observations [N, {shape}] "
                 'float32) -> actions [N, ...]',
      evaluate=f'python -m agents.scripts.evaluate --agent=savedmodel:{directory} '
               '--suite=small_eval --output_dir=eval/policy',
      visualize=f'python -m agents.scripts.visualize --savedmodel={directory} '
                '--outdir=videos')


def new_record(directory: str, name: str, config: Any, env_id: str,
               observation_shape: Sequence[int], training: Mapping[str, Any],
               notes: str | None = None) -> dict[str, Any]:
  """A record of the SavedModel now in `directory`, with no evaluation yet."""
  return dict(
      format=FORMAT, name=name, algorithm=config.algorithm_name, env_id=env_id,
      observation_shape=[int(size) for size in observation_shape],
      weights_sha256=weights_digest(directory), exported=provenance(), training=training,
      config=config, evaluations=[], load=load_instructions(directory, observation_shape),
      notes=notes)


def evaluation_of(summary: Mapping[str, Any], command: str, directory: str) -> dict[str, Any]:
  """A record's evaluation entry from an evaluation summary (`summary.json`'s content).

  Args:
    summary: the summary of a complete suite: `suite`, `metric` and one statistics
      mapping (mean, mean_ci95, iqm, iqm_ci95, median) per described metric.
    command: the command line that measured it.
    directory: the SavedModel folder that was flown (its weights are hashed).
  """
  statistics = {name: {key: value[key] for key in _STATISTIC_FIELDS}
                for name, value in summary.items()
                if isinstance(value, dict) and set(_STATISTIC_FIELDS) <= set(value)}
  suite = {key: value for key, value in summary['suite'].items() if key != 'seeds'}
  return dict(suite=suite, metric=summary['metric'], statistics=statistics, command=command,
              measured=provenance(), weights_sha256=weights_digest(directory))


def add_evaluation(directory: str, evaluation: Mapping[str, Any]) -> dict[str, Any]:
  """Adds an evaluation to the folder's record (replacing one of the same suite).

  Raises:
    PolicyRecordError: the folder has no record, or the evaluation measured other weights
      than the record describes (the folder's SavedModel was replaced since export).
  """
  record = load(directory)
  if record is None:
    raise PolicyRecordError(f'{directory} has no {FILENAME} to add the evaluation to; '
                            're-export the policy with agents.scripts.export.')
  if evaluation['weights_sha256'] != record['weights_sha256']:
    raise PolicyRecordError(
        f'{path_in(directory)}: field weights_sha256 describes other weights than '
        f'{directory} holds (the SavedModel changed since export); re-export it.')
  record['evaluations'] = [entry for entry in record['evaluations']
                           if entry['suite'] != evaluation['suite']] + [evaluation]
  write(directory, record)
  return record


def describe(record: Mapping[str, Any]) -> str:
  """One line: what a record's policy is ('name: ppo on Env-v0, 5,577,728 steps, ...')."""
  training = record['training']
  steps = 'steps unknown' if training['steps'] is None else f'{training["steps"]:,} steps'
  commit = training['commit'] or 'unknown commit'
  return (f'{record["name"]}: {record["algorithm"]} on {record["env_id"]}, {steps}, '
          f'trained by agents {training["project_version"] or "(version unknown)"} at '
          f'{commit[:12]}')
