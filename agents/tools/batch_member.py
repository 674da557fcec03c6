"""What BatchEnv needs from each of its members, and the in-process members.

A member hosts K environments: a plain `gymnasium.Env` (K = 1) or a slab (an
autoreset-disabled `gymnasium.vector.VectorEnv`), either in this process
(`InProcessSlab`) or in a worker process (`ExternalProcess`); a run of plain
environments stepped in one loop in this process (`InProcessGroup`); or a run of
workers stepped through one shared-memory block (`worker_pool.WorkerPool`). All
implement the `BatchMember` protocol, so BatchEnv treats them alike.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import gymnasium
import numpy as np

from agents.tools import batch_checks, batch_restarts, errors, worker_pool, wrappers
from agents.tools import slab as slab_lib


@runtime_checkable
class BatchMember(Protocol):
  """The interface of one member of a BatchEnv.

  Attributes:
    index: Batch index of the member's first environment, named in errors.
    num_envs: Number of environments K the member hosts.
    is_vector: Whether the hosted environment is a `VectorEnv` slab.
    observation_space: Observation space of one environment.
    action_space: Action space of one environment.
  """

  index: int
  num_envs: int
  is_vector: bool
  observation_space: Any
  action_space: Any

  def step_batch(self, actions: Any, blocking: bool = True,
                 copy: bool = True) -> slab_lib.StepResult | Callable[[], slab_lib.StepResult]:
    """Steps the K environments: returns numpy arrays (observ[K], reward[K],
    terminated[K], truncated[K]) and infos in vector format, or a callable that waits
    for them."""

  def reset_batch(
      self, indices: Sequence[int] | np.ndarray | None = None,
      seeds: Sequence[int | None] | None = None, blocking: bool = True,
  ) -> slab_lib.ResetResult | Callable[[], slab_lib.ResetResult]:
    """Resets some of the K environments: returns (observ, infos in vector format), or
    a callable that waits for it; an observation array that owns its data is the
    caller's."""

  def restart(self) -> None:
    """Replaces a dead member by a fresh one, or raises WorkerError if it cannot."""

  def close(self) -> None:
    """Closes the environments; safe to call more than once."""


class InProcessSlab:
  """A member stepped in this process, with the promise interface of `ExternalProcess`."""

  def __init__(self, env: gymnasium.Env | gymnasium.vector.VectorEnv, index: int = 0) -> None:
    self._slab = slab_lib.Slab(env)
    self.index = index
    self.num_envs = self._slab.num_envs
    self.is_vector = self._slab.is_vector
    self.observation_space = self._slab.observation_space
    self.action_space = self._slab.action_space

  def step_batch(self, actions: Any, blocking: bool = True,
                 copy: bool = True) -> slab_lib.StepResult | Callable[[], slab_lib.StepResult]:
    """Steps the slab: its results, or with `blocking=False` a callable returning them."""
    del copy  # Results are fresh arrays already.
    num_envs, is_vector = self.num_envs, self.is_vector

    def run() -> slab_lib.StepResult:
      observ, reward, terminated, truncated, info = self._slab.step(actions)
      return (observ, reward, terminated, truncated,
              slab_lib.vector_infos(info, num_envs, is_vector))

    return run() if blocking else run

  def reset_batch(
      self, indices: Sequence[int] | np.ndarray | None = None,
      seeds: Sequence[int | None] | None = None, blocking: bool = True,
  ) -> slab_lib.ResetResult | Callable[[], slab_lib.ResetResult]:
    run = lambda: self._slab.reset(indices, seeds)
    return run() if blocking else run

  def restart(self) -> None:
    raise errors.WorkerError('an in-process environment cannot be restarted.', self.index,
                             self.num_envs)

  def close(self) -> None:
    self._slab.close()


