"""The wire format between the parent and a worker: what every message's bytes are.

Every message on a pipe is a 4-byte little-endian length, then the payload
(`frame`). Framing by hand, instead of `Connection.send_bytes`, lets one
`read()` return a whole small message, so the hot path costs one system call
per direction.

Payloads:

- `FAST_STEP` (b'S'): request "step with the actions in shared memory"; as a
  reply, "the results are in shared memory, no info".
- `FAST_STEP_INFO` (b'I') + pickled info: reply "the results are in shared
  memory, here is the info".
- `FAST_RESET` (b'R') + header (count uint32, has-seeds uint8) + int32
  positions [+ uint8 has-seed mask + int64 seeds]: request "reset these slab
  positions and write their observations to their rows of the shared `observ`
  array". The reply is `FAST_STEP` or `FAST_STEP_INFO`, as for a step.
- Anything else is a pickle (which always starts with b'\\x80'): a request
  `(command, *args)`, or a reply `('ok', value)` / `('error', payload)` with
  payload `(type name, message, formatted traceback, pickled exception or
  None)`.
"""

from __future__ import annotations

import collections
import io
import pickle
import struct
import traceback
import types
from collections.abc import Sequence
from typing import Any

import cloudpickle
import numpy as np

FAST_STEP = b'S'
FAST_STEP_INFO = b'I'
FAST_RESET = b'R'
_FAST_RESET_HEADER = struct.Struct('<IB')

HEADER = struct.Struct('<I')

FAST_STEP_FRAME = HEADER.pack(1) + FAST_STEP  # The whole hot-path message, framed.

_INT32 = np.iinfo(np.int32)
_INT64 = np.iinfo(np.int64)
_FAST_RESET_FIRST = FAST_RESET + _FAST_RESET_HEADER.pack(1, 0) + struct.pack('<i', 0)


def frame(payload: bytes) -> bytes:
  """Returns a message as it travels on the pipe: its length, then the payload."""
  return HEADER.pack(len(payload)) + payload


def fast_reset_fits(indices: Sequence[int] | np.ndarray | None,
                    seeds: Sequence[int | None] | None) -> bool:
  """Returns whether a reset can be packed by `encode_fast_reset`.

  Args:
    indices: Positions (ints) to reset, or None for all.
    seeds: One int or None per position, or None.
  """
  if indices is not None and len(indices) and not (
      _INT32.min <= min(indices) and max(indices) <= _INT32.max):
    return False
  return seeds is None or all(
      seed is None or _INT64.min <= seed <= _INT64.max for seed in seeds)


def encode_fast_reset(indices: Sequence[int] | np.ndarray,
                      seeds: Sequence[int | None] | None = None) -> bytes:
  """Packs a fast reset request (see the module docstring).

  Args:
    indices: Positions within the slab to reset, in the order of the reply's infos.
    seeds: One int or None per position, or None; each must fit int64.

  Returns:
    The payload bytes.
  """
  if seeds is None and len(indices) == 1 and indices[0] == 0:
    return _FAST_RESET_FIRST  # A plain environment's reset, the common case.
  indices = np.asarray(indices, np.int32)
  if seeds is None or all(seed is None for seed in seeds):
    return FAST_RESET + _FAST_RESET_HEADER.pack(len(indices), 0) + indices.tobytes()
  mask = np.array([seed is not None for seed in seeds], np.uint8)
  values = np.array([0 if seed is None else seed for seed in seeds], np.int64)
  return (FAST_RESET + _FAST_RESET_HEADER.pack(len(indices), 1) + indices.tobytes()
          + mask.tobytes() + values.tobytes())


def decode_fast_reset(payload: bytes) -> tuple[np.ndarray | None, list[int | None] | None]:
  """Unpacks a fast reset request into (positions, seeds or None)."""
  count, has_seeds = _FAST_RESET_HEADER.unpack_from(payload, 1)
  offset = 1 + _FAST_RESET_HEADER.size
  indices = np.frombuffer(payload, np.int32, count, offset).tolist()
  if not has_seeds:
    return indices, None
  offset += 4 * count
  mask = np.frombuffer(payload, np.uint8, count, offset)
  values = np.frombuffer(payload, np.int64, count, offset + count)
  return indices, [int(value) if present else None for present, value in zip(mask, values)]


