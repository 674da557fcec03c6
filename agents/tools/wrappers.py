"""Runs an environment, or a slab of several, in its own OS process: the parent's side.

The parent forwards `step`, `reset`, `close`, method calls and attribute access
to the worker. `step` and `reset` can be non-blocking and return a promise;
promises may be resolved in any order and each still gets its own reply (or its
own exception). `wait_all` gathers the replies of many workers with one poll.

The layers beneath live in `agents.tools.transport`: the wire format, the
shared-memory block layout, the channel (two one-way pipes), launching and
stopping the process, and the worker's loop.

Speed: when the spaces hold plain arrays, a step moves actions, observations,
rewards and done flags through shared memory and the pipes carry a single byte
each way, so nothing is pickled on the hot path. A worker may host a slab of K
environments (a `gymnasium.vector.VectorEnv` with autoreset disabled), so the
cost of crossing processes is paid once per slab.

Faults: an exception in the worker re-raises in the parent as `WorkerError`
with the worker's traceback and the environment index. A worker that dies is
noticed at once, by its end of the reply pipe closing or by its pidfd (so also
when a process it forked still holds the pipe), and reported as
`WorkerDiedError`; a worker that stops answering for `timeout` seconds is killed
and reported as `WorkerTimeoutError`. Workers exit by themselves when the parent
goes away, even while their environment is busy (see `transport.worker`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from multiprocessing import shared_memory
from typing import Any

import numpy as np

from agents.tools import errors
from agents.tools import slab as slab_lib
from agents.tools.transport import connection as transport_connection
from agents.tools.transport import launch, shared_block, waiter, wire

default_context = launch.default_context


class Promise:
  """The pending reply of a non-blocking request; call it to wait for the result."""

  def __init__(self, connection: transport_connection.WorkerConnection, token: int) -> None:
    self._connection = connection
    self._token = token

  def __call__(self) -> Any:
    return self._connection.resolve(self._token)


class ExternalProcess:
  """Hosts an environment (or a slab of environments) in a separate process.

  Implements `agents.tools.batch_member.BatchMember`: one worker's requests (single and
  batched steps and resets, blocking or as promises, attribute access, restart and
  close) and its own shared memory. Many workers stepped together through one block
  are a `worker_pool.WorkerPool`, which uses `attach_shared_block`, `begin_fast_step`
  and `connection`.

  Attributes:
    is_vector: Whether the hosted environment is a `VectorEnv` slab.
    observation_space: Observation space of one environment.
    action_space: Action space of one environment.
    timeout: Seconds a reply may take before the worker counts as hung, or None.
  """

  observation_space: Any  # Set once the worker is ready (`wait_ready`).
  action_space: Any

  def __init__(self, constructor: Callable[[], Any], index: int = 0, context: str | None = None,
               timeout: float | None = 600.0, start_timeout: float = 120.0,
               close_timeout: float = 5.0, use_shared_memory: bool = True,
               wait: bool = True) -> None:
    """Starts the worker and waits until it has built the environment.

    Args:
      constructor: Callable without arguments that returns a `gymnasium.Env` or an
        autoreset-disabled `gymnasium.vector.VectorEnv`; pickled with cloudpickle.
      index: Batch index of the first hosted environment, named in errors.
      context: Multiprocessing start method, 'forkserver' or 'spawn' (default:
        forkserver where available). 'fork' is refused.
      timeout: Seconds to wait for any reply before the worker counts as hung and is
        killed; None waits as long as the worker is alive.
      start_timeout: Seconds to wait for the constructor to finish.
      close_timeout: Seconds `close` waits for the worker to exit before terminating it.
      use_shared_memory: Whether array values cross through shared memory.
      wait: Whether to wait here until the environment is built. Pass False to start
        several workers at once, then call `wait_ready()` on each.

    Raises:
      WorkerError: The constructor raised; the error carries its traceback.
      WorkerDiedError: The worker died while starting.
    """
    self._index = index
    self._num_envs = 1
    self._closed = False
    self._context = launch.get_context(context)
    self._constructor_bytes = wire.dumps(constructor)
    self._registry = launch.registry_snapshot()
    self.timeout = timeout
    self._start_timeout = start_timeout
    self._close_timeout = close_timeout
    self._use_shared_memory = use_shared_memory
    self._spaces: tuple[Any, ...] | None = None
    # The environment's public names; None: any name.
    self._remote_attributes: set[str] | None = None
    self._memory: shared_memory.SharedMemory | None = None
    self._layout: dict[str, Any] | None = None
    self._views: dict[str, np.ndarray] = {}  # Shared arrays by field; {} without.
    self._fast_step = False
    self._memory_finalizer: weakref.finalize | None = None
    # Set by `_launch` below; None only if that fails.
    self._connection: transport_connection.WorkerConnection = None  # type: ignore[assignment]
    self._spaces_promise: Promise | None = None
    self.is_vector = False
    self._launch()
    if wait:
      try:
        self.wait_ready()
      except BaseException:
        self.close()
        raise

  # The hosted environment's interface.

  @property
  def index(self) -> int:
    """Batch index of the (first) environment this worker hosts; named in errors."""
    return self._index

  @index.setter
  def index(self, value: int) -> None:
    self._index = value
    if self._connection is not None:
      self._connection.index = value

  @property
  def num_envs(self) -> int:
    """Number of environments the worker hosts (1 for a plain environment)."""
    return self._num_envs

  @property
  def pid(self) -> int | None:
    """Process id of the current worker."""
    return self._connection.process.pid

  def is_alive(self) -> bool:
    """Returns whether the worker process is running."""
    return self._connection is not None and self._connection.process.is_alive()

  def step(self, action: Any, blocking: bool = True) -> Any:
    """Forwards `env.step(action)`.

    Args:
      action: One action, or a batch of `num_envs` actions for a vector slab.
      blocking: Whether to wait for the result or return a promise.

    Returns:
      The environment's `(observ, reward, terminated, truncated, info)`, or a promise.
    """
    if self.is_vector:
      return self._step(action, copy=True, finish=None, blocking=blocking)
    return self._step(slab_lib.batch_single(self.action_space, action), copy=True,
                      finish=_unbatch_step, blocking=blocking)

  def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
            blocking: bool = True) -> Any:
    """Forwards `env.reset(seed=seed, options=options)`; returns `(observ, info)` or a promise."""
    return self._request(('reset', seed, options), 'resetting', blocking=blocking)

  def step_batch(self, actions: Any, blocking: bool = True, copy: bool = True) -> Any:
    """Steps all hosted environments with batched actions (the interface BatchEnv uses).

    Args:
      actions: Actions with a leading axis of size `num_envs`.
      blocking: Whether to wait for the result or return a promise.
      copy: Whether to copy results out of shared memory. Without a copy the arrays are
        only valid until the next request to this worker.

    Returns:
      Tuple (observ[K, ...], reward float64[K], terminated bool[K], truncated bool[K],
      infos in vector format), or a promise of it.
    """
    num_envs, is_vector = self.num_envs, self.is_vector

    def finish(result: tuple[Any, ...]) -> tuple[Any, ...]:
      observ, reward, terminated, truncated, info = result
      return observ, reward, terminated, truncated, slab_lib.vector_infos(
          info, num_envs, is_vector)

    return self._step(actions, copy=copy, finish=finish, blocking=blocking)

  def reset_batch(self, indices: Sequence[int] | None = None,
                  seeds: Sequence[int | None] | None = None, blocking: bool = True) -> Any:
    """Resets some hosted environments (the interface BatchEnv uses).

    Args:
      indices: Positions within the slab; None resets all.
      seeds: One seed (or None) per entry of `indices`, or None.
      blocking: Whether to wait for the result or return a promise.

    Returns:
      Tuple (observ[len(indices), ...], infos in vector format), or a promise of it.
    """
    indices = None if indices is None else [int(i) for i in indices]
    seeds = None if seeds is None else [None if s is None else int(s) for s in seeds]
    self._check_open()
    if self._fast_step and self._connection.idle and wire.fast_reset_fits(indices, seeds):
      # Shared memory holds one request at a time; resets queued behind others are pickled.
      local = list(range(self.num_envs)) if indices is None else indices
      observ, num_envs, is_vector = self._views['observ'], self.num_envs, self.is_vector

      def read_shared(info: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return observ[local], slab_lib.vector_infos(info, num_envs, is_vector)

      return self._send(wire.encode_fast_reset(local, seeds), 'resetting', read_shared, blocking)
    return self._request(('reset_batch', indices, seeds), 'resetting', blocking=blocking)

  def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
    """Calls a method of the hosted environment and returns its result."""
    return self._request(('call', name, args, kwargs), f'calling {name}()')

  def set_attribute(self, name: str, value: Any) -> Any:
    """Sets an attribute of the hosted environment."""
    result = self._request(('setattr', name, value), f'setting {name}')
    if self._remote_attributes is not None:
      self._remote_attributes.add(name)
    return result

  def __getattr__(self, name: str) -> Any:
    # Only reached for names this object lacks; private names never go remote, so
    # pickling, copying and half-built objects behave.
    if name.startswith('_'):
      raise AttributeError(name)
    self.wait_ready()
    names = self._remote_attributes
    if names is not None and name not in names:
      # Refused here: a typo must not become a request to the worker.
      raise AttributeError(f'{type(self).__name__} of environment {self.index} has no '
                           f'attribute {name!r}, and neither has its environment.')
    return self._request(('getattr', name), f'reading {name}')

  # Shared memory and the hot path (a WorkerPool's interface).

  def attach_shared_block(self, memory: shared_memory.SharedMemory,
                          layout: dict[str, Any]) -> None:
    """Moves this worker's shared arrays into a block owned by the caller.

    A `WorkerPool` gives every worker a slice of one block, so a batch step writes all
    actions and reads all observations with one copy each. The caller keeps `memory` alive and
    releases it after closing this process.

    Args:
      memory: A `multiprocessing.shared_memory.SharedMemory`.
      layout: Dict field -> (byte offset, shape, dtype string) for the fields of
        `shared_block.shared_layout`, with shapes of this worker's `num_envs`.
    """
    self._check_open()
    self._request(('attach', memory.name, layout), 'attaching shared memory')
    self._views, self._fast_step = {}, False
    if self._memory_finalizer is not None:
      self._memory_finalizer()
    self._memory, self._layout, self._memory_finalizer = memory, layout, None
    self._views = shared_block.views(memory.buf, layout)
    self._fast_step = shared_block.supports_fast_step(self._views)

  @property
  def supports_fast_step(self) -> bool:
    """Whether steps can move actions and results through shared memory alone."""
    return self._fast_step

  def begin_fast_step(self) -> int:
    """Asks the worker to step with the actions already in its shared `actions` array.

    The hot path of a `WorkerPool`: no pickling and no promise object. The results
    appear in the shared arrays; wait for the reply with `wait_all` (or
    `connection.resolve`), which returns the raw info.

    Returns:
      The request's token.
    """
    if self._closed:
      raise errors.ClosedError(f'ExternalProcess for environment {self.index} is closed.')
    return self._connection.send_frame(wire.FAST_STEP_FRAME, 'stepping')

  @property
  def connection(self) -> transport_connection.WorkerConnection:
    """The current worker's `transport.connection.WorkerConnection`: its requests and
    replies (`send`, `resolve`, `settle`) and the descriptors to poll for them. A
    restart replaces it."""
    return self._connection

  # Lifecycle.

  def wait_ready(self) -> None:
    """Waits until the worker has built its environment (see the `wait` argument).

    Raises:
      WorkerError: The constructor raised; the error carries its traceback.
      WorkerDiedError: The worker died while starting.
      SpaceMismatchError: A restarted worker's spaces differ from the first ones.
    """
    if self._spaces_promise is None:
      return
    promise, self._spaces_promise = self._spaces_promise, None
    spaces = promise()
    self._remote_attributes = None if spaces[4] is None else set(spaces[4])
    if self._spaces is None:
      self._spaces = spaces
      self._num_envs, self.is_vector, self.observation_space, self.action_space = spaces[:4]
      self._connection.num_envs = self._num_envs
      if self._use_shared_memory:
        self._create_shared_memory()
    elif not _same_spaces(spaces, self._spaces):
      self._connection.stop()
      raise errors.SpaceMismatchError(
          f'Restarted worker for environment {self.index} reports spaces {spaces[2:4]} '
          f'(slab of {spaces[0]}), before it had {self._spaces[2:4]} (slab of '
          f'{self._spaces[0]}).')
    if self._memory is not None:
      self._request(('attach', self._memory.name, self._layout), 'attaching shared memory')

  def restart(self) -> None:
    """Replaces the worker by a fresh process built from the same constructor.

    Pending promises of the old worker fail with `WorkerDiedError`.

    Raises:
      SpaceMismatchError: The new environment's spaces differ from the old ones.
    """
    self._check_open()
    self._connection.stop()
    self._launch()
    self.wait_ready()

  def close(self) -> None:
    """Closes the environment and ends the worker. Safe to call any number of times.

    Waits `close_timeout` seconds for a clean exit, then terminates and finally kills
    the process; the shared memory is released either way.
    """
    if self._closed:
      return
    self._closed = True
    if self._connection is not None:
      self._connection.stop()
    self._views, self._fast_step = {}, False
    if self._memory_finalizer is not None:
      self._memory_finalizer()

  def __enter__(self) -> ExternalProcess:
    return self

  def __exit__(self, *exc_info: object) -> None:
    self.close()

  def __repr__(self) -> str:
    state = 'closed' if self._closed else f'pid {self.pid}'
    return f'ExternalProcess(index={self.index}, num_envs={self.num_envs}, {state})'

  def _launch(self) -> None:
    self._connection = transport_connection.WorkerConnection(
        self._context, self._constructor_bytes, self._registry, self._index, self.num_envs,
        self.timeout, self._close_timeout)
    self._spaces_promise = self._request(
        ('spaces',), 'starting', blocking=False, timeout=self._start_timeout)

  def _create_shared_memory(self) -> None:
    self._layout, size = shared_block.shared_layout(
        self.num_envs, self.observation_space, self.action_space)
    self._memory = shared_memory.SharedMemory(create=True, size=size)
    self._memory_finalizer = weakref.finalize(self, shared_block.release_memory, self._memory)
    self._views = shared_block.views(self._memory.buf, self._layout)
    self._fast_step = shared_block.supports_fast_step(self._views)

  # Requests and replies.

  def _check_open(self) -> None:
    if self._closed:
      raise errors.ClosedError(f'ExternalProcess for environment {self.index} is closed.')
    if self._spaces_promise is not None:
      self.wait_ready()  # Started with wait=False: requests need the spaces first.

  def _step(self, actions: Any, copy: bool, finish: Callable[[Any], Any] | None,
            blocking: bool) -> Any:
    self._check_open()
    # Shared memory holds one request at a time; steps queued behind others are pickled.
    if self._fast_step and self._connection.idle:
      views = self._views
      views['actions'][...] = actions

      def read_shared(info: dict[str, Any]) -> Any:
        result: tuple[Any, ...] = (
            views['observ'], views['reward'], views['terminated'], views['truncated'])
        if copy:
          result = tuple(value.copy() for value in result)
        result = (*result, info)
        return result if finish is None else finish(result)

      return self._send(wire.FAST_STEP, 'stepping', read_shared, blocking)
    return self._send(wire.encode_step_request(actions), 'stepping', finish, blocking)

  def _request(self, command: tuple[Any, ...], what: str, blocking: bool = True,
               timeout: float | None = None) -> Any:
    self._check_open()
    return self._send(wire.encode_request(*command), what, None, blocking, timeout)

  def _send(self, payload: bytes, what: str, finish: Callable[[Any], Any] | None,
            blocking: bool, timeout: float | None = None) -> Any:
    connection = self._connection
    token = connection.send(payload, what, finish, timeout)
    return connection.resolve(token) if blocking else Promise(connection, token)


def wait_all(processes: Sequence[ExternalProcess],
             tokens: Sequence[int]) -> list[tuple[bool, Any]]:
  """Waits for the replies of requests sent to several workers, whichever comes first.

  Sleeps in one poll over all the workers (their reply pipes and their death
  descriptors) and reads each reply as soon as it arrives, so no reply waits behind a
  slower worker's, and a worker that dies is noticed at once; see `transport.waiter`.

  Args:
    processes: `ExternalProcess` workers.
    tokens: The token (from `begin_fast_step`) of each worker's request.

  Returns:
    One `(True, raw info)` or `(False, exception)` per worker, in order: WorkerError,
    WorkerDiedError or WorkerTimeoutError.
  """
  return waiter.wait_all([process.connection for process in processes], tokens)


def _unbatch_step(result: tuple[Any, ...]) -> tuple[Any, float, bool, bool, Any]:
  observ, reward, terminated, truncated, info = result
  observ = observ[0] if isinstance(observ, np.ndarray) else slab_lib.select(observ, 0)
  return observ, float(reward[0]), bool(terminated[0]), bool(truncated[0]), info


def _same_spaces(first: tuple[Any, ...], second: tuple[Any, ...]) -> bool:
  return first[0] == second[0] and first[2] == second[2] and first[3] == second[3]