class SlabConstructor:
  """Picklable constructor of a `SyncVectorEnv` slab from per-environment constructors."""

  def __init__(self, constructors: Sequence[Callable[[], gymnasium.Env]]) -> None:
    self._constructors = list(constructors)

  def __call__(self) -> gymnasium.vector.VectorEnv:
    return slab_lib.make_sync_slab(self._constructors)


class InProcessGroup:
  """K plain environments of this process stepped in one tight loop, as one member.

  One member instead of K keeps the batch's per-step bookkeeping (a promise, a
  concatenation, an info merge per member) from growing with K: with cheap
  environments such as CartPole that bookkeeping, not the environments, was most of
  a step. Errors still name the one environment that raised.
  """

  is_vector = True  # Infos come out in vector format already.

  def __init__(self, envs: Sequence[gymnasium.Env], index: int = 0) -> None:
    """Groups the environments; checks that their spaces agree, naming the odd one.

    Args:
      envs: Plain `gymnasium.Env` objects.
      index: Batch index of the first environment.
    """
    self._envs = list(envs)
    self.index = index
    self.num_envs = len(self._envs)
    self.observation_space = self._envs[0].observation_space
    self.action_space = self._envs[0].action_space
    for offset, env in enumerate(self._envs[1:], 1):
      for kind in ('observation', 'action'):
        batch_checks.check_same_space(kind, index + offset, getattr(env, f'{kind}_space'),
                                      getattr(self, f'{kind}_space'))
    self._array_observ = slab_lib.is_array_space(self.observation_space)
    if self._array_observ:
      self._observ_dtype = self.observation_space.dtype
      self._observ_shape = tuple(self.observation_space.shape or ())
    # As a slab's: which episodes ended without a reset since (EpisodeEndedError).
    self._ended = np.zeros(self.num_envs, bool)
    self._tracks_ends = np.array([not getattr(env.unwrapped, 'steps_finished_episodes', False)
                                  for env in self._envs])

  def step_batch(self, actions: Any, blocking: bool = True,
                 copy: bool = True) -> slab_lib.StepResult | Callable[[], slab_lib.StepResult]:
    del copy  # Results are fresh arrays already.
    run = lambda: self._step(actions)
    return run() if blocking else run

  def _step(self, actions: Any) -> slab_lib.StepResult:
    count = self.num_envs
    observs, rewards = [None] * count, np.empty(count, np.float64)
    terminated, truncated = np.empty(count, bool), np.empty(count, bool)
    infos: list[Any] = [None] * count
    if self._ended.any():
      offset = int(np.flatnonzero(self._ended)[0])
      raise errors.name_environment(errors.EpisodeEndedError([0], 1), self.index + offset, 1)
    for offset, env in enumerate(self._envs):
      try:
        observs[offset], rewards[offset], terminated[offset], truncated[offset], infos[
            offset] = env.step(actions[offset])
      except Exception as error:
        raise errors.name_environment(error, self.index + offset, 1) from None
    self._ended |= (terminated | truncated) & self._tracks_ends
    return self._stack(observs), rewards, terminated, truncated, self._vector_infos(infos)

  @staticmethod
  def _vector_infos(infos: list[Any]) -> dict[str, Any]:
    """The environments' infos in vector format: {} when all are empty (cheap
    environments), column by column when all are alike (MuJoCo's), else one by one."""
    if not any(infos):
      return {}
    stacked = slab_lib.stack_flat_infos(infos)
    if stacked is not None:
      return stacked
    return slab_lib.concatenate_infos(
        [slab_lib.vector_infos(info, 1, False) for info in infos], [1] * len(infos))

  def reset_batch(
      self, indices: Sequence[int] | np.ndarray | None = None,
      seeds: Sequence[int | None] | None = None, blocking: bool = True,
  ) -> slab_lib.ResetResult | Callable[[], slab_lib.ResetResult]:
    run = lambda: self._reset(indices, seeds)
    return run() if blocking else run

  def _reset(self, indices: Sequence[int] | np.ndarray | None,
             seeds: Sequence[int | None] | None) -> slab_lib.ResetResult:
    indices = range(self.num_envs) if indices is None else [int(i) for i in indices]
    seeds = [None] * len(indices) if seeds is None else list(seeds)
    observs, infos = [], []
    for position, seed in zip(indices, seeds):
      try:
        observ, info = self._envs[position].reset(seed=None if seed is None else int(seed))
      except Exception as error:
        raise errors.name_environment(error, self.index + position, 1) from None
      self._ended[position] = False
      observs.append(observ)
      infos.append(slab_lib.vector_infos(info, 1, False))
    merged = slab_lib.concatenate_infos(infos, [1] * len(infos)) if any(infos) else {}
    return self._stack(observs), merged

  def _stack(self, observs: Sequence[Any]) -> Any:
    if self._array_observ:
      return np.asarray(observs, self._observ_dtype).reshape((len(observs), *self._observ_shape))
    return slab_lib.concatenate(
        [slab_lib.batch_single(self.observation_space, observ) for observ in observs])

  def restart(self) -> None:
    raise errors.WorkerError('an in-process environment cannot be restarted.', self.index,
                             self.num_envs)

  def close(self) -> None:
    """Closes every environment, then raises the first error any of them raised."""
    close_all(self._envs)


