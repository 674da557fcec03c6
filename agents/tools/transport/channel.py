"""Length-prefixed messages over two one-way pipes, one in each direction.

Two pipes rather than one socket pair: a reader blocked on a socket is also
woken whenever its peer drains the socket's other direction, which costs every
worker a second context switch per step; a pipe's readers and writers wait
apart. The parent uses its channel non-blocking, so it can bound every wait and
notice dead workers; the worker uses its channel blocking, so it sleeps until
the next request.
"""

from __future__ import annotations

import os
import select
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from agents.tools.transport import wire

# How often a write blocked on a full pipe checks that the worker still lives, in seconds.
_FULL_PIPE_CHECK_S = 0.1


class Channel:
  """One end of a worker's two pipes: reads messages from one, writes to the other."""

  def __init__(self, reader: Connection, writer: Connection, blocking: bool) -> None:
    """Wraps two `multiprocessing.connection.Connection` ends (they own the descriptors).

    Args:
      reader: The end messages are read from.
      writer: The end messages are written to.
      blocking: Whether reads block (the worker) or return at once (the parent).
    """
    self._reader, self._writer = reader, writer
    self._fd = reader.fileno()
    self._write_fd = writer.fileno()
    os.set_blocking(self._fd, blocking)
    os.set_blocking(self._write_fd, blocking)
    self._buffer = bytearray()

  def fileno(self) -> int:
    """The file descriptor messages are read from."""
    return self._fd

  def has_buffered(self) -> bool:
    """Whether bytes already read wait in the buffer."""
    return bool(self._buffer)

  def take_fast(self) -> bytes | None:
    """Reads once and returns the message if it is the common one-byte step message.

    Returns None when nothing has arrived or the data is anything else (then it is
    buffered for `take`).

    Raises:
      EOFError: The other end is closed.
    """
    if self._buffer:
      return None
    try:
      chunk = os.read(self._fd, 1 << 16)
    except BlockingIOError:
      return None
    if chunk == wire.FAST_STEP_FRAME:
      return wire.FAST_STEP
    if not chunk:
      raise EOFError('the other end of the pipe is closed')
    self._buffer += chunk
    return None

  def take(self) -> bytes | None:
    """Returns the next complete message from the buffer, or None."""
    buffer = self._buffer
    if len(buffer) < 4:
      return None
    size = wire.HEADER.unpack_from(buffer)[0]
    if len(buffer) < 4 + size:
      return None
    message = bytes(buffer[4:4 + size])
    del buffer[:4 + size]
    return message

  def fill(self) -> bool:
    """Reads what has arrived; returns False if nothing had (non-blocking end).

    Raises:
      EOFError: The other end is closed.
    """
    try:
      chunk = os.read(self._fd, max(1 << 16, self._missing()))
    except BlockingIOError:
      return False
    if not chunk:
      raise EOFError('the other end of the pipe is closed')
    self._buffer += chunk
    return True

  def receive(self) -> bytes:
    """Blocks until a whole message has arrived and returns it (blocking end)."""
    message = self.take_fast()
    if message is not None:
      return message
    while True:
      message = self.take()
      if message is not None:
        return message
      self.fill()

  def send(self, payload: bytes, process: BaseProcess | None = None) -> None:
    """Writes one message; see `send_frame`."""
    self.send_frame(wire.FAST_STEP_FRAME if payload == wire.FAST_STEP else wire.frame(payload),
                    process)

  def send_frame(self, data: bytes, process: BaseProcess | None = None) -> None:
    """Writes one message already framed by `wire.frame`.

    On the non-blocking end, keeps reading while the pipe is full, so two large
    messages crossing each other cannot deadlock.

    Args:
      data: The framed message.
      process: The peer's `multiprocessing.Process`, if known: a full pipe whose peer
        died raises BrokenPipeError instead of waiting forever.
    """
    try:
      written = os.write(self._write_fd, data)
    except BlockingIOError:
      written = 0
    if written == len(data):
      return  # Always so for short messages while the pipe has room: one system call.
    rest = memoryview(data)[written:]
    while rest:
      try:
        rest = rest[os.write(self._write_fd, rest):]
      except BlockingIOError:
        ready = select.select([self._fd], [self._write_fd], [], _FULL_PIPE_CHECK_S)
        if ready[0]:
          self.fill()
        if not ready[1] and process is not None and not process.is_alive():
          raise BrokenPipeError('the worker process is gone') from None

  def try_send_frame(self, data: bytes) -> bool:
    """Writes a framed message if the pipe takes it at once; returns whether it did."""
    try:
      return os.write(self._write_fd, data) == len(data)
    except (OSError, ValueError):
      return False

  def close(self) -> None:
    """Closes both pipe ends."""
    self._reader.close()
    self._writer.close()

  def _missing(self) -> int:
    if len(self._buffer) < 4:
      return 0
    return 4 + wire.HEADER.unpack_from(self._buffer)[0] - len(self._buffer)
