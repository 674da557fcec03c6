"""Averages a run's last checkpoints into one: the policy of the mean weights.

A policy trained at a constant step size keeps moving between updates, and one
checkpoint's score moves with it. The mean of the weights of the last few
checkpoints (checkpoint averaging, in the spirit of stochastic weight averaging)
sits nearer the centre of where training wandered (on the balloon it made a fit's
result less dependent on its last update, without lifting the mean: docs/results.md,
round nine):

    averaged = average_checkpoints('runs/20261127T120000-balloon', last=5)
    # evaluate: --agent=run:RUN_DIR --checkpoint=<averaged.prefix> (or --average_last=5)
    # export:   --logdir=RUN_DIR --average_last=5

What is averaged is the algorithm's trainable variables (for PPO, the policy and
value networks). Everything else (the observation normaliser, the optimizer's
moments, the KL penalty, the step) is the newest checkpoint's. The result is
written beside the run's checkpoints, in `<RUN_DIR>/averaged/`, never into
`checkpoints/`, so a resumed run never restores it.
"""

from __future__ import annotations

import collections
import os
import uuid
from typing import TYPE_CHECKING, Any

from agents.configs import ConfigError
from agents.run import checkpoints as checkpoints_lib
from agents.training import builders

if TYPE_CHECKING:
  import tensorflow as tf

AVERAGED_DIR = 'averaged'
_STEP_KEY = 'step/.ATTRIBUTES/VARIABLE_VALUE'

Averaged = collections.namedtuple('Averaged', 'prefix sources step')
Averaged.__doc__ = (
    'An averaged checkpoint: its path `prefix`, the checkpoint prefixes averaged '
    '(`sources`, oldest first) and the global step of the newest (None if unknown).')


def averaged_prefix(run_dir: str, newest: str, last: int) -> str:
  """Where the mean of the `last` checkpoints up to `newest` is written."""
  return os.path.join(run_dir, AVERAGED_DIR, f'avg{last}-{os.path.basename(newest)}')


def last_checkpoints(run_dir: str, last: int) -> list[str]:
  """The run's `last` newest checkpoints, oldest first.

  Raises:
    ConfigError: `last` is below 1, the run has fewer checkpoints, or one of them
      does not read (naming it and the reason).
  """
  if not isinstance(last, int) or isinstance(last, bool) or last < 1:
    raise ConfigError(f'average_last must be a whole number of checkpoints >= 1, got {last!r}.')
  directory = os.path.join(run_dir, 'checkpoints')
  found = checkpoints_lib.candidates(directory) if os.path.isdir(directory) else []
  if len(found) < last:
    names = ', '.join(os.path.basename(path) for path in found) or 'none'
    raise ConfigError(f'Run {run_dir} keeps {len(found)} checkpoint(s) ({names}); averaging '
                      f'the last {last} needs {last}.')
  chosen = found[:last]
  for path in chosen:
    reason = checkpoints_lib.find_damage(path)
    if reason is not None:
      raise ConfigError(f'Checkpoint {path} does not read ({reason}); average fewer '
                        'checkpoints or repair the run.')
  return list(reversed(chosen))


def average_checkpoints(run_dir: str, last: int) -> Averaged:
  """Writes the checkpoint whose trainable weights are the mean of the last `last`.

  Args:
    run_dir: a run directory (`config.yaml`, `checkpoints/`).
    last: how many of the newest checkpoints to average (1 copies the newest).

  Returns:
    `Averaged`: the path prefix of the written checkpoint,
    `<run_dir>/averaged/avg<last>-ckpt-<N>` where `ckpt-<N>` is the newest averaged (it
    restores like any checkpoint of the run: `builders.restore_algorithm(run_dir,
    prefix)`), the checkpoints averaged and the newest one's global step.

  Raises:
    ConfigError: as `last_checkpoints`, or the run's config does not build.
  """
  return average_and_restore(run_dir, last)[0]


def average_and_restore(run_dir: str, last: int) -> tuple[Averaged, tuple[Any, ...]]:
  """As `average_checkpoints`, and the algorithm that holds the averaged checkpoint.

  For a caller that goes on to use the averaged policy (export): the algorithm built to
  average is the one returned, so the run's config is built once.

  Returns:
    (`Averaged`, restored): restored is what `builders.restore_algorithm(run_dir,
    averaged.prefix, is_training=False)` would return (config, algorithm, observation
    space, action space), without building or reading anything again.
  """
  import tensorflow as tf

  paths = last_checkpoints(run_dir, last)
  restored = builders.restore_algorithm(run_dir, paths[0], is_training=False)
  algorithm = restored[1]
  restorer = tf.train.Checkpoint(algorithm=algorithm)
  sums: list[Any] = []
  for index, path in enumerate(paths):
    if index:  # the first is restored
      restorer.restore(path).expect_partial()
    values = [variable.numpy().astype('float64') for variable in algorithm.trainable_variables]
    sums = values if not sums else [total + value for total, value in zip(sums, values)]
  # `algorithm` now holds the newest checkpoint: keep all of it but the weights.
  for variable, total in zip(algorithm.trainable_variables, sums):
    variable.assign((total / len(paths)).astype(variable.dtype.as_numpy_dtype))
  objects = {'algorithm': algorithm}
  reader = tf.train.load_checkpoint(paths[-1])
  step = int(reader.get_tensor(_STEP_KEY)) if reader.has_tensor(_STEP_KEY) else None
  if step is not None:  # the training loop's global step, kept for the record
    objects['step'] = tf.Variable(step, dtype=tf.int64)
  prefix = averaged_prefix(run_dir, paths[-1], last)
  _write_atomically(tf.train.Checkpoint(**objects), prefix)
  return Averaged(prefix, paths, step), restored


def _write_atomically(checkpoint: tf.train.Checkpoint, prefix: str) -> None:
  """Writes `checkpoint` to `prefix` so that a reader never sees a part-written file.

  Shards of one evaluation (`--num_shards`, run as separate commands) each average the
  same checkpoints into the same prefix at once. Each writes under a name of its own and
  then renames its files into place, data before index; the averages are the same bytes,
  so whichever rename lands last, the pair reads.
  """
  import tensorflow as tf

  tf.io.gfile.makedirs(os.path.dirname(prefix))
  private = checkpoint.write(f'{prefix}.tmp{uuid.uuid4().hex}')
  names = sorted(tf.io.gfile.glob(private + '.*'), key=lambda name: name.endswith('.index'))
  for name in names:
    os.replace(name, prefix + name[len(private):])


def describe(averaged: Averaged) -> str:
  """One line naming what an `Averaged` checkpoint is the mean of."""
  names = [os.path.basename(path) for path in averaged.sources]
  span = names[0] if len(names) == 1 else f'{names[0]} ... {names[-1]}'
  return (f'the mean weights of the last {len(names)} checkpoint(s) ({span}), '
          f'written to {averaged.prefix}')
