"""Finds, checks and restores a run's checkpoints, and clears what interrupted saves leave.

A run's `checkpoints/` folder is written by `tf.train.CheckpointManager`:
`ckpt-<N>.index` and `ckpt-<N>.data-*` per checkpoint, and the state file
`checkpoint` listing them oldest first. Two faults break a naive resume:

- a damaged checkpoint (a truncated or corrupted file, a missing data file):
  restoring it raises deep inside TensorFlow (`IndexError: Read less bytes than
  requested`, `DataLossError`, ...). `newest_readable` reads every tensor of
  each checkpoint, newest first, and skips the ones that do not read, with one
  warning line each naming the file and the reason; `restore_newest` restores
  the first that does, so nothing damaged reaches live variables;
- a save killed midway: TensorFlow first writes into `ckpt-<N>_temp/` and the
  state file through `checkpoint.tmp<hex>`, then renames. `remove_leftovers`
  deletes such leftovers, which nothing else ever removes.

A state file that no longer parses makes TensorFlow forget every checkpoint
(a resume would start over at step 0), and one that is not UTF-8 makes it raise
`UnicodeDecodeError`; `repair_state` rewrites it from the checkpoint files found
in the folder.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

_LOG = logging.getLogger(__name__)

_STATE_FILE = 'checkpoint'
_INDEX = re.compile(r'^(?P<prefix>.+-(?P<number>\d+))\.index$')
# TensorFlow's temporary names: `<prefix>_temp/` (`<prefix>_temp_<uuid>/` on
# some file systems) for a checkpoint, `checkpoint.tmp<uuid hex>` for the state.
_LEFTOVER_DIR = re.compile(r'^.+-\d+_temp(_[0-9a-f]+)?$')
_LEFTOVER_STATE = re.compile(r'^' + _STATE_FILE + r'\.tmp[0-9a-f]{32}$')


class CheckpointError(RuntimeError):
  """Checkpoints exist, but none of them restores."""


class CheckpointSaveError(CheckpointError):
  """A checkpoint could not be written (no space left, a file size limit, permissions);
  the checkpoints saved before are intact."""


def remove_leftovers(directory: str) -> list[str]:
  """Deletes the temporary folders and files of saves that were killed midway.

  Call it only while no save is running into `directory`.

  Args:
    directory: the checkpoint folder; a missing folder holds no leftovers.

  Returns:
    The removed paths, sorted.
  """
  if not os.path.isdir(directory):
    return []
  removed = []
  for name in sorted(os.listdir(directory)):
    path = os.path.join(directory, name)
    if _LEFTOVER_DIR.match(name) and os.path.isdir(path):
      shutil.rmtree(path, ignore_errors=True)
    elif _LEFTOVER_STATE.match(name) and os.path.isfile(path):
      os.remove(path)
    else:
      continue
    removed.append(path)
  if removed:
    _LOG.info('Removed %s, left by an interrupted checkpoint save.',
              ', '.join(os.path.basename(path) for path in removed))
  return removed


def candidates(directory: str) -> list[str]:
  """Lists the checkpoints of `directory`, newest first.

  The order is the state file's (save order, which after a fallback differs
  from step order). When the state file is missing or does not parse, the
  `*-<N>.index` files are taken instead, highest N first.

  Args:
    directory: the checkpoint folder.

  Returns:
    Checkpoint path prefixes (without `.index`), newest first.
  """
  # TensorFlow joins the state file's relative paths onto the folder it is given: an
  # absolute folder keeps them from being joined twice below.
  directory = os.path.abspath(directory)
  state = _read_state(directory)
  if state is not None and state.all_model_checkpoint_paths:
    paths = list(state.all_model_checkpoint_paths)
    if state.model_checkpoint_path in paths:
      # The state file names the latest separately; keep it first.
      paths.remove(state.model_checkpoint_path)
    paths.append(state.model_checkpoint_path)
    return [_absolute(directory, path) for path in reversed(paths)]
  return _scan(directory)


def repair_state(directory: str) -> bool:
  """Rewrites a missing or unreadable state file from the checkpoint files found.

  Does nothing when the state file reads, or when there are no checkpoint
  files.

  Args:
    directory: the checkpoint folder.

  Returns:
    True when the state file was rewritten.
  """
  if _read_state(directory) is not None:
    return False
  found = _scan(directory)
  if not found:
    return False
  oldest_first = list(reversed(found))
  with _quiet_tensorflow():  # its deprecation notice; our warning says what happened
    tf.compat.v1.train.update_checkpoint_state(
        directory, oldest_first[-1], all_model_checkpoint_paths=oldest_first)
  _LOG.warning('Checkpoint state file %s was missing or unreadable; rebuilt it from %d '
               'checkpoint(s) found, newest %s.', os.path.join(directory, _STATE_FILE),
               len(found), os.path.basename(found[0]))
  return True


def find_damage(path: str) -> str | None:
  """Reads every tensor of a checkpoint; returns why it does not read, or None.

  Every tensor is read (and TensorFlow checks its checksum), so a truncated,
  corrupted or missing file is found before anything is restored into live
  variables.

  Args:
    path: a checkpoint path prefix such as `.../checkpoints/ckpt-1024`.

  Returns:
    None when the checkpoint reads; otherwise a one-line reason such as
    "IndexError: Read less bytes than requested".
  """
  try:
    reader = tf.train.load_checkpoint(path)
    for name in reader.get_variable_to_shape_map():
      reader.get_tensor(name)
  except (tf.errors.OpError, IndexError, ValueError, OSError) as error:
    message = getattr(error, 'message', None) or str(error)
    message = ' '.join(message.split())
    return f'{type(error).__name__}: {message}'
  return None


def newest_readable(directory: str) -> str | None:
  """Finds the newest checkpoint of `directory` that reads, skipping damaged ones.

  When one reads, each damaged checkpoint skipped gets one warning line naming
  it and the reason; when none does, the error names them all.
  Scripts that restore a run's policy (export, visualize, evaluate) can call
  this instead of `tf.train.latest_checkpoint`.

  Args:
    directory: the checkpoint folder.

  Returns:
    The path prefix, or None when the folder holds no checkpoint.

  Raises:
    CheckpointError: there are checkpoints, but every one of them is damaged;
      the message names each with its reason.
  """
  skipped: list[tuple[str, str]] = []
  for path in candidates(directory):
    reason = find_damage(path)
    if reason is None:
      for skipped_path, skipped_reason in skipped:
        _LOG.warning('Skipped checkpoint %s: it does not restore (%s).', skipped_path,
                     skipped_reason)
      return path
    skipped.append((path, reason))
  if skipped:
    # One error naming each, rather than a warning each and then the error.
    listed = '; '.join(f'{os.path.basename(path)} ({reason})' for path, reason in skipped)
    raise CheckpointError(f'No checkpoint in {directory} restores: {listed}. Move that folder '
                          'aside to start the run over.')
  return None


def restore_newest(checkpoint: tf.train.Checkpoint, directory: str,
                   expect: Callable[[Any], Any] | None = None) -> str | None:
  """Restores the newest checkpoint of `directory` that reads (see `newest_readable`).

  Args:
    checkpoint: the `tf.train.Checkpoint` to restore into.
    directory: the checkpoint folder.
    expect: optional callable taking the restore status, e.g.
      `lambda status: status.assert_existing_objects_matched()`; its errors
      (a checkpoint of a different model) propagate, they are not damage.

  Returns:
    The restored path prefix, or None when the folder holds no checkpoint.

  Raises:
    CheckpointError: there are checkpoints, but none of them reads.
  """
  path = newest_readable(directory)
  if path is not None:
    status = checkpoint.restore(path)
    if expect is not None:
      try:
        expect(status)
      except Exception:
        # The caller hears of the mismatch from `expect`'s error; TensorFlow's warnings
        # about the values left unrestored, when `status` is deleted, would repeat it.
        status.expect_partial()
        raise
  return path


def _read_state(directory: str) -> Any:
  """The parsed state file, or None when it is missing, unreadable or empty."""
  path = os.path.join(directory, _STATE_FILE)
  if not os.path.isfile(path):
    return None
  try:
    # TensorFlow returns None when the file does not parse, with two warning
    # lines that `repair_state`'s one line replaces.
    with _quiet_tensorflow():
      return tf.train.get_checkpoint_state(directory)
  except (tf.errors.OpError, ValueError, UnicodeDecodeError):
    return None


@contextlib.contextmanager
def _quiet_tensorflow() -> Iterator[None]:
  """Keeps TensorFlow's Python warnings out of the log for the block."""
  logger = logging.getLogger('tensorflow')
  level = logger.level
  logger.setLevel(logging.ERROR)
  try:
    yield
  finally:
    logger.setLevel(level)


def _scan(directory: str) -> list[str]:
  """Checkpoint prefixes found by their `.index` files, highest number first."""
  if not os.path.isdir(directory):
    return []
  found = []
  for name in os.listdir(directory):
    match = _INDEX.match(name)
    if match:
      found.append((int(match.group('number')), os.path.join(directory, match.group('prefix'))))
  return [path for _, path in sorted(found, reverse=True)]


def _absolute(directory: str, path: str) -> str:
  return path if os.path.isabs(path) else os.path.join(directory, path)