def as_member(env: Any) -> BatchMember:
  """Wraps a `gymnasium.Env` or slab; returns a member (e.g. an ExternalProcess) as it is."""
  if not isinstance(env, (gymnasium.Env, gymnasium.vector.VectorEnv)) and isinstance(
      env, BatchMember):
    return env
  return InProcessSlab(env)


def as_members(envs: Sequence[Any],
               restarts: batch_restarts.WorkerRestarts | None = None) -> list[BatchMember]:
  """The members of a batch of `envs`, in order: each run of consecutive plain
  environments becomes one `InProcessGroup`, each run of workers whose spaces hold plain
  arrays one `WorkerPool` (restarting its workers against the batch's `restarts`), and
  anything else goes through `as_member`."""
  members, start = [], 0
  for kind, group in itertools.groupby(envs, _kind):
    run: list[Any] = list(group)
    if kind == 'plain' and len(run) > 1:
      run = [InProcessGroup(run, start)]
    elif kind == 'workers':
      run = [worker_pool.WorkerPool(run, restarts, start)]
    for member in map(as_member, run):
      member.index = start
      start += member.num_envs
      members.append(member)
  return members


def _kind(env: Any) -> str:
  if isinstance(env, gymnasium.Env):
    return 'plain'
  if isinstance(env, wrappers.ExternalProcess) and env.supports_fast_step:
    return 'workers'
  return 'other'


# Building and driving the members of a batch (BatchEnv's helpers).

RAY = 'ray'  # `processes` value: the slabs step in Ray actors (`ray_member`).


def slab_constructors(
    constructor: Callable[[], gymnasium.Env] | Sequence[Callable[[], gymnasium.Env]],
    num_envs: int, envs_per_process: int,
) -> list[Callable[[], Any]]:
  """Groups `num_envs` environment constructors (one callable, or a sequence of them)
  into constructors of slabs of `envs_per_process` (the last may be smaller)."""
  if callable(constructor):
    constructors = [constructor] * num_envs
  else:
    constructors = list(constructor)
    if len(constructors) != num_envs:
      raise ValueError(f'Got {len(constructors)} constructors for {num_envs} environments.')
  if envs_per_process < 1:
    raise ValueError(f'envs_per_process must be at least 1, got {envs_per_process}.')
  groups = [constructors[start:start + envs_per_process]
            for start in range(0, num_envs, envs_per_process)]
  return [group[0] if envs_per_process == 1 else SlabConstructor(group) for group in groups]