_DYNAMIC_CODE_FILENAME = '<dynamic-code>'


def _reduce_code_keeping_filename(code: types.CodeType) -> tuple[Any, tuple[Any, ...]]:
  """cloudpickle's reduction of a code object, with the code's own file name kept.

  cloudpickle >= 3.1 renames the file of code it ships by value (a lambda, a class of
  the user's `__main__`) to '<dynamic-code>', so a worker's traceback would lose the
  user's file and source line. The worker runs on this machine, so the file name lets
  its traceback read the line from the user's file.
  """
  constructor, args = cloudpickle.Pickler.dispatch_table[types.CodeType](code)
  return constructor, tuple(code.co_filename if arg == _DYNAMIC_CODE_FILENAME else arg
                            for arg in args)


class _SourceKeepingPickler(cloudpickle.Pickler):
  """cloudpickle's pickler, but code shipped by value keeps its file name."""

  dispatch_table = collections.ChainMap({types.CodeType: _reduce_code_keeping_filename},
                                        cloudpickle.Pickler.dispatch_table)


def dumps(value: Any) -> bytes:
  """Pickles `value` as cloudpickle does (lambdas and local classes travel), keeping the
  file names of shipped code so that a worker's traceback shows the user's source line."""
  buffer = io.BytesIO()
  _SourceKeepingPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
  return buffer.getvalue()


def encode_request(command: str, *args: Any) -> bytes:
  """Packs a pickled request; cloudpickle, so lambdas and closures travel too."""
  return dumps((command, *args))


def encode_step_request(actions: Any) -> bytes:
  """Packs a step whose actions travel in the message (no shared memory)."""
  return pickle.dumps(('step', actions), pickle.HIGHEST_PROTOCOL)


def decode_request(payload: bytes) -> tuple[str, tuple[Any, ...]]:
  """Returns `(command, args)` of a pickled request."""
  command, *args = pickle.loads(payload)
  return command, args


def encode_info_reply(info: dict[str, Any] | None) -> bytes:
  """Packs the reply to a fast step or reset: one byte, or the byte and the info."""
  if info:
    return FAST_STEP_INFO + pickle.dumps(info, pickle.HIGHEST_PROTOCOL)
  return FAST_STEP


def encode_reply(value: Any, plain: bool = False) -> bytes:
  """Packs a successful reply.

  Args:
    value: The result.
    plain: Whether plain pickle suffices (a step's arrays), which is faster than
      cloudpickle; otherwise cloudpickle, so spaces holding functions travel.
  """
  if plain:
    return pickle.dumps(('ok', value), pickle.HIGHEST_PROTOCOL)
  return dumps(('ok', value))


def encode_error(error: BaseException) -> bytes:
  """Packs an exception raised in the worker, with its traceback as text.

  Call it inside the `except` block, so the traceback is the error's.
  """
  try:
    original = pickle.dumps(error)
  except Exception:  # noqa: BLE001 - unpicklable exceptions still travel as text.
    original = None
  payload = (type(error).__name__, str(error), traceback.format_exc(), original)
  return pickle.dumps(('error', payload))


def decode_reply(payload: bytes) -> tuple[bool, Any]:
  """Unpacks a reply.

  Returns:
    `(True, value)`, where a fast step's or reset's value is its raw info (`{}`
    when none travelled), or `(False, (type name, message, traceback, cause))`
    with the worker's exception rebuilt as `cause`, or None when it cannot be.
  """
  head = payload[:1]
  if head == FAST_STEP:
    return True, {}
  if head == FAST_STEP_INFO:
    return True, pickle.loads(payload[1:])
  status, value = pickle.loads(payload)
  if status == 'ok':
    return True, value
  remote_type, text, remote_traceback, original = value
  return False, (remote_type, text, remote_traceback, _unpickle_or_none(original))


def _unpickle_or_none(data: bytes | None) -> Any:
  if data is None:
    return None
  try:
    return pickle.loads(data)
  except Exception:  # noqa: BLE001 - a cause that cannot be rebuilt is simply left out.
    return None
