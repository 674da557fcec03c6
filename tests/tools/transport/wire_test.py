"""Tests of agents/tools/transport/wire.py: every message survives its round trip."""

import pickle
import unittest

import numpy as np

from agents.tools import errors
from agents.tools.transport import wire


class WireTest(unittest.TestCase):

  def test_frame_is_length_then_payload(self):
    self.assertEqual(wire.frame(b'abc'), b'\x03\x00\x00\x00abc')
    self.assertEqual(wire.FAST_STEP_FRAME, wire.frame(wire.FAST_STEP))

  def test_fast_reset_round_trip(self):
    for indices, seeds in [([0], None), ([3, 1], None), ([0, 2, 5], [7, None, -2**63]),
                           ([4], [2**63 - 1]), ([], None)]:
      with self.subTest(indices=indices, seeds=seeds):
        payload = wire.encode_fast_reset(indices, seeds)
        self.assertEqual(payload[:1], wire.FAST_RESET)
        decoded_indices, decoded_seeds = wire.decode_fast_reset(payload)
        self.assertEqual(decoded_indices, indices)
        expected = None if seeds is None or all(s is None for s in seeds) else seeds
        self.assertEqual(decoded_seeds, expected)

  def test_fast_reset_fits_only_int32_positions_and_int64_seeds(self):
    self.assertTrue(wire.fast_reset_fits(None, None))
    self.assertTrue(wire.fast_reset_fits([0, 2**31 - 1], [None, -2**63]))
    self.assertFalse(wire.fast_reset_fits([2**31], None))
    self.assertFalse(wire.fast_reset_fits([0], [2**64]))

  def test_request_round_trip_carries_closures(self):
    offset = 3
    command, args = wire.decode_request(wire.encode_request('call', lambda x: x + offset, (1,)))
    self.assertEqual(command, 'call')
    self.assertEqual(args[0](1), 4)
    self.assertEqual(args[1], (1,))
    actions = np.arange(6).reshape(3, 2)
    command, args = wire.decode_request(wire.encode_step_request(actions))
    self.assertEqual(command, 'step')
    np.testing.assert_array_equal(args[0], actions)

  def test_reply_round_trip(self):
    self.assertEqual(wire.decode_reply(wire.encode_info_reply({})), (True, {}))
    self.assertEqual(wire.encode_info_reply({}), wire.FAST_STEP)
    self.assertEqual(wire.decode_reply(wire.encode_info_reply({'a': 1})), (True, {'a': 1}))
    for plain in [False, True]:
      ok, value = wire.decode_reply(wire.encode_reply((np.ones(2), 'x'), plain=plain))
      self.assertTrue(ok)
      np.testing.assert_array_equal(value[0], np.ones(2))
      self.assertEqual(value[1], 'x')

  def test_error_round_trip_keeps_type_message_traceback_and_cause(self):
    try:
      raise errors.NonFiniteError('reward', 2)
    except errors.NonFiniteError as error:
      payload = wire.encode_error(error)
    ok, (remote_type, text, remote_traceback, cause) = wire.decode_reply(payload)
    self.assertFalse(ok)
    self.assertEqual(remote_type, 'NonFiniteError')
    self.assertIn('environment 2', text)
    self.assertIn('wire_test.py', remote_traceback)
    self.assertIsInstance(cause, errors.NonFiniteError)
    self.assertEqual(cause.index, 2)

  def test_unpicklable_error_travels_as_text(self):
    class LocalError(Exception):
      pass
    try:
      raise LocalError('only here')
    except LocalError as error:
      payload = wire.encode_error(error)
    ok, (remote_type, text, _, cause) = wire.decode_reply(payload)
    self.assertEqual((ok, remote_type, text, cause), (False, 'LocalError', 'only here', None))

  def test_pickled_messages_never_start_like_a_fast_message(self):
    for payload in [wire.encode_request('close'), wire.encode_reply(None),
                    pickle.dumps(('ok', 1))]:
      self.assertNotIn(payload[:1], (wire.FAST_STEP, wire.FAST_STEP_INFO, wire.FAST_RESET))


if __name__ == '__main__':
  unittest.main()
