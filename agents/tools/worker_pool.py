"""Worker processes stepped as one batch member through one shared-memory block.

A `WorkerPool` holds consecutive `ExternalProcess` workers of a batch whose spaces
hold plain arrays. It owns one block with the actions, observations, rewards and
flags of all their environments; each worker reads and writes its own rows. A step
then costs one copy in, one one-byte message to and from each worker, and one copy
out, with nothing pickled; the replies are read as they arrive, with one poll over
every worker (`transport.waiter`). A reset sends each worker it concerns the packed
indices (and seeds) of its environments; the workers write the observations into
their rows of the block, and only infos that are not empty are pickled.

A worker that dies is replaced within the pool, against the batch's budget
(`batch_restarts.WorkerRestarts`): during a step its rows report the interrupted
episodes, during a reset its fresh slab is reset whole.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Iterable, Sequence
from multiprocessing import shared_memory
from typing import Any

import numpy as np

from agents.tools import batch_checks, batch_index, batch_restarts, errors, wrappers
from agents.tools import slab as slab_lib
from agents.tools.transport import shared_block, waiter, wire

# A step's reply without infos (replies equal it, they are not it).
_PLAIN_REPLY: tuple[bool, dict[str, Any]] = (True, {})

StepResult = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]
ResetResult = tuple[np.ndarray, dict[str, Any]]


class WorkerPool:
  """Steps `ExternalProcess` workers together through one shared block; a `BatchMember`.

  Attributes:
    workers: The workers, in batch order.
    num_envs: Number of environments of all workers.
    observation_space: Observation space of one environment.
    action_space: Action space of one environment.
  """

  is_vector = True  # Infos come out in vector format.

  def __init__(self, workers: Sequence[wrappers.ExternalProcess],
               restarts: batch_restarts.WorkerRestarts | None = None, index: int = 0) -> None:
    """Moves the workers' shared arrays into one block owned by the pool.

    Args:
      workers: `ExternalProcess` workers whose `supports_fast_step` is true.
      restarts: The batch's `WorkerRestarts` (None: no restarts).
      index: Batch index of the first environment.
    """
    self.workers = list(workers)
    self._restarts = restarts or batch_restarts.WorkerRestarts(0)
    sizes = [worker.num_envs for worker in self.workers]
    self._starts: list[int] = np.cumsum([0] + sizes)[:-1].tolist()
    self._worker_of: list[int] = np.repeat(np.arange(len(sizes)), sizes).tolist()
    # What turns each worker's reply to a reset into infos in vector format.
    infos_of_one = functools.partial(slab_lib.vector_infos, num_envs=1, is_vector=False)
    self._reset_infos = [None if worker.is_vector else infos_of_one for worker in self.workers]
    self._connections: list[Any] | None = None  # The workers', until one restarts.
    self.num_envs = int(sum(sizes))
    self.observation_space = self.workers[0].observation_space
    self.action_space = self.workers[0].action_space
    self.index = index
    for worker in self.workers[1:]:
      for kind in ('observation', 'action'):
        batch_checks.check_same_space(kind, worker.index, getattr(worker, f'{kind}_space'),
                                      getattr(self, f'{kind}_space'))
    layout, size = shared_block.shared_layout(
        self.num_envs, self.observation_space, self.action_space)
    memory = shared_memory.SharedMemory(create=True, size=size)
    self._release = weakref.finalize(self, shared_block.release_memory, memory)
    for worker, start, count in zip(self.workers, self._starts, sizes):
      worker.attach_shared_block(memory, shared_block.slice_layout(layout, start, count))
    self._block = shared_block.views(memory.buf, layout)
    self._waiter = waiter.ReplyWaiter()  # Polls every worker, each step and reset.

  @property
  def index(self) -> int:
    """Batch index of the pool's first environment; each worker's follows from it."""
    return self._index

  @index.setter
  def index(self, value: int) -> None:
    self._index = value
    for worker, start in zip(self.workers, self._starts):
      worker.index = value + start

  def step_batch(self, actions: np.ndarray, blocking: bool = True,
                 copy: bool = True) -> StepResult | Callable[[], StepResult]:
    """Steps every worker with the actions written to the block.

    Returns:
      (observ, reward float64, terminated, truncated, infos) for all environments, or a
      callable that waits for it. Without `copy`, the arrays are the block's, valid
      until the next step.
    """
    self._block['actions'][...] = actions
    # Send every request before waiting for any, so the workers step in parallel.
    promise = functools.partial(
        self._finish_step, [worker.begin_fast_step() for worker in self.workers], copy)
    return promise() if blocking else promise

  def _finish_step(self, tokens: list[int], copy: bool) -> StepResult:
    block = self._block
    replies = self._waiter.wait(self._connections or self._live_connections(), tokens)
    observ, reward = block['observ'], block['reward']
    terminated, truncated = block['terminated'], block['truncated']
    infos: dict[str, Any] = {}
    if replies.count(_PLAIN_REPLY) != len(replies):  # Rare: infos, errors or dead workers.
      replies = [(ok, slab_lib.vector_infos(value, worker.num_envs, worker.is_vector)
                  if ok else value) for worker, (ok, value) in zip(self.workers, replies)]
      parts, died = self._settle(range(len(self.workers)), replies)
      for slot, error in died:
        parts[slot] = self._interrupt_step(slot, error)
      infos = slab_lib.concatenate_infos(parts, [worker.num_envs for worker in self.workers])
    if copy:
      return observ.copy(), reward.copy(), terminated.copy(), truncated.copy(), infos
    return observ, reward, terminated, truncated, infos

  def _interrupt_step(self, slot: int, error: errors.WorkerDiedError) -> dict[str, Any]:
    worker, start = self.workers[slot], self._starts[slot]
    rows = slice(start, start + worker.num_envs)
    block = self._block
    self._connections = None  # The restart replaces the worker's connection.
    (block['observ'][rows], block['reward'][rows], block['terminated'][rows],
     block['truncated'][rows], infos) = self._restarts.interrupted_step(worker, error)
    return infos

  def reset_batch(self, indices: Sequence[int] | None = None,
                  seeds: Sequence[int | None] | None = None,
                  blocking: bool = True) -> ResetResult | Callable[[], ResetResult]:
    """Resets some environments of the pool (positions within it, in the order given).

    Returns:
      (observ[len(indices), ...], infos in vector format), or a callable that waits for it.
    """
    # Positions from BatchEnv, checked there already.
    indices = list(range(self.num_envs)) if indices is None else list(indices)
    requests, counts, order = batch_index.split_by_member(
        indices, seeds, self._worker_of, self._starts)
    # Send every request before waiting for any, so the workers reset in parallel.
    tokens: list[int | None] = [None] * len(self.workers)
    for position, local, member_seeds in requests:
      tokens[position] = self._send_reset(position, local, member_seeds)
    promise = functools.partial(self._finish_reset, indices, requests, tokens, counts, order)
    return promise() if blocking else promise

  def _finish_reset(self, indices: list[int], requests: list[batch_index.Request],
                    tokens: list[int | None], counts: list[int],
                    order: np.ndarray | None) -> ResetResult:
    replies = self._waiter.wait(self._live_connections(), tokens)  # None: not waited on.
    positions = [position for position, _, _ in requests]
    parts, died = self._settle(positions, [replies[position] for position in positions])
    for slot, error in died:
      position, local, member_seeds = requests[slot]
      self._connections = None  # The restart replaces the worker's connection.
      _, parts[slot] = self._restarts.reset_restarted(
          self.workers[position], error, local, member_seeds, self._reset_whole)
    observ = self._block['observ'][indices]  # A copy, in the caller's order already.
    infos: dict[str, Any] = {}
    if any(parts):
      infos = slab_lib.concatenate_infos(parts, counts)
      if order is not None:
        infos = slab_lib.select(infos, order)
    return observ, infos

  def _reset_whole(self, worker: wrappers.ExternalProcess, local: list[int],
                   seeds: list[int | None] | None) -> tuple[None, dict[str, Any]]:
    """Resets a restarted worker's environments (all of them, `local`); returns (None,
    their infos), their observations being in the block."""
    position = self.workers.index(worker)
    self._connections = None
    return None, worker.connection.resolve(self._send_reset(position, local, seeds))

  def _send_reset(self, position: int, local: list[int],
                  seeds: Sequence[int | None] | None) -> int:
    """Asks one worker to reset some of its environments into its rows of the block;
    returns the token whose reply is their infos in vector format."""
    worker, connection = self.workers[position], self._live_connections()[position]
    if seeds is None or wire.fast_reset_fits(None, seeds):  # Positions always fit.
      return connection.send_frame(wire.frame(wire.encode_fast_reset(local, seeds)),
                                          'resetting', self._reset_infos[position])
    start = self._starts[position]
    rows = self._block['observ'][start:start + worker.num_envs]

    def write_rows(reply: tuple[Any, dict[str, Any]]) -> dict[str, Any]:
      rows[local] = reply[0]  # Seeds beyond int64: the observations come pickled.
      return reply[1]

    return connection.send(
        wire.encode_request('reset_batch', list(local), seeds), 'resetting', write_rows)

  def _live_connections(self) -> list[Any]:
    """The workers' connections (kept until a restart replaces one)."""
    if self._connections is None:
      self._connections = [worker.connection for worker in self.workers]
    return self._connections

  def _settle(self, positions: Iterable[int], replies: list[tuple[bool, Any]],
              ) -> tuple[list[dict[str, Any]], list[tuple[int, errors.WorkerDiedError]]]:
    """The infos of each reply of the workers at `positions` (vector format; {} where it
    failed) and the `(slot, WorkerDiedError)` of each dead worker. Raises the first other
    error, before anything restarts."""
    infos, died, failed = [], [], None
    for slot, (position, (ok, value)) in enumerate(zip(positions, replies)):
      infos.append(value if ok else {})
      if ok:
        continue
      if isinstance(value, errors.WorkerDiedError):
        died.append((slot, value))
      elif failed is None:
        worker = self.workers[position]
        failed = errors.name_environment(value, worker.index, worker.num_envs)
    if failed is not None:
      raise failed
    return infos, died

  def restart(self) -> None:
    """Refused: the pool replaces its dead workers itself, each against the budget."""
    raise errors.WorkerError('a worker pool restarts its workers one by one.', self.index,
                             self.num_envs)

  def close(self) -> None:
    """Closes every worker, then releases the block."""
    first_error: Exception | None = None
    for worker in self.workers:
      try:
        worker.close()
      except Exception as error:  # noqa: BLE001 - close the rest, then report the first.
        first_error = first_error or error
    self._block = {}
    self._release()
    if first_error is not None:
      raise first_error
