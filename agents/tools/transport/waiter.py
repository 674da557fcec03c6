"""Waiting for the replies of many workers at once, whichever comes first.

Where a promise waits for one worker, a `ReplyWaiter` sleeps in one `poll` over
all of them (their reply pipes and their death descriptors) and reads each reply as
soon as it arrives, so no reply waits behind a slower worker's, and a worker that
dies is noticed at once. Replies still missing at the earliest timeout are then
awaited worker by worker, which kills the hung ones.
"""

import select
import time

_IDLE = (True, None)  # The result of a connection not waited on.


def wait_all(connections, tokens):
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

  def __init__(self):
    self._connections = None  # The connections the poll set watches, in order.
    self._poller = None
    self._owner = None  # Descriptor -> position of its connection.

  def wait(self, connections, tokens):
    """Waits for the replies of `connections` to `tokens`; see `wait_all`."""
    if connections != self._connections:
      self._watch(connections)
    poller, owner = self._poller, self._owner
    results = [None] * len(connections)
    pending, timeout, bounded = 0, None, True
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
    deadline = time.monotonic() + timeout if bounded and pending else None
    while pending:
      wait_ms = -1 if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
      ready = poller.poll(wait_ms)
      if not ready:
        break
      for fd, _ in ready:
        position = owner.get(fd)  # None: a descriptor unwatched earlier in this loop.
        if position is None:
          continue
        if results[position] is not None:
          # Out of turn (a reply already read, or a dead worker's descriptor, which
          # stays readable): stop watching it, and rebuild the set for the next wait.
          poller.unregister(fd)
          del owner[fd]
          self._connections = None
          continue
        results[position] = connections[position].settle(tokens[position])
        pending -= 1
    for position, result in enumerate(results):
      if result is None:
        results[position] = connections[position].settle(tokens[position])
    return results

  def _watch(self, connections):
    self._poller, self._owner = select.poll(), {}
    for position, connection in enumerate(connections):
      for fd in (connection.pipe_fileno(), connection.death_fileno()):
        self._owner[fd] = position
        self._poller.register(fd, select.POLLIN)
    self._connections = list(connections)