def start_members(constructors: Sequence[Callable[[], Any]], processes: bool | str,
                  **kwargs: Any) -> list[Any]:
  """Builds one slab per constructor: in this process (`processes` false), in a worker
  process each (true; `kwargs` go to `ExternalProcess`) or in a Ray actor each (RAY;
  `kwargs` go to `ray_member.start_batch_members`). All start before any is awaited, so
  the constructors run in parallel; if one fails, the others are closed."""
  if not processes:
    return [make() for make in constructors]
  if processes == RAY:
    from agents.tools import ray_member
    return ray_member.start_batch_members(constructors, **kwargs)
  workers = []
  try:
    for make in constructors:
      workers.append(wrappers.ExternalProcess(make, wait=False, **kwargs))
    start = 0
    for worker in workers:  # Indices are known once the slab sizes are.
      worker.index = start
      worker.wait_ready()
      start += worker.num_envs
    return workers
  except BaseException:
    close_all(workers)
    raise


def close_all(members: Iterable[Any]) -> None:
  """Closes every member (or environment), then raises the first error any raised."""
  first_error = None
  for member in members:
    try:
      member.close()
    except Exception as error:  # noqa: BLE001 - close the rest, then report the first.
      first_error = first_error or error
  if first_error is not None:
    raise first_error


def gather(
    promises: Sequence[Callable[[], Any]], members: Sequence[BatchMember],
) -> tuple[list[Any], list[tuple[int, errors.WorkerDiedError]]]:
  """Resolves every member's promise before raising, so no worker is left with an
  unread reply.

  Returns:
    The results (None where the member died) and the `(position, WorkerDiedError)` of
    each dead member.

  Raises:
    Exception: The first other error, naming the environments of the member that
      raised it.
  """
  results, died, first_error = [], [], None
  for position, (promise, member) in enumerate(zip(promises, members)):
    try:
      results.append(promise())
    except errors.WorkerDiedError as error:
      results.append(None)
      died.append((position, error))
    except Exception as error:  # noqa: BLE001 - re-raised below once all replies are in.
      results.append(None)
      first_error = first_error or errors.name_environment(error, member.index,
                                                           member.num_envs)
  if first_error is not None:
    raise first_error
  return results, died


def join_steps(results: Sequence[slab_lib.StepResult],
               sizes: Sequence[int]) -> slab_lib.StepResult:
  """Joins the members' step results into the batch's: fresh arrays, float32 rewards."""
  if len(results) == 1:
    # One member: its arrays need no joining, only a copy, as a slab or a pool may
    # reuse them on its next step.
    # (`astype` and `copy` cost a third of `np.asarray(x, dtype)` and `np.array`.)
    observ, reward, terminated, truncated, infos = results[0]
    observ = observ.copy() if isinstance(observ, np.ndarray) else slab_lib.concatenate([observ])
    return (observ, reward.astype(np.float32), terminated.astype(bool), truncated.astype(bool),
            infos)
  return (slab_lib.concatenate([result[0] for result in results]),
          np.concatenate([result[1] for result in results], dtype=np.float32),
          np.concatenate([result[2] for result in results]),
          np.concatenate([result[3] for result in results]),
          slab_lib.concatenate_infos([result[4] for result in results], sizes))


def join_resets(results: Sequence[slab_lib.ResetResult], counts: Sequence[int],
                order: np.ndarray | None) -> slab_lib.ResetResult:
  """Joins the members' reset results (in member order, `counts` environments each) into
  the batch's, in the caller's order (`order`: the permutation to it, or None)."""
  if len(results) == 1:  # One member, in the caller's order already.
    observ, infos = results[0]
    if not isinstance(observ, np.ndarray):
      observ = slab_lib.concatenate([observ])
    elif observ.base is not None:  # A view (of a plain environment's array, of Ray's store).
      observ = observ.copy()
    return observ, infos
  observ = slab_lib.concatenate([result[0] for result in results])
  infos = {}
  if any([result[1] for result in results]):
    infos = slab_lib.concatenate_infos([result[1] for result in results], counts)
  if order is not None:
    observ, infos = slab_lib.select(observ, order), slab_lib.select(infos, order)
  return observ, infos
