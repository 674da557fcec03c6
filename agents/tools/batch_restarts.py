"""How a `BatchEnv` replaces its dead workers and reports the episodes they took along.

A worker that dies during `step` is restarted (up to the batch's budget); its
environments report the interrupted episode as truncated, with reward 0, their last
observation and `infos['worker_restarted']`. A worker that dies during `reset` is
restarted and its whole fresh slab is reset; the slab's environments the caller did not
ask to reset lost their episodes with the worker, and their next step reports them as
truncated.

What dies is a unit: a member of the batch, or one worker of a `WorkerPool`. Each has
`index` (the batch index of its first environment), `num_envs`, `observation_space`,
`restart()` and `reset_batch`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np

from agents.tools import slab as slab_lib
from agents.tools.errors import WorkerDiedError

# The info key of the environments whose episode a worker's restart cut short.
INFO_KEY = 'worker_restarted'


class WorkerRestarts:
  """The restart budget of a batch and the episodes its restarts interrupted.

  Attributes:
    max_restarts: How many dead workers the batch replaces in total.
    count: How many it has replaced so far.
  """

  def __init__(self, max_restarts: int) -> None:
    self.max_restarts = max_restarts
    self.count = 0
    # Batch indices whose episode a restart cut short; the end of the next step reports
    # them as truncated.
    self._lost: set[int] = set()
    # The batch's last observations, kept when restarts are allowed: a dead worker's
    # environments report theirs again.
    self._last_observ: np.ndarray | None = None

  def restart(self, unit: Any, error: WorkerDiedError) -> None:
    """Restarts `unit`, or raises `error` once the budget is spent."""
    if self.count >= self.max_restarts:
      raise error
    self.count += 1
    unit.restart()

  def interrupted_step(self, unit: Any, error: WorkerDiedError) -> slab_lib.StepResult:
    """Restarts a unit that died during a step; returns its step result: the episodes
    end truncated, with reward 0 and their last observation (zeros if none is known).
    The end of the step adds `infos['worker_restarted']`."""
    self.restart(unit, error)
    start, size = unit.index, unit.num_envs
    self._lost.update(range(start, start + size))
    observ: Any
    if self._last_observ is not None:
      observ = self._last_observ[start:start + size]
    else:
      observ = gymnasium.vector.utils.create_empty_array(unit.observation_space, size, np.zeros)
    return observ, np.zeros(size), np.zeros(size, bool), np.ones(size, bool), {}

  def reset_restarted(
      self, unit: Any, error: WorkerDiedError, local: Sequence[int],
      seeds: Sequence[int | None] | None,
      reset_unit: Callable[..., tuple[Any, dict[str, Any]]] | None = None,
  ) -> slab_lib.ResetResult:
    """Restarts a unit that died during a reset and resets all its environments.

    A fresh slab has never been reset, and the episodes of its other environments ended
    with the dead worker: they are reset here too (unseeded), and their next step
    reports the lost episode as truncated with `infos['worker_restarted']`.

    Args:
      unit: The dead unit.
      error: Its `WorkerDiedError`, raised if the budget is spent.
      local: The unit's environments the caller asked to reset.
      seeds: Their seeds, or None.
      reset_unit: Function (unit, all local indices, all seeds) -> (observ or None,
        infos) that resets the unit and returns its results in slab order; default:
        its `reset_batch`.

    Returns:
      (observ or None, infos) of the requested environments, in the order of `local`.
    """
    self.restart(unit, error)
    size = unit.num_envs
    all_seeds: list[int | None] = [None] * size
    for index, seed in zip(local, seeds or [None] * len(local)):
      all_seeds[index] = seed
    reset_unit = reset_unit or (lambda member, *args: member.reset_batch(*args))
    observ, infos = reset_unit(unit, list(range(size)), all_seeds)
    others = np.setdiff1d(np.arange(size), local)
    self._lost.update((unit.index + others).tolist())
    if observ is not None:
      observ = slab_lib.select(observ, np.asarray(local))
    if infos:
      infos = slab_lib.select(infos, np.asarray(local))
    return observ, infos

  def end_step(self, observ: Any, truncated: np.ndarray, infos: dict[str, Any]) -> dict[str, Any]:
    """Marks the lost episodes truncated (in place), remembers the observations, and
    returns the infos with `worker_restarted` where an episode was lost."""
    if self.max_restarts and isinstance(observ, np.ndarray):
      self._last_observ = observ
    if not self._lost:
      return infos
    lost = np.zeros(len(truncated), bool)
    lost[list(self._lost)] = True
    self._lost = set()
    truncated |= lost
    infos = dict(infos)
    restarted = infos.get(INFO_KEY, np.zeros(len(lost), bool)) | lost
    infos[INFO_KEY], infos['_' + INFO_KEY] = restarted, restarted.copy()
    return infos

  def begin_reset(self, indices: np.ndarray) -> None:
    """The environments at `indices` are being reset: their lost episodes are moot."""
    if self._lost:
      self._lost.difference_update(indices.tolist())

  def end_reset(self, indices: Sequence[int] | np.ndarray, observ: Any, size: int) -> None:
    """Remembers the observations of the environments reset (of a batch of `size`)."""
    if not self.max_restarts or not isinstance(observ, np.ndarray):
      return
    if self._last_observ is None:
      self._last_observ = np.zeros((size, *observ.shape[1:]), observ.dtype)
    else:
      self._last_observ = self._last_observ.copy()  # The old array is the caller's now.
    self._last_observ[indices] = observ
