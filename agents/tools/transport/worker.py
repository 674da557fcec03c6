"""The worker process: builds the environment, then serves requests until told to stop.

`run` is one loop: read a request, do it, write the reply. The hot path is a
one-byte message: step (or reset) the slab with the actions in shared memory and
write the results there too (`make_fast_step`, `make_fast_reset`). Any exception
goes back to the parent with its traceback; the worker keeps serving.

A worker never outlives its parent. When the parent exits while the worker is
idle, the worker's read sees the request pipe close. When the parent dies while
the worker is busy inside a long or hung `env.step`, a watchdog thread
(`agents.tools.parent_watch`) notices (the request pipe hangs up, or the parent's
pidfd becomes readable), unlinks the
shared-memory blocks the worker mapped (the parent that created them is gone),
and ends the process. The forkserver and the resource tracker then exit by
themselves, since nothing holds them any more.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from multiprocessing import shared_memory
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle
import gymnasium
import numpy as np

from agents import plugins
from agents.tools import parent_watch
from agents.tools import slab as slab_lib
from agents.tools.transport import channel as channel_lib
from agents.tools.transport import shared_block, wire

# Exit code of a worker ended by its watchdog because the parent died.
ORPHAN_EXIT_CODE = 75


def run(reader: Connection, writer: Connection, constructor_bytes: bytes, parent_pid: int,
        registry: list[bytes]) -> None:
  """Body of the worker process.

  Args:
    reader: The read end of the request pipe.
    writer: The write end of the reply pipe.
    constructor_bytes: The cloudpickled environment constructor.
    parent_pid: Process id of the parent, watched for its death.
    registry: The parent's Gymnasium registrations (`launch.registry_snapshot`).
  """
  # The parent decides when workers stop, and they leave as soon as it closes the
  # pipe or dies. A signal sent to the parent's whole process group (Ctrl+C in a
  # terminal, SIGTERM from a scheduler such as SLURM) must not kill them before the
  # parent has saved its checkpoint: leave the group, and ignore SIGINT in case a
  # caller signals the worker itself.
  os.setpgid(0, 0)
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  channel = channel_lib.Channel(reader, writer, blocking=True)
  blocks: list[shared_memory.SharedMemory] = []  # The shared-memory blocks mapped, newest last.
  # The request pipe hangs up when the parent's end closes (the kernel closes it when
  # the parent dies); the parent's pid tells even when another process holds the pipe.
  watchdog = parent_watch.ParentWatch(parent_pid, functools.partial(_orphaned, blocks),
                                      hangup_fd=channel.fileno(), name='parent-watchdog')
  watchdog.start()
  install_registry(registry)
  slab: Any = None  # Built by the 'spaces' request, the first of every worker.
  fast_step: Any = None
  fast_reset: Any = None
  parent_gone = False
  try:
    while True:
      try:
        message = channel.receive()
      except (EOFError, OSError):
        parent_gone = True  # Exit, crash, SIGTERM or SIGKILL of the parent: do not linger.
        break
      try:
        if message == wire.FAST_STEP or message[:1] == wire.FAST_RESET:
          if message == wire.FAST_STEP:
            info = fast_step()  # pylint: disable=not-callable
          else:
            info = fast_reset(*wire.decode_fast_reset(message))  # pylint: disable=not-callable
          if info:
            channel.send(wire.encode_info_reply(info))
          else:
            channel.send_frame(wire.FAST_STEP_FRAME)  # The hot path: one byte, framed.
          continue
        command, args = wire.decode_request(message)
        if command == 'close':
          break
        if command == 'step':
          reply = wire.encode_reply(slab.step(*args), plain=True)
        elif command == 'spaces':
          slab = slab_lib.Slab(cloudpickle.loads(constructor_bytes)())
          reply = wire.encode_reply((slab.num_envs, slab.is_vector, slab.observation_space,
                                     slab.action_space, public_attributes(slab.env)))
        elif command == 'attach':
          fast_step = fast_reset = None
          fast_step, fast_reset = _attach(slab, blocks, *args)
          reply = wire.encode_reply(None)
        else:
          reply = wire.encode_reply(serve(slab, command, args))
        channel.send(reply)
      except Exception as error:  # noqa: BLE001 - every failure goes back to the parent.
        channel.send(wire.encode_error(error))
  finally:
    watchdog.stop()
    if parent_gone:
      _release(blocks, unlink=True)
    if slab is not None:
      try:
        slab.close()
      except Exception:  # noqa: BLE001 - closing is best effort on the way out.
        traceback.print_exc()
    fast_step = fast_reset = None
    _release(blocks, unlink=False)
    channel.close()


def _orphaned(blocks: list[shared_memory.SharedMemory]) -> None:
  """The watchdog's end of a worker whose parent died: unlink its blocks (the parent that
  created them is gone) and exit."""
  _release(blocks, unlink=True)
  os._exit(ORPHAN_EXIT_CODE)


def install_registry(registry: list[bytes]) -> None:
  """Registers the plug-ins' Gymnasium ids and the parent's registrations this process
  lacks, so an environment's id resolves in a worker even when the parent never made it."""
  load_plugins()
  for data in registry:
    try:
      spec = cloudpickle.loads(data)
    except Exception:  # noqa: BLE001 - e.g. an entry point from a module not importable here.
      continue
    gymnasium.registry.setdefault(spec.id, spec)


