"""Drives training and evaluation phases by a global step that counts environment steps.

A `Loop` holds phases (typically 'train' then 'eval') that run in a cycle: each
phase lasts `steps` environment steps (summed over the batch), then the next
one starts. Which phase runs, and how far into it, is a pure function of the
global step, so a run resumed from a checkpoint continues in the phase and at
the position it was in, with the same log, report and checkpoint cadences.

Every call runs one `FusedStep` (up to `steps_per_call` batch steps in one
`tf.function` call; fewer when a phase end, log row, report or checkpoint is
due sooner); the global step grows by B per batch step inside the graph. At
the start of a phase the Loop sets its `is_training` variable to the phase's
flag (an algorithm reads it to choose between learning and evaluating) and
resets every environment, so no episode spans two phases.

Outputs in `logdir`:

- `<phase>/`: TensorBoard event files per phase, with the Loop's scalars
  (mean_score, mean_length, episodes, steps_per_second) and whatever the
  algorithm writes with `tf.summary` during calls that are due to log;
- `metrics.jsonl`: the same scalars, one JSON object per logged row (and the same
  rows to the experiment trackers a run attaches: `agents.run.run_metrics`);
- `checkpoints/`: `tf.train.CheckpointManager` files named `ckpt-<step>`.

Checkpoints are atomic: TensorFlow writes a checkpoint's data and index files
first and only then rewrites the `checkpoints/checkpoint` state file, which is
written to a temporary file and renamed over the old one. A process killed
mid-save therefore leaves the state file naming the previous, complete
checkpoint, and `restore` never sees the partial one; the `ckpt-<N>_temp/`
folder such a kill leaves is removed when the next Loop builds its checkpoint.
A checkpoint damaged later (a truncated or corrupted file) is skipped with a
warning, and the newest one that reads is restored (`agents.run.checkpoints`).
`restore` brings back the
global step and every variable of the algorithms (optimiser slots included,
provided the optimiser is built in the algorithm's constructor), and trims
`metrics.jsonl` to the restored step; TensorBoard may show the steps between
the checkpoint and the kill twice.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import tensorflow as tf

from agents.run import checkpoints as checkpoints_lib
from agents.run import run_metrics
from agents.tools import episode_collectors
from agents.tools import simulate as simulate_lib

_LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class Phase:
  """One phase of the loop and its bookkeeping; built by `Loop.add_phase`.

  Attributes:
    name: phase name, also the TensorBoard subfolder.
    fused_step: the `FusedStep` this phase runs.
    steps: environment steps (summed over the batch) per run of the phase.
    is_training: value given to the loop's `is_training` variable.
    steps_per_call: batch steps per `tf.function` call, at most.
    log_every: environment steps of this phase between logged rows.
    report_every: environment steps of this phase between reports.
    checkpoint_every: environment steps of this phase between checkpoints,
      or None.
    writer: the phase's TensorBoard writer.
    log_mark, report_mark: episode totals, step and time at the last row and
      report, to compute means over the interval since.
  """
  name: str
  fused_step: simulate_lib.FusedStep
  steps: int
  is_training: bool
  steps_per_call: int
  log_every: int
  report_every: int
  checkpoint_every: int | None
  writer: Any
  log_mark: dict = dataclasses.field(default_factory=dict)
  report_mark: dict = dataclasses.field(default_factory=dict)

  @property
  def batch_size(self) -> int:
    """Number of environments of the phase's batch."""
    return len(self.fused_step.batch_env)


