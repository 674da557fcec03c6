"""Starting a worker process and stopping it, boundedly, whatever state it is in.

Workers start with `forkserver` (or `spawn`), never `fork`, because forking a
process that has loaded TensorFlow is unsafe. The forkserver preloads the
worker's modules once, so every worker it forks starts warm, and workers never
re-import the parent's main script (`main_module_hidden`), so a training
script's TensorFlow import stays out of them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
from collections.abc import Iterator
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any

import gymnasium

from agents import plugins
from agents.tools import interrupts
from agents.tools.transport import channel as channel_lib
from agents.tools.transport import wire
from agents.tools.transport import worker as worker_lib

# Modules the forkserver imports once, so every worker it forks starts warm (`preload`
# loads the plug-ins too; `preload_environment` adds an environment's own).
FORKSERVER_PRELOAD = ['numpy', 'gymnasium', 'cloudpickle', 'agents.tools.transport.worker',
                      'agents.tools.transport.preload']


def default_context() -> str:
  """Returns the start method used when none is given: forkserver where available, else spawn."""
  methods = multiprocessing.get_all_start_methods()
  return 'forkserver' if 'forkserver' in methods else 'spawn'


def preload_environment(env_id: str) -> None:
  """Adds what `env_id`'s plug-in preloads for its workers (`worker_preloads`) to
  the forkserver's preload, so that every worker forked for it starts warm.

  Call it before the process's first worker starts: a forkserver already running keeps the
  modules it started with (its workers then load what they need themselves, as before).
  """
  for module in plugins.environment_plugin(env_id).worker_preloads:
    if module not in FORKSERVER_PRELOAD:
      FORKSERVER_PRELOAD.append(module)


def get_context(name: str | None) -> BaseContext:
  """Returns the multiprocessing context of a start method; refuses 'fork'.

  Raises:
    ValueError: `name` is 'fork'.
  """
  name = name or default_context()
  if name == 'fork':
    raise ValueError(
        "ExternalProcess refuses the 'fork' start method: forking after TensorFlow is loaded "
        "can deadlock. Use 'forkserver' or 'spawn'.")
  context = multiprocessing.get_context(name)
  if name == 'forkserver':
    context.set_forkserver_preload(FORKSERVER_PRELOAD)
  return context


_snapshot_cache: dict[str, Any] = {}  # The last snapshot, reused while the registry is unchanged.


def registry_snapshot() -> list[bytes]:
  """Returns the parent's Gymnasium registrations beyond Gymnasium's own, cloudpickled.

  Workers add the ids they lack, so an environment registered in the parent (by an
  import, or by the user's script) resolves in `gymnasium.make` inside the worker too.
  """
  key = tuple((env_id, id(spec)) for env_id, spec in gymnasium.registry.items())
  if _snapshot_cache.get('key') == key:
    return _snapshot_cache['specs']
  specs = []
  for spec in gymnasium.registry.values():
    entry = spec.entry_point if isinstance(spec.entry_point, str) else ''
    if entry.startswith('gymnasium.'):
      continue
    try:
      specs.append(wire.dumps(spec))
    except Exception:  # noqa: BLE001 - an unpicklable registration stays the parent's own.
      continue
  _snapshot_cache.update(key=key, specs=specs)
  return specs


def start_worker(context: BaseContext, constructor_bytes: bytes, registry: list[bytes],
                 name: str) -> tuple[BaseProcess, channel_lib.Channel]:
  """Starts a worker process serving the environment that `constructor_bytes` builds.

  Args:
    context: A multiprocessing context from `get_context`.
    constructor_bytes: The cloudpickled environment constructor.
    registry: Gymnasium registrations for the worker, from `registry_snapshot`.
    name: The process's name.

  Returns:
    The `multiprocessing.Process` and the parent's non-blocking `Channel` to it.
  """
  request_reader, request_writer = context.Pipe(duplex=False)
  reply_reader, reply_writer = context.Pipe(duplex=False)
  process = context.Process(  # type: ignore[attr-defined]  # every context has Process
      target=worker_lib.run,
      args=(request_reader, reply_writer, constructor_bytes, os.getpid(), registry),
      daemon=True, name=name)
  # An abort half-way through the hand-over of the pipes would leave the forkserver
  # reading half a message (it prints a traceback of its own): it waits for the start.
  with interrupts.deferred_abort():
    with main_module_hidden():
      process.start()
    # Only the worker may hold its ends: once it exits, our reads see EOF at once, and
    # once we exit, its watchdog sees the request pipe hang up.
    request_reader.close()
    reply_writer.close()
  return process, channel_lib.Channel(reply_reader, request_writer, blocking=False)


def death_fileno(process: BaseProcess) -> tuple[int, bool]:
  """Returns a descriptor that becomes readable when `process` ends, and whether we own it.

  On Linux, a pidfd of the worker: it fires when the worker exits even if a process
  it forked still holds its pipes. Elsewhere, multiprocessing's sentinel.
  """
  try:
    return os.pidfd_open(process.pid), True  # type: ignore[arg-type]  # it has started
  except (AttributeError, OSError):
    return process.sentinel, False


def stop_process(process: BaseProcess, channel: channel_lib.Channel, timeout: float,
                 death_fd: int | None = None) -> None:
  """Asks the worker to close, then escalates to SIGTERM and SIGKILL; bounded in time.

  Args:
    process: The worker's `multiprocessing.Process`.
    channel: The parent's `Channel` to it; closed at the end.
    timeout: Seconds to wait for a clean exit before SIGTERM.
    death_fd: A descriptor from `death_fileno` that we own, closed at the end.
  """
  # Gone already, or the pipe is full of unread replies: terminate below.
  channel.try_send_frame(wire.frame(wire.encode_request('close')))
  process.join(timeout)
  if process.is_alive():
    process.terminate()
    process.join(1.0)
  if process.is_alive():
    process.kill()
    process.join(1.0)
  channel.close()
  if death_fd is not None:
    os.close(death_fd)


@contextlib.contextmanager
def main_module_hidden() -> Iterator[None]:
  """Keeps multiprocessing from re-importing the parent's main script in the worker.

  A spawned or forkserver child normally imports the parent's `__main__` first, which
  re-runs that script's top-level imports (TensorFlow, in a training script: seconds
  and hundreds of megabytes per worker) and recurses into a script that lacks an
  `if __name__ == '__main__'` guard. The worker needs nothing from it: cloudpickle
  ships functions and classes of `__main__` by value.
  """
  main = sys.modules.get('__main__')
  if main is None:
    yield
    return
  saved = {name: getattr(main, name) for name in ('__spec__', '__file__') if hasattr(main, name)}
  try:
    main.__spec__ = None
    if hasattr(main, '__file__'):
      del main.__file__
    yield
  finally:
    for name, value in saved.items():
      setattr(main, name, value)
