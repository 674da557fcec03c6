"""Waiting for the replies of many workers at once, whichever comes first.

Where a promise waits for one worker, a `ReplyWaiter` sleeps in one `poll` over
all of them (their reply pipes and their death descriptors) and reads each reply as
soon as it arrives, so no reply waits behind a slower worker's, and a worker that
dies is noticed at once. Replies still missing at the earliest timeout are then
awaited worker by worker, which kills the hung ones.
"""

from __future__ import annotations

import select
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
  from agents.tools.transport.connection import WorkerConnection

_IDLE = (True, None)  # The result of a connection not waited on.


def wait_all(connections: Sequence[WorkerConnection],
             tokens: Sequence[int | None]) -> list[tuple[bool, Any]]:
  """Waits for the reply to `tokens[i]` from `connections[i]`, for every i.

  Args:
    connections: `connection.WorkerConnection`s.
    tokens: The token of each one's request; None for a connection not waited on
      (its result is `(True, None)`).

  Returns:
    One `(True, result)` or `(False, exception)` per connection, in order.
  """
  return ReplyWaiter().wait(connections, tokens)


class ReplyWaiter:
  """`wait_all` that keeps its poll set between waits on the same connections.

  A batch waits on all its workers every step; registering their descriptors once,
  rather than building a poll set each time, takes that cost off the hot path. The set
  is rebuilt when the connections change (a restart replaces one) and after a
  descriptor fired out of turn (a reply read without polling, or a dead worker).
  """

  def __init__(self) -> None:
    # The connections the poll set watches, in order.
    self._connections: list[WorkerConnection] | None = None
    self._poller: Any = None  # A `select.poll`, once watching.
    self._owner: dict[int, int] = {}  # Descriptor -> position of its connection.

  def wait(self, connections: Sequence[WorkerConnection],
           tokens: Sequence[int | None]) -> list[tuple[bool, Any]]:
    """Waits for the replies of `connections` to `tokens`; see `wait_all`."""
    if connections != self._connections:
      self._watch(connections)
    poller, owner = self._poller, self._owner
    results: list[Any] = [None] * len(connections)
    timeout: float | None = None
    pending, bounded = 0, True
    for position, (connection, token) in enumerate(zip(connections, tokens)):
      if token is None:  # Not waited on: a descriptor of it that fires is out of turn.
        results[position] = _IDLE
        continue
      if connection.reply_fileno(token) is None:
        results[position] = connection.settle(token)
        continue
      pending += 1
      if connection.timeout is None:
        bounded = False
      elif timeout is None or connection.timeout < timeout:
        timeout = connection.timeout
    deadline = time.monotonic() + timeout if bounded and pending and timeout is not None else None
    while pending:
      wait_ms = -1 if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
      ready = poller.poll(wait_ms)
      if not ready:
        break
      for fd, _ in ready:
        watched = owner.get(fd)  # None: a descriptor unwatched earlier in this loop.
        if watched is None:
          continue
        if results[watched] is not None:
          # Out of turn (a reply already read, or a dead worker's descriptor, which
          # stays readable): stop watching it, and rebuild the set for the next wait.
          poller.unregister(fd)
          del owner[fd]
          self._connections = None
          continue
        results[watched] = connections[watched].settle(tokens[watched])  # type: ignore[arg-type]  # waited on
        pending -= 1
    for position, result in enumerate(results):
      if result is None:
        results[position] = connections[position].settle(tokens[position])  # type: ignore[arg-type]  # waited on
    return results

  def _watch(self, connections: Sequence[WorkerConnection]) -> None:
    self._poller, self._owner = select.poll(), {}
    for position, connection in enumerate(connections):
      for fd in (connection.pipe_fileno(), connection.death_fileno()):
        self._owner[fd] = position
        self._poller.register(fd, select.POLLIN)
    self._connections = list(connections)
