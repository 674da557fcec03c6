"""Tests of agents/tools/transport/channel.py: framed messages over two one-way pipes."""

import multiprocessing
import threading
import unittest

from agents.tools.transport import channel as channel_lib
from agents.tools.transport import wire


def channel_pair():
  """Returns a non-blocking (parent) and a blocking (worker) end joined by two pipes."""
  request_reader, request_writer = multiprocessing.Pipe(duplex=False)
  reply_reader, reply_writer = multiprocessing.Pipe(duplex=False)
  parent = channel_lib.Channel(reply_reader, request_writer, blocking=False)
  worker = channel_lib.Channel(request_reader, reply_writer, blocking=True)
  return parent, worker


class ChannelTest(unittest.TestCase):

  def setUp(self):
    self.parent, self.worker = channel_pair()
    self.addCleanup(self.parent.close)
    self.addCleanup(self.worker.close)

  def test_fast_step_message_is_recognised_in_one_read(self):
    self.parent.send(wire.FAST_STEP)
    self.assertIs(self.worker.receive(), wire.FAST_STEP)
    self.worker.send_frame(wire.FAST_STEP_FRAME)
    self.assertIs(self.parent.take_fast(), wire.FAST_STEP)
    self.assertIsNone(self.parent.take_fast())  # Nothing more: a non-blocking miss.

  def test_messages_keep_their_boundaries(self):
    for payload in [b'a', b'', b'xyz' * 1000]:
      self.worker.send(payload)
    received = []
    while len(received) < 3:
      message = self.parent.take()
      if message is None:
        self.parent.fill()
      else:
        received.append(message)
    self.assertEqual(received, [b'a', b'', b'xyz' * 1000])

  def test_messages_beyond_the_pipe_buffer_arrive_whole(self):
    big = b'p' * (4 << 20)  # Far beyond the pipe buffer: written while being read.
    echoed = []
    thread = threading.Thread(target=lambda: echoed.append(self.worker.receive()))
    thread.start()
    self.parent.send(big)
    thread.join(10)
    self.assertEqual(echoed, [big])

  def test_closed_peer_reads_as_end_of_file(self):
    self.worker.close()
    with self.assertRaises(EOFError):
      while True:
        self.parent.fill()


if __name__ == '__main__':
  unittest.main()
