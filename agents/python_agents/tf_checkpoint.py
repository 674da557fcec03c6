"""BLE's per-iteration agent checkpoints for agents whose state is TensorFlow variables.

    checkpoint = tf_checkpoint.AgentCheckpoint(online=network, optimizer=optimizer)
    checkpoint.save(checkpoint_dir, iteration)          # <dir>/ckpt-<iteration>.*
    checkpoint.load(checkpoint_dir, iteration)
    iteration = checkpoint.reload_latest(checkpoint_dir)  # -1 when there is none

These are the bodies of an agent's `save_checkpoint`, `load_checkpoint` and
`reload_latest_checkpoint` (BLE's three methods), over a `tf.train.Checkpoint` of the
given objects. A damaged newest checkpoint (a kill during a save) is skipped with a
warning, as a run's resume does (`agents.run.checkpoints.newest_readable`).
"""

from __future__ import annotations

import os
import re
from typing import Any

import tensorflow as tf

from agents.run import checkpoints

_ITERATION = re.compile(r'-(\d+)$')


class AgentCheckpoint:
  """A `tf.train.Checkpoint` of an agent's objects, written once per iteration.

  Args:
    prefix: the file name before `-<iteration>`.
    **objects: the trackables to save (networks, optimizers, variables).
  """

  def __init__(self, prefix: str = 'ckpt', **objects: Any) -> None:
    self._prefix = prefix
    self._checkpoint = tf.train.Checkpoint(**objects)

  def path(self, checkpoint_dir: str, iteration: int) -> str:
    """The path prefix of an iteration's checkpoint."""
    return os.path.join(checkpoint_dir, f'{self._prefix}-{int(iteration)}')

  def save(self, checkpoint_dir: str, iteration: int) -> str:
    """Writes the objects as iteration `iteration`'s checkpoint; returns its prefix."""
    os.makedirs(checkpoint_dir, exist_ok=True)
    return self._checkpoint.write(self.path(checkpoint_dir, iteration))

  def load(self, checkpoint_dir: str, iteration: int) -> None:
    """Restores iteration `iteration`'s checkpoint.

    Raises:
      FileNotFoundError: there is no such checkpoint (its path named).
      checkpoints.CheckpointError: it holds other objects (another agent's).
    """
    path = self.path(checkpoint_dir, iteration)
    if not os.path.exists(path + '.index'):
      raise FileNotFoundError(f'no checkpoint of iteration {iteration}: {path}.index does '
                              'not exist.')
    self._restore(path)

  def reload_latest(self, checkpoint_dir: str) -> int:
    """Restores the newest checkpoint that reads; returns its iteration, or -1 if none.

    Raises:
      checkpoints.CheckpointError: checkpoints exist but none reads, or the newest holds
        other objects (another agent's).
    """
    if not os.path.isdir(checkpoint_dir):
      return -1
    path = checkpoints.newest_readable(checkpoint_dir)
    if path is None:
      return -1
    self._restore(path)
    match = _ITERATION.search(path)
    assert match is not None  # newest_readable returns the path of a numbered checkpoint.
    return int(match.group(1))

  def _restore(self, path: str) -> None:
    try:
      self._checkpoint.read(path).assert_existing_objects_matched()
    except (AssertionError, ValueError, tf.errors.OpError) as error:
      message = ' '.join(str(error).split())[:300]
      raise checkpoints.CheckpointError(
          f'checkpoint {path} does not hold this agent\'s variables (another agent\'s, or '
          f'another network size?): {message}') from None
