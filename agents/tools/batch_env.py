"""Combines several environments, in this process or in worker processes, into one batch.

CONTRACT (other modules rely on it; keep it when extending):

  batch = BatchEnv(envs)            # envs: gymnasium.Env objects, or slabs
  len(batch) -> B; batch.observation_space, batch.action_space (of ONE environment)
  obs, infos = batch.reset(indices=None, seeds=None)    # obs [len(indices), ...]
  obs, reward, terminated, truncated, infos = batch.step(actions)   # actions [B, ...]
  batch.step_async(actions); ...; batch.step_wait()     # the same calls in two halves:
  batch.reset_async(indices, seeds); ...; batch.reset_wait()  # the caller works meanwhile
  batch.close()

Rewards are float32 [B], the flags bool [B], infos in Gymnasium's vector format (key ->
array, '_key' mask). No automatic reset: the caller resets the finished ones. Members
implement `batch_member.BatchMember`: plain environments in this process, slabs
(`VectorEnv`s without autoreset), `ExternalProcess` workers, Ray actors, and runs of
workers with array spaces (one `worker_pool.WorkerPool`, one shared-memory block).

One path, for steps and resets alike: check the actions (or indices), send every member
its part before waiting for any, gather the replies, replace the members that died
(`batch_restarts.py`), and check for NaN and infinity (`NonFiniteError`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np

from agents.tools import batch_checks, batch_index, batch_member, batch_restarts, errors, wrappers
from agents.tools import placement as placement_lib

RAY = batch_member.RAY  # `processes` value: the slabs step in Ray actors (`ray_member`).

StepResult = tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]
ResetResult = tuple[Any, dict[str, Any]]


class BatchEnv:
  """Steps a list of environments, slabs or worker processes as one batch.

  Attributes:
    observation_space: Observation space of one environment.
    action_space: Action space of one environment.
  """

  placement: placement_lib.Placement | None = None  # Where it steps (None: built by hand).

  def __init__(self, envs: Sequence[Any], max_restarts: int = 0,
               check_finite: bool = True) -> None:
    """Builds the batch from environments, slabs or `ExternalProcess` workers.

    Args:
      envs: `gymnasium.Env`s, autoreset-disabled `VectorEnv`s or `BatchMember`s (such as
        `ExternalProcess` workers), whose spaces agree.
      max_restarts: How many dead workers the batch replaces in all before `WorkerDiedError`.
      check_finite: Whether `step` and `reset` raise `NonFiniteError` when a float
        observation or a reward is NaN or infinite (under 1 % of a batch step).

    Raises:
      ValueError: `envs` is empty.
      SpaceMismatchError: Two environments have different spaces; names the first odd one.
    """
    if not envs:
      raise ValueError('BatchEnv needs at least one environment.')
    self._restarts = batch_restarts.WorkerRestarts(max_restarts)
    self._members: list[Any] = batch_member.as_members(envs, self._restarts)
    self._sizes = [member.num_envs for member in self._members]
    self._starts = [member.index for member in self._members]
    self._size = int(sum(self._sizes))
    self._member_of: list[int] = np.repeat(np.arange(len(self._members)), self._sizes).tolist()
    self.observation_space = self._members[0].observation_space
    self.action_space = self._members[0].action_space
    for member in self._members:
      for kind in ('observation', 'action'):
        batch_checks.check_same_space(kind, member.index, getattr(member, f'{kind}_space'),
                                      getattr(self, f'{kind}_space'))
    self._check_actions = batch_checks.ActionCheck(self.action_space, self._size)
    self._check_finite = check_finite
    self._closed = False
    self._in_flight: tuple[str, Any, list[Callable[[], Any]]] | None = None  # Sent, unread.

  @classmethod
  def from_constructors(cls, constructor: Callable[[], Any] | Sequence[Callable[[], Any]],
                        num_envs: int, processes: bool | str = True, envs_per_process: int = 1,
                        max_restarts: int = 0, check_finite: bool = True,
                        **process_kwargs: Any) -> BatchEnv:
    """Builds a batch of `num_envs` environments from `constructor` (a callable returning
    a `gymnasium.Env`, or a sequence of `num_envs` of them), `envs_per_process` to a slab
    (the last may be smaller); the other arguments as for `from_slab_constructors`."""
    return cls.from_slab_constructors(
        batch_member.slab_constructors(constructor, num_envs, envs_per_process),
        processes=processes, max_restarts=max_restarts, check_finite=check_finite,
        **process_kwargs)

  @classmethod
  def from_slab_constructors(cls, slab_constructors: Sequence[Callable[[], Any]],
                             processes: bool | str = True, max_restarts: int = 0,
                             check_finite: bool = True, **process_kwargs: Any) -> BatchEnv:
    """Builds a batch from constructors of whole slabs (each returning a `gymnasium.Env`
    or an autoreset-disabled `VectorEnv`, e.g. `lambda: gymnasium.make_vec(
    'BalloonLearningEnvironment-v0', num_envs=16)`), one worker process per slab.

    `processes`: whether every slab runs in its own worker process, or 'ray': in its own
    Ray actor, spread over the nodes of a cluster (`ray_member`). `process_kwargs` go to
    `ExternalProcess` (context, timeout, start_timeout, ...), or with 'ray' to
    `ray_member.start_batch_members` (address, num_cpus, timeout, start_timeout).
    `max_restarts` and `check_finite` are as for the constructor.
    """
    members = batch_member.start_members(slab_constructors, processes, **process_kwargs)
    try:
      return cls(members, max_restarts=max_restarts, check_finite=check_finite)
    except BaseException:
      batch_member.close_all(members)
      raise

  def __len__(self) -> int:
    return self._size

  @property
  def workers(self) -> list[wrappers.ExternalProcess]:
    """The `ExternalProcess` workers of the batch (in pools or alone), in batch order."""
    return [worker for member in self._members for worker in getattr(member, 'workers', [member])
            if isinstance(worker, wrappers.ExternalProcess)]

  @property
  def members(self) -> list[Any]:
    """Every member of the batch (`BatchMember`s), in batch order."""
    return list(self._members)

  @property
  def num_restarts(self) -> int:
    """How many dead workers this batch has replaced so far (of `max_restarts`)."""
    return self._restarts.count

  max_restarts = property(lambda self: self._restarts.max_restarts,
                          doc='How many dead workers the batch replaces in all.')

  def step(self, actions: Any) -> StepResult:
    """Steps every environment of the batch with `actions` [B, *action_shape] (or B
    actions, for spaces that are not single arrays).

    Returns:
      (observ[B, ...], reward float32[B], terminated bool[B], truncated bool[B], infos).

    Raises:
      ActionError: An action has the wrong shape or dtype, or is out of bounds.
      WorkerError: An environment raised in its worker (with its traceback).
      WorkerDiedError: A worker died and no restarts are left.
    """
    self.step_async(actions)
    return self.step_wait()

  def step_async(self, actions: Any) -> None:
    """Sends a step and returns without waiting (in-process members step here, at once);
    `step_wait` collects it. Raises as `step` does, before anything is sent."""
    self._check_idle('step_async')
    actions = self._check_actions(actions)
    if len(self._members) == 1:  # The common case: one pool, group or slab takes all.
      self._in_flight = ('step', None, [self._members[0].step_batch(actions, False, False)])
      return
    self._in_flight = ('step', None, [
        member.step_batch(actions[start:start + size], blocking=False, copy=False)
        for member, start, size in zip(self._members, self._starts, self._sizes)])

  def step_wait(self) -> StepResult:
    """The results of the step `step_async` sent, as `step` returns them (and its errors)."""
    _, promises = self._take_in_flight('step', 'step_wait')
    results, died = batch_member.gather(promises, self._members)
    for position, error in died:
      results[position] = self._restarts.interrupted_step(self._members[position], error)
    observ, reward, terminated, truncated, infos = batch_member.join_steps(results, self._sizes)
    infos = self._restarts.end_step(observ, truncated, infos)
    if self._check_finite:
      batch_checks.check_finite(observ, reward)
    return observ, reward, terminated, truncated, infos

  def reset(self, indices: Sequence[int] | np.ndarray | None = None,
            seeds: Sequence[int | None] | None = None) -> ResetResult:
    """Resets the environments at `indices` (None: all), with one seed (int or None) per
    index or `seeds` None, and returns (observ[len(indices), ...], infos in vector
    format), in the order of `indices`.

    Raises:
      IndexError: An index is outside the batch or repeated.
      ValueError: `seeds` has a different length than `indices`.
    """
    self.reset_async(indices, seeds)
    return self.reset_wait()

  def reset_async(self, indices: Sequence[int] | np.ndarray | None = None,
                  seeds: Sequence[int | None] | None = None) -> None:
    """Sends a reset and returns without waiting; `reset_wait` collects it. Raises as
    `reset` does, before anything is sent."""
    self._check_idle('reset_async')
    checked = batch_index.check_indices(indices, self._size)
    checked_seeds = batch_index.check_seeds(seeds, len(checked))
    self._restarts.begin_reset(checked)
    requests, counts, order = batch_index.split_by_member(
        checked, checked_seeds, self._member_of, self._starts)
    self._in_flight = ('reset', (checked, requests, counts, order), [
        self._members[position].reset_batch(local, member_seeds, blocking=False)
        for position, local, member_seeds in requests])

  def reset_wait(self) -> ResetResult:
    """The results of the reset `reset_async` sent, as `reset` returns them."""
    (indices, requests, counts, order), promises = self._take_in_flight('reset', 'reset_wait')
    if not len(indices):
      return gymnasium.vector.utils.create_empty_array(self.observation_space, 0), {}
    members = [self._members[position] for position, _, _ in requests]
    results, died = batch_member.gather(promises, members)
    for slot, error in died:
      _, local, member_seeds = requests[slot]
      results[slot] = self._restarts.reset_restarted(members[slot], error, local, member_seeds)
    observ, infos = batch_member.join_resets(results, counts, order)
    self._restarts.end_reset(indices, observ, self._size)
    if self._check_finite:
      batch_checks.check_finite(observ, None)
    return observ, infos

  def close(self) -> None:
    """Closes every environment and worker. Safe to call more than once."""
    if not self._closed:
      self._closed = True
      batch_member.close_all(self._members)

  def __enter__(self) -> BatchEnv:
    return self

  def __exit__(self, *exc_info: object) -> None:
    self.close()

  def _check_idle(self, caller: str) -> None:
    if self._closed:
      raise errors.ClosedError('BatchEnv is closed.')
    if self._in_flight is not None:
      raise RuntimeError(f'BatchEnv.{caller}: a {self._in_flight[0]} is already in flight; '
                         f'call {self._in_flight[0]}_wait first.')

  def _take_in_flight(self, kind: str, caller: str) -> tuple[Any, list[Callable[[], Any]]]:
    """The request and promises sent by `{kind}_async`, now taken off the batch."""
    if self._closed:
      raise errors.ClosedError('BatchEnv is closed.')
    if self._in_flight is None or self._in_flight[0] != kind:
      raise RuntimeError(f'BatchEnv.{caller}: no {kind} in flight; call {kind}_async first.')
    _, request, promises = self._in_flight
    self._in_flight = None
    return request, promises