class Loop:
  """Runs phases in a cycle by the global step; logs, reports and checkpoints.

  Typical use:

      loop = Loop(logdir)
      algorithm = builders.build_algorithm(config, batch_env.observation_space,
                                           batch_env.action_space, is_training=loop.is_training)
      loop.add_phase('train', batch_env, algorithm, steps=20_000, is_training=True,
                     log_every=5_000, checkpoint_every=20_000)
      loop.add_phase('eval', batch_env, algorithm, steps=5_000, is_training=False)
      loop.run(max_step=1_000_000, on_report=print)
  """

  def __init__(self, logdir: str, step: tf.Variable | None = None,
               is_training: tf.Variable | None = None,
               checkpoint_objects: Mapping[str, Any] | None = None,
               max_checkpoints: int = 5) -> None:
    """Creates the loop's variables; writes nothing yet.

    Args:
      logdir: the run directory.
      step: optional int64 Variable to use as the global step; None creates
        one named 'global_step'.
      is_training: optional bool Variable the loop sets per phase; None
        creates one. Pass it to the algorithm so it can tell train from eval.
      checkpoint_objects: optional dict of further trackables to checkpoint
        (the phases' algorithms and the step are always included).
      max_checkpoints: how many recent checkpoints to keep.
    """
    self.logdir = logdir
    self.step = step if step is not None else tf.Variable(
        0, dtype=tf.int64, trainable=False, name='global_step')
    if self.step.dtype != tf.int64:
      raise TypeError(f'The global step must be an int64 Variable, got {self.step.dtype.name}.')
    self.is_training = is_training if is_training is not None else tf.Variable(
        False, trainable=False, name='is_training')
    self._should_log = tf.Variable(False, trainable=False, name='should_log')
    self._checkpoint_objects = dict(checkpoint_objects or {})
    self._max_checkpoints = max_checkpoints
    self._phases: list[Phase] = []
    self._checkpoint = None
    self._manager: Any = None
    self._last_saved_step: int | None = None
    # (phase, step, phase step) run since the last logged row.
    self._unlogged: tuple[Phase, int, int] | None = None
    # metrics.jsonl, TensorBoard and the trackers a run attaches (`RunMetrics.attach`).
    self.metrics = run_metrics.RunMetrics(logdir)

  @property
  def checkpoint_dir(self) -> str:
    """Folder of the checkpoints."""
    return os.path.join(self.logdir, 'checkpoints')

  def add_phase(self, name: str, batch_env: Any, algorithm: Any, steps: int, is_training: bool,
                steps_per_call: int = 1, log_every: int | None = None,
                report_every: int | None = None, checkpoint_every: int | None = None) -> None:
    """Adds a phase to the cycle, after the ones added before.

    Args:
      name: unique phase name, e.g. 'train' or 'eval'.
      batch_env: the `InGraphBatchEnv` the phase steps.
      algorithm: the `InGraphAlgorithm` it runs; phases may share one.
      steps: environment steps, summed over the batch, per run of the phase;
        at least the batch size. A multiple of B * steps_per_call keeps the
        phase boundaries exact; otherwise the last call of a phase still runs
        whole batch steps and the next phase starts up to B - 1 steps late.
      is_training: bool given to the loop's `is_training` variable during the
        phase.
      steps_per_call: batch steps per `tf.function` call, at most.
      log_every: environment steps between logged rows (TensorBoard, JSONL,
        and the algorithm's summaries); None logs once per run of the phase.
      report_every: environment steps between calls of `on_report`; None
        reports once per run of the phase.
      checkpoint_every: environment steps between checkpoints; None never
        checkpoints during this phase.

    Raises:
      ValueError: the name is taken, or a count is not positive, or `steps`
        is smaller than the batch.
      RuntimeError: called after `restore` or `run` started.
    """
    if self._checkpoint is not None:
      raise RuntimeError(f'Cannot add phase {name!r} after the loop has been restored or run.')
    if any(phase.name == name for phase in self._phases):
      raise ValueError(f'Phase name {name!r} is already used.')
    counts = dict(steps=steps, steps_per_call=steps_per_call, log_every=log_every,
                  report_every=report_every, checkpoint_every=checkpoint_every)
    for key, value in counts.items():
      if value is not None and (int(value) != value or value <= 0):
        raise ValueError(f'Phase {name!r}: {key} must be a positive integer, got {value!r}.')
    if steps < len(batch_env):
      raise ValueError(f'Phase {name!r}: steps={steps} is smaller than the batch of '
                       f'{len(batch_env)} environments.')
    writer = self.metrics.tensorboard.writer(name)
    fused_step = simulate_lib.FusedStep(batch_env, algorithm, global_step=self.step,
                                        summary_writer=writer, should_log=self._should_log)
    self._phases.append(Phase(
        name=name, fused_step=fused_step, steps=int(steps), is_training=bool(is_training),
        steps_per_call=int(steps_per_call), log_every=int(log_every or steps),
        report_every=int(report_every or steps),
        checkpoint_every=int(checkpoint_every) if checkpoint_every else None, writer=writer))

  def restore(self) -> int | None:
    """Restores the newest checkpoint that reads, if any. `run` calls this when needed.

    A damaged checkpoint (truncated, corrupted, missing a file) is skipped with
    a warning naming it and the reason, and the next older one is restored
    (see `agents.run.checkpoints`).

    Returns:
      The restored global step, or None when there is no checkpoint.

    Raises:
      ValueError: no phases were added.
      CheckpointError: checkpoints exist but none of them restores.
      AssertionError: the checkpoint lacks values for existing variables
        (from `assert_existing_objects_matched`, naming them).
    """
    self._build_checkpoint()
    path = checkpoints_lib.restore_newest(
        self._checkpoint, self.checkpoint_dir,
        expect=lambda status: status.assert_existing_objects_matched())
    if path is None:
      self._last_saved_step = None
      return None
    step = int(self.step.numpy())
    self._last_saved_step = step
    self.metrics.truncate_after(step)
    _LOG.info('Restored %s at global step %d.', path, step)
    return step

  def save_checkpoint(self) -> str:
    """Saves a checkpoint named after the current global step.

    Returns:
      The checkpoint path prefix.
    """
    manager = self._build_checkpoint()
    step = int(self.step.numpy())
    previous = manager.latest_checkpoint
    try:
      path = manager.save(checkpoint_number=step)
    except (tf.errors.OpError, OSError) as error:
      # The save writes into a temporary folder first: what failed is removed, and the
      # checkpoints before it stay as they were.
      checkpoints_lib.remove_leftovers(self.checkpoint_dir)
      reason = _os_reason(getattr(error, 'message', None) or str(error))
      kept = (f'the previous checkpoint {os.path.basename(previous)} is intact and a resume '
              'starts from it') if previous else 'no earlier checkpoint exists'
      raise checkpoints_lib.CheckpointSaveError(
          f'Saving checkpoint ckpt-{step} into {self.checkpoint_dir} failed '
          f'({reason}); {kept}.') from None
    self._last_saved_step = step
    return path

  def run(self, max_step: int,
          on_report: Callable[[dict[str, Any]], Any] | None = None) -> int:
    """Runs phases until the global step reaches `max_step`.

    Restores the latest checkpoint first (once per Loop object). Ends with a
    checkpoint when the step moved since the last one.

    Args:
      max_step: global step to stop at (the last call may pass it by less
        than one batch step).
      on_report: optional callable taking a row dict (as in metrics.jsonl) at
        every report; None logs the row with `logging`.

    Returns:
      The final global step.
    """
    if self._checkpoint is None:
      self.restore()
    step = int(self.step.numpy())
    current = None
    self._unlogged = None
    while step < max_step:
      phase, phase_step, left_in_phase = self._find_phase(step)
      force_reset = phase is not current
      if force_reset:
        current = phase
        self._begin_phase(phase, step)
      # A call ends at the first due phase end, row, report or checkpoint, so
      # they land on their step (rounded up to whole batch steps).
      due = [left_in_phase, max_step - step, _until_next(phase_step, phase.log_every),
             _until_next(phase_step, phase.report_every)]
      if phase.checkpoint_every:
        due.append(_until_next(phase_step, phase.checkpoint_every))
      batch_steps = min(phase.steps_per_call, math.ceil(min(due) / phase.batch_size))
      moved = batch_steps * phase.batch_size
      log_due = _crosses(phase_step, moved, phase.log_every)
      self._should_log.assign(log_due)
      phase.fused_step(force_reset, batch_steps)
      step = int(self.step.numpy())
      # The steps since the phase's last row, logged by `log_pending` if the run ends.
      self._unlogged = None if log_due else (phase, step, phase_step + moved)
      if log_due:
        self._log(phase, step, phase_step + moved)
      if _crosses(phase_step, moved, phase.report_every):
        row = self._row(phase, step, phase_step + moved, phase.report_mark)
        phase.report_mark = self._mark(phase, step)
        (on_report or _log_report)(row)
      if phase.checkpoint_every and _crosses(phase_step, moved, phase.checkpoint_every):
        self.save_checkpoint()
    self.log_pending()
    if self._last_saved_step != step:
      self.save_checkpoint()
    for phase in self._phases:
      phase.writer.flush()
    return step

  def log_pending(self) -> None:
    """Logs the row of the steps run since the last row, if any (the end of a run).

    Every run, finished or stopped, thus ends on a logged row, so that its last score
    is one that metrics.jsonl (and everything reading it) holds.
    """
    if self._unlogged is not None:
      phase, step, phase_step = self._unlogged
      self._unlogged = None
      self._log(phase, step, phase_step)

  def _build_checkpoint(self) -> tf.train.CheckpointManager:
    if not self._phases:
      raise ValueError('Add at least one phase before restoring or running the loop.')
    if self._manager is None:
      # Before the manager reads the state file: leftovers of a killed save go,
      # and an unreadable state file is rebuilt rather than read as "none".
      checkpoints_lib.remove_leftovers(self.checkpoint_dir)
      checkpoints_lib.repair_state(self.checkpoint_dir)
      objects = dict(self._checkpoint_objects)
      objects['step'] = self.step
      objects.update(self._algorithms())
      self._checkpoint = tf.train.Checkpoint(**objects)
      self._manager = tf.train.CheckpointManager(
          self._checkpoint, self.checkpoint_dir, max_to_keep=self._max_checkpoints,
          checkpoint_name='ckpt')
    return self._manager

  def _algorithms(self) -> dict[str, Any]:
    """Names the distinct algorithms of the phases for the checkpoint."""
    distinct: list[Phase] = []
    for phase in self._phases:
      if all(phase.fused_step.algorithm is not other.fused_step.algorithm for other in distinct):
        distinct.append(phase)
    if len(distinct) == 1:
      return {'algorithm': distinct[0].fused_step.algorithm}
    return {f'algorithm_{phase.name}': phase.fused_step.algorithm for phase in distinct}

  def _find_phase(self, step: int) -> tuple[Phase, int, int]:
    """Returns (phase, steps into all runs of the phase, steps left in this run)."""
    cycle = sum(phase.steps for phase in self._phases)
    cycles, position = divmod(step, cycle)
    for phase in self._phases:
      if position < phase.steps:
        return phase, cycles * phase.steps + position, phase.steps - position
      position -= phase.steps
    raise AssertionError('unreachable: position is within the cycle')

  def _begin_phase(self, phase: Phase, step: int) -> None:
    self.is_training.assign(phase.is_training)
    phase.log_mark = self._mark(phase, step)
    phase.report_mark = self._mark(phase, step)

  def _mark(self, phase: Phase, step: int) -> dict[str, Any]:
    episodes, score_sum, length_sum = phase.fused_step.episodes.totals()
    return dict(step=step, time=time.time(), episodes=episodes, score_sum=score_sum,
                length_sum=length_sum, collected=_collected(phase))

  def _row(self, phase: Phase, step: int, phase_step: int,
           mark: Mapping[str, Any]) -> dict[str, Any]:
    episodes, score_sum, length_sum = phase.fused_step.episodes.totals()
    finished = episodes - mark['episodes']
    elapsed = time.time() - mark['time']
    return dict(
        step=step, phase=phase.name, phase_step=phase_step, episodes=finished,
        mean_score=(score_sum - mark['score_sum']) / finished if finished else None,
        mean_length=(length_sum - mark['length_sum']) / finished if finished else None,
        steps_per_second=(step - mark['step']) / elapsed if elapsed > 0 else None,
        wall_time=time.time(),
        # Per-episode statistics of the environment's collectors (the balloon's twr50).
        **episode_collectors.means(_collected(phase), mark.get('collected', {})))

  def _log(self, phase: Phase, step: int, phase_step: int) -> None:
    row = self._row(phase, step, phase_step, phase.log_mark)
    phase.log_mark = self._mark(phase, step)
    self.metrics.write(row)  # metrics.jsonl, the phase's TensorBoard scalars, trackers


def _os_reason(message: str) -> str:
  """The operating system's reason in a TensorFlow I/O error ('File too large', 'No space
  left on device'), without TensorFlow's op names and temporary paths."""
  message = re.sub(r'\{\{.*?\}\}|\[Op:\w+\]', '', message.strip().splitlines()[-1])
  return message.rsplit(';', 1)[-1].strip() or message.strip()


def _collected(phase: Phase) -> dict[str, tuple[int, float]]:
  """The merged totals of the phase environment's episode collectors."""
  totals = {}
  for collector in phase.fused_step.batch_env.collectors:
    totals.update(collector.totals())
  return totals


def _until_next(start: int, every: int) -> int:
  """Steps from `start` to the next multiple of `every` after it."""
  return every - start % every


def _crosses(start: int, moved: int, every: int) -> bool:
  """Whether the interval (start, start + moved] passes a multiple of `every`."""
  return (start + moved) // every > start // every


def _log_report(row: Mapping[str, Any]) -> None:
  _LOG.info('%s step %d: mean score %s over %d episodes.', row['phase'], row['step'],
            row['mean_score'], row['episodes'])