def load_plugins() -> None:
  """Loads the plug-ins (their Gymnasium ids among others) unless this process has: a
  worker forked by a forkserver that preloaded them (`preload`) starts with them."""
  try:
    plugins.load_plugins()
  except plugins.PluginError:
    pass  # A broken plug-in is reported where it is used, in the parent.


def public_attributes(env: Any) -> frozenset[str] | None:
  """The public attribute names of `env`, or None if its class forwards unknown names
  (defines `__getattr__`), so that the parent can refuse a typo without asking."""
  if getattr(type(env), '__getattr__', None) is not None:
    return None
  return frozenset(name for name in dir(env) if not name.startswith('_'))


def serve(slab: slab_lib.Slab, command: str, args: tuple[Any, ...]) -> Any:
  """Executes one pickled request other than step/spaces/attach/close."""
  if command == 'reset':
    seed, options = args
    result = slab.env.reset(seed=seed, options=options)
    slab.ended[:] = False
    return result
  if command == 'reset_batch':
    return slab.reset(*args)
  if command == 'call':
    name, call_args, call_kwargs = args
    return getattr(slab.env, name)(*call_args, **call_kwargs)
  if command == 'getattr':
    return getattr(slab.env, args[0])
  if command == 'setattr':
    name, value = args
    setattr(slab.env, name, value)
    return None
  raise ValueError(f'Unknown request {command!r}.')


def _attach(
    slab: slab_lib.Slab, blocks: list[shared_memory.SharedMemory], name: str,
    layout: shared_block.Layout,
) -> tuple[Callable[[], Any] | None, Callable[..., Any] | None]:
  """Maps the block `name` and returns the fast step and reset over its arrays."""
  memory = shared_memory.SharedMemory(name=name)
  previous = list(blocks)
  blocks[:] = [memory]
  for block in previous:
    shared_block.close_quietly(block)
  arrays = shared_block.views(memory.buf, layout)
  if not shared_block.supports_fast_step(arrays):
    return None, None
  return make_fast_step(slab, arrays), make_fast_reset(slab, arrays)


# The watchdog and the worker's own exit may release the blocks at the same moment (the
# parent gone, the pipe hung up): one of them does it, each block once.
_release_lock = threading.Lock()


def _release(blocks: list[shared_memory.SharedMemory], unlink: bool) -> None:
  with _release_lock:
    _release_unlocked(blocks, unlink)


def _release_unlocked(blocks: list[shared_memory.SharedMemory], unlink: bool) -> None:
  for memory in blocks:
    if unlink:
      try:
        memory.unlink()
      except (FileNotFoundError, OSError):
        pass
    shared_block.close_quietly(memory)
  del blocks[:]


def make_fast_step(slab: slab_lib.Slab, views: Mapping[str, np.ndarray]) -> Callable[[], Any]:
  """Returns a function that steps the slab with the actions in shared memory, writes the
  results there too, and returns the raw info."""
  actions, observ = views['actions'], views['observ']
  reward, terminated, truncated = views['reward'], views['terminated'], views['truncated']
  env, shape = slab.env, observ.shape

  ended = slab.ended

  def step_single() -> Any:
    # A plain environment: skip the slab's batching, this is the hot path.
    if ended[0]:
      slab.check_not_ended()
    result = env.step(actions[0].copy())
    value = result[0]
    if np.shape(value) != shape[1:]:
      raise ValueError(f'Observation of shape {np.shape(value)} does not match the '
                       f'observation space shape {shape[1:]}.')
    observ[0] = value
    reward[0], terminated[0], truncated[0] = result[1], result[2], result[3]
    if result[2] or result[3]:
      slab.record_ends(True, False)
    return result[4]

  def step_slab() -> Any:
    values, rewards, terminateds, truncateds, info = slab.step(actions.copy())
    if np.shape(values) != shape:
      raise ValueError(f'Observations of shape {np.shape(values)} do not match the slab '
                       f'shape {shape} (slab size, observation space shape).')
    observ[...] = values
    reward[...], terminated[...], truncated[...] = rewards, terminateds, truncateds
    return info

  return step_slab if slab.is_vector else step_single


def make_fast_reset(
    slab: slab_lib.Slab, views: Mapping[str, np.ndarray],
) -> Callable[[Any, Sequence[int | None] | None], Any]:
  """Returns a function that resets some environments of the slab, writes their
  observations to their rows of the shared `observ` array, and returns the infos (the raw
  info of a plain environment, vector format of the reset ones for a slab)."""
  observ = views['observ']
  env, shape = slab.env, observ.shape

  def reset_single(indices: Any, seeds: Sequence[int | None] | None) -> Any:
    # A plain environment: skip the slab's batching, resets are frequent.
    if indices != [0]:
      raise IndexError(f'A single environment has only index 0, got {indices}.')
    value, info = env.reset(seed=None if seeds is None else seeds[0])
    slab.ended[0] = False
    if np.shape(value) != shape[1:]:
      raise ValueError(f'Observation of shape {np.shape(value)} does not match the '
                       f'observation space shape {shape[1:]}.')
    observ[0] = value
    return info

  def reset_slab(indices: Any, seeds: Sequence[int | None] | None) -> Any:
    values, infos = slab.reset(indices, seeds)
    expected = (len(indices), *shape[1:])
    if np.shape(values) != expected:
      raise ValueError(f'Observations of shape {np.shape(values)} do not match the shape '
                       f'{expected} (environments reset, observation space shape).')
    observ[indices] = values
    return infos

  return reset_slab if slab.is_vector else reset_single
