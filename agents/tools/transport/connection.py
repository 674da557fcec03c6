"""One running worker process and the requests in flight to it: the parent's bookkeeping.

Requests are numbered (tokens). Replies come back in request order, so the
reply to a token may arrive after replies to earlier ones; those are kept, with
their exceptions, for their own waiters. Waiting sleeps in one `poll` on the
reply pipe and on the worker's death descriptor, so a worker that dies is
noticed at once, even when a process it forked holds the pipe open, and a
worker silent for longer than its timeout is killed.
"""

from __future__ import annotations

import collections
import select
import time
import weakref
from collections.abc import Callable
from multiprocessing.context import BaseContext
from typing import Any

from agents.tools import errors
from agents.tools.transport import launch, wire


class WorkerConnection:
  """Starts a worker process and carries its requests and replies.

  Attributes:
    index: Batch index of the worker's first environment, named in errors.
    num_envs: Number of environments the worker hosts, named in errors.
    timeout: Default seconds a reply may take, or None.
    process: The `multiprocessing.Process`.
  """

  def __init__(self, context: BaseContext, constructor_bytes: bytes, registry: list[bytes],
               index: int, num_envs: int, timeout: float | None,
               close_timeout: float) -> None:
    """Starts the worker (see `launch.start_worker`); it then waits for requests."""
    self.index, self.num_envs, self.timeout = index, num_envs, timeout
    self.process, self._channel = launch.start_worker(
        context, constructor_bytes, registry, name=f'ExternalProcess-{index}')
    self._death_fd, owned = launch.death_fileno(self.process)
    self._poller = select.poll()
    self._poller.register(self._channel.fileno(), select.POLLIN)
    self._poller.register(self._death_fd, select.POLLIN)
    # (token, what, finish, timeout), in order.
    self._outstanding: collections.deque[tuple[Any, ...]] = collections.deque()
    # Token -> (ok, value), read ahead of their waiters.
    self._replies: dict[int, tuple[bool, Any]] = {}
    self._next_token = 0
    self._dead: errors.WorkerDiedError | None = None
    self._stopped = False
    self._finalizer = weakref.finalize(
        self, launch.stop_process, self.process, self._channel, close_timeout,
        self._death_fd if owned else None)

  def stop(self) -> None:
    """Asks the worker to exit, then terminates it; bounded in time, idempotent."""
    self._stopped = True
    self._finalizer()

  @property
  def idle(self) -> bool:
    """Whether no reply is awaited."""
    return not self._outstanding

  def send(self, payload: bytes, what: str, finish: Callable[[Any], Any] | None = None,
           timeout: float | None = None) -> int:
    """Sends a request and returns its token.

    Args:
      payload: The unframed message (see `wire`).
      what: What the worker is doing meanwhile, for errors ('stepping').
      finish: Function applied to the decoded reply when it is resolved, or None.
      timeout: Seconds the reply may take; None uses `timeout`.
    """
    return self.send_frame(wire.frame(payload), what, finish, timeout)

  def send_frame(self, framed: bytes, what: str, finish: Callable[[Any], Any] | None = None,
                 timeout: float | None = None) -> int:
    """Like `send`, for a message already framed (the hot path's constant frames)."""
    token = self._next_token
    self._next_token = token + 1
    self._outstanding.append((token, what, finish, timeout or self.timeout))
    if self._dead is None and not self._stopped:
      try:
        self._channel.send_frame(framed, self.process)
      except OSError:
        pass  # The worker is gone; reading its reply reports that with the exit code.
    return token

  def reply_fileno(self, token: int) -> int | None:
    """The descriptor to poll for the reply to `token`, or None when polling cannot tell.

    Returns the read end of the reply pipe when that reply is the next to arrive and
    nothing is buffered already; otherwise None (call `resolve` directly).
    """
    outstanding = self._outstanding
    if (self._dead is None and outstanding and outstanding[0][0] == token
        and not self._channel.has_buffered()):
      return self._channel.fileno()
    return None

  def pipe_fileno(self) -> int:
    """The read end of the reply pipe, whichever reply comes next (for poll sets kept
    between requests; `reply_fileno` says whether polling it tells about a given one)."""
    return self._channel.fileno()

  def death_fileno(self) -> int:
    """A descriptor that becomes readable when the worker process ends."""
    return self._death_fd

  def resolve(self, token: int) -> Any:
    """Waits for the reply to `token` and returns it (after its `finish`).

    Raises:
      WorkerError: the request's own exception (also WorkerDiedError and
        WorkerTimeoutError, or whatever its `finish` raised); replies read on the way
        keep their own.
      ValueError: The reply was already taken.
    """
    outstanding = self._outstanding
    if not self._replies and outstanding and outstanding[0][0] == token:
      # The common case: this reply is the next to arrive and none is kept.
      _, what, finish, timeout = outstanding.popleft()
      reply = self._decode(self._receive(what, timeout))
      return reply if finish is None else finish(reply)
    while token not in self._replies:
      if not outstanding or outstanding[0][0] > token:
        raise ValueError(f'Promise {token} of environment {self.index} was already resolved.')
      current, what, finish, timeout = outstanding.popleft()
      try:
        reply = self._decode(self._receive(what, timeout))
        self._replies[current] = (True, reply if finish is None else finish(reply))
      except Exception as error:  # noqa: BLE001 - kept for the waiter it belongs to.
        self._replies[current] = (False, error)
    ok, value = self._replies.pop(token)
    if not ok:
      raise value
    return value

  def settle(self, token: int) -> tuple[bool, Any]:
    """Waits for the reply to `token`; returns `(True, result)` or `(False, exception)`."""
    try:
      return True, self.resolve(token)
    except Exception as error:  # noqa: BLE001 - handed to the caller, which raises it.
      return False, error

  def _decode(self, payload: bytes) -> Any:
    if payload is wire.FAST_STEP:
      return {}  # The hot path: a fast step's reply without info (from `take_fast`).
    ok, value = wire.decode_reply(payload)
    if ok:
      return value
    remote_type, text, remote_traceback, cause = value
    error: Exception = errors.WorkerError(
        f'{remote_type}: {text}', self.index, self.num_envs, remote_type, remote_traceback)
    if isinstance(cause, AttributeError) and remote_type == 'AttributeError':
      error = AttributeError(str(error))
    error.__cause__ = cause
    raise error

  def _receive(self, what: str, timeout: float | None) -> bytes:
    """Returns the next reply; raises WorkerDiedError or WorkerTimeoutError instead."""
    if self._dead is not None:
      raise self._dead
    channel = self._channel
    try:
      message = channel.take_fast()
    except (EOFError, OSError):
      raise self._died(what) from None
    if message is not None:
      return message
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
      message = channel.take()
      if message is not None:
        return message
      try:
        if channel.fill():
          continue
      except (EOFError, OSError):
        raise self._died(what) from None
      wait_ms = -1 if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
      ready = self._poller.poll(wait_ms)
      if any(fd == channel.fileno() for fd, _ in ready):
        continue
      if ready:  # Only the death descriptor: read what the worker wrote before, if any.
        try:
          if channel.fill():
            continue
        except (EOFError, OSError):
          pass
        raise self._died(what)
      if deadline is not None and time.monotonic() >= deadline:
        self.process.kill()
        self.process.join(1.0)
        self._dead = errors.WorkerTimeoutError(
            f'worker process {self.process.pid} gave no reply within {timeout} s while '
            f'{what}, so it was killed', self.index, self.num_envs, self.process.exitcode)
        raise self._dead

  def _died(self, what: str) -> errors.WorkerDiedError:
    self.process.join(1.0)
    self._dead = errors.WorkerDiedError(
        f'worker process {self.process.pid} died while {what}', self.index, self.num_envs,
        self.process.exitcode)
    return self._dead
