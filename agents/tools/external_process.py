"""Runs an environment, or a slab of several, in its own OS process.

The parent forwards `step`, `reset`, `close`, method calls and attribute access
over pipes. `step` and `reset` can be non-blocking and return a promise;
promises may be resolved in any order and each still gets its own reply.

Speed: when the spaces hold plain arrays (Box, Discrete, MultiDiscrete,
MultiBinary), a step moves actions, observations, rewards and done flags
through one shared-memory block per worker and the pipes carry a single byte
each way, so nothing is pickled on the hot path and each side makes one system
call per direction. Requests and replies travel on two one-way pipes, so a
worker sleeping on its next request is not woken when the parent reads a reply.
`wait_all` gathers the replies of many workers with one poll. A reset of some
environments writes their observations into the same block; the request carries
only the packed indices (and seeds) and the reply a single byte, unless there is
an info. A worker may host a slab of K environments (a `gymnasium.vector.VectorEnv`
with autoreset disabled), so the cost of crossing processes is paid once per
slab.

Faults: an exception in the worker re-raises in the parent as `WorkerError`
with the worker's traceback and the environment index. A worker that dies is
noticed at once (its end of the reply pipe closes) or, failing that, by a liveness
check every fraction of a second, and reported as `WorkerDiedError`; a worker
that stops answering for `timeout` seconds is killed and reported as
`WorkerTimeoutError`. Workers exit by themselves when the parent goes away, so
neither an exception, SIGINT nor SIGTERM of the parent leaves orphans.

Workers start with `forkserver` (or `spawn`), never `fork`, because forking a
process that has loaded TensorFlow is unsafe. The constructor travels with
cloudpickle, so lambdas and closures work, and workers do not re-import the
parent's main script (so a training script's TensorFlow import stays out of
them).
"""

import collections
import contextlib
import multiprocessing
import os
import pickle
import select
import signal
import struct
import sys
import time
import traceback
import weakref
from multiprocessing import shared_memory

import cloudpickle
import numpy as np

from agents.tools import errors
from agents.tools import slab as slab_lib

# Short messages of the hot path. A pickle always starts with b'\x80', so the
# receiver tells them apart from pickled messages by the first byte.
_FAST_STEP = b'S'  # Request: actions are in shared memory. Reply: results are, no info.
_FAST_STEP_INFO = b'I'  # Reply: results are in shared memory, the pickled info follows.
# Request: reset the environments whose slab positions follow; the observations go to
# their rows of the shared `observ` array. Layout: b'R', _FAST_RESET_HEADER (count,
# whether seeds follow), int32 positions, then with seeds a uint8 has-seed mask and
# int64 seeds. The reply is _FAST_STEP or _FAST_STEP_INFO, as for a step.
_FAST_RESET = b'R'
_FAST_RESET_HEADER = struct.Struct('<IB')

# Every message on the pipe is a 4-byte little-endian length and the payload. Framing
# by hand (instead of Connection.send_bytes) lets one read() return a whole small
# message, so the hot path costs one system call per direction.
_HEADER = struct.Struct('<I')

_FAST_STEP_FRAME = struct.pack('<I', 1) + _FAST_STEP  # The whole hot-path message, framed.

# How often a blocked read checks that the worker is still alive, in milliseconds.
_LIVENESS_POLL_MS = 100

# Modules the forkserver imports once, so every worker it forks starts warm.
_FORKSERVER_PRELOAD = ['numpy', 'gymnasium', 'cloudpickle', 'agents.tools.external_process']


def default_context():
  """Returns the start method used when none is given: forkserver where available, else spawn."""
  methods = multiprocessing.get_all_start_methods()
  return 'forkserver' if 'forkserver' in methods else 'spawn'


class Promise:
  """The pending reply of a non-blocking request; call it to wait for the result."""

  def __init__(self, process, sequence):
    self._process = process
    self._sequence = sequence

  def __call__(self):
    return self._process._resolve(self._sequence)


class ExternalProcess:
  """Hosts an environment (or a slab of environments) in a separate process.

  Attributes:
    index: Batch index of the (first) environment this worker hosts; used in errors.
    num_envs: Number of environments the worker hosts (1 for a plain environment).
    is_vector: Whether the hosted environment is a `VectorEnv` slab.
    observation_space: Observation space of one environment.
    action_space: Action space of one environment.
  """

  def __init__(self, constructor, index=0, context=None, timeout=600.0, start_timeout=120.0,
               close_timeout=5.0, use_shared_memory=True, wait=True):
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
    self.index = index
    self._closed = False
    context = context or default_context()
    if context == 'fork':
      raise ValueError(
          "ExternalProcess refuses the 'fork' start method: forking after TensorFlow is loaded "
          "can deadlock. Use 'forkserver' or 'spawn'.")
    self._context = multiprocessing.get_context(context)
    if context == 'forkserver':
      self._context.set_forkserver_preload(_FORKSERVER_PRELOAD)
    self._constructor_bytes = cloudpickle.dumps(constructor)
    self._timeout = timeout
    self._start_timeout = start_timeout
    self._close_timeout = close_timeout
    self._use_shared_memory = use_shared_memory
    self._spaces = None
    self._memory = None
    self._views = None
    self._memory_finalizer = None
    self._process = None
    self._spaces_promise = None
    self.num_envs = 1
    self.is_vector = False
    self._launch()
    if wait:
      try:
        self.wait_ready()
      except BaseException:
        self.close()
        raise

  # Public interface: mirrors gymnasium.Env (or VectorEnv) on the hosted environment.

  @property
  def pid(self):
    """Process id of the current worker."""
    return self._process.pid

  def is_alive(self):
    """Returns whether the worker process is running."""
    return self._process is not None and self._process.is_alive()

  def step(self, action, blocking=True):
    """Forwards `env.step(action)`.

    Args:
      action: One action, or a batch of `num_envs` actions for a vector slab.
      blocking: Whether to wait for the result or return a promise.

    Returns:
      The environment's `(observ, reward, terminated, truncated, info)`, or a promise.
    """
    if self.is_vector:
      return self._step(action, copy=True, finish=lambda result: result, blocking=blocking)
    return self._step(
        slab_lib.batch_single(self.action_space, action), copy=True, finish=_unbatch_step,
        blocking=blocking)

  def reset(self, seed=None, options=None, blocking=True):
    """Forwards `env.reset(seed=seed, options=options)`; returns `(observ, info)` or a promise."""
    return self._request(('reset', seed, options), 'resetting', blocking=blocking)

  def step_batch(self, actions, blocking=True, copy=True):
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

    def finish(result):
      observ, reward, terminated, truncated, info = result
      infos = slab_lib.vector_infos(info, num_envs, is_vector)
      return observ, reward, terminated, truncated, infos

    return self._step(actions, copy=copy, finish=finish, blocking=blocking)

  def reset_batch(self, indices=None, seeds=None, blocking=True):
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
    if self.supports_fast_step and not self._outstanding and fast_reset_fits(indices, seeds):
      # Shared memory holds one request at a time; resets queued behind others are pickled.
      local = np.arange(self.num_envs) if indices is None else np.asarray(indices, np.int64)
      observ, num_envs, is_vector = self._views['observ'], self.num_envs, self.is_vector

      def read_shared(info):
        return observ[local], slab_lib.vector_infos(info, num_envs, is_vector)

      promise = self._send(encode_fast_reset(local, seeds), 'resetting', read_shared)
      return promise() if blocking else promise
    return self._request(('reset_batch', indices, seeds), 'resetting', blocking=blocking)

  def attach_shared_block(self, memory, layout):
    """Moves this worker's shared arrays into a block owned by the caller.

    BatchEnv gives every worker a slice of one block, so a batch step writes all actions
    and reads all observations with one copy each. The caller keeps `memory` alive and
    releases it after closing this process.

    Args:
      memory: A `multiprocessing.shared_memory.SharedMemory`.
      layout: Dict field -> (byte offset, shape, dtype string) for the fields of
        `shared_layout`, with shapes of this worker's `num_envs`.
    """
    self._check_open()
    self._request(('attach', memory.name, layout), 'attaching shared memory')
    self._views = None
    if self._memory_finalizer is not None:
      self._memory_finalizer()
    self._memory, self._layout, self._memory_finalizer = memory, layout, None
    self._views = views(memory.buf, layout)
    self._fast_step = 'actions' in self._views and 'observ' in self._views

  @property
  def supports_fast_step(self):
    """Whether steps can move actions and results through shared memory alone."""
    return self._views is not None and self._fast_step

  def begin_fast_step(self):
    """Asks the worker to step with the actions already in its shared `actions` array.

    The hot path of BatchEnv: no pickling and no promise object. Pair every call with
    `end_fast_step`; the results appear in the shared arrays.

    Returns:
      A token for `end_fast_step`.
    """
    return self._send_fast(_FAST_STEP_FRAME, 'stepping')

  def _send_fast(self, frame, what):
    """Sends a framed shared-memory request and registers its reply; returns the token."""
    sequence = self._next_sequence
    self._next_sequence = sequence + 1
    self._outstanding.append((sequence, what, None, self._timeout))
    if self._dead is None and not self._closed:
      try:
        self._channel.send_frame(frame, self._process)
      except OSError:
        pass  # The worker is gone; reading its reply reports that with the exit code.
    return sequence

  def end_fast_step(self, token):
    """Waits for the step begun by `begin_fast_step` and returns the raw info.

    Raises:
      WorkerError: The environment raised. WorkerDiedError: the worker died.
    """
    return self._resolve(token)

  def begin_fast_reset(self, message):
    """Asks the worker to reset environments and write their observations to shared memory.

    The reset counterpart of `begin_fast_step`: the observations appear in the rows of
    the shared `observ` array named by the request. Pair every call with
    `end_fast_reset`.

    Args:
      message: The request, from `encode_fast_reset` (check `fast_reset_fits` first).

    Returns:
      A token for `end_fast_reset`.
    """
    return self._send_fast(frame(message), 'resetting')

  def end_fast_reset(self, token):
    """Waits for the reset begun by `begin_fast_reset`.

    Returns:
      The infos of the reset environments in vector format, in the order requested.

    Raises:
      WorkerError: The environment raised. WorkerDiedError: the worker died.
    """
    return slab_lib.vector_infos(self._resolve(token), self.num_envs, self.is_vector)

  def call(self, name, *args, **kwargs):
    """Calls a method of the hosted environment and returns its result."""
    return self._request(('call', name, args, kwargs), f'calling {name}()')

  def set_attribute(self, name, value):
    """Sets an attribute of the hosted environment."""
    return self._request(('setattr', name, value), f'setting {name}')

  def __getattr__(self, name):
    # Only reached for names this object lacks; private names never go remote, so
    # pickling, copying and half-built objects behave.
    if name.startswith('_'):
      raise AttributeError(name)
    return self._request(('getattr', name), f'reading {name}')

  def restart(self):
    """Replaces the worker by a fresh process built from the same constructor.

    Pending promises of the old worker fail with `WorkerDiedError`.

    Raises:
      SpaceMismatchError: The new environment's spaces differ from the old ones.
    """
    self._check_open()
    self._process_finalizer()
    self._start()

  def close(self):
    """Closes the environment and ends the worker. Safe to call any number of times.

    Waits `close_timeout` seconds for a clean exit, then terminates and finally kills
    the process; the shared memory is released either way.
    """
    if self._closed:
      return
    self._closed = True
    if self._process is not None:
      self._process_finalizer()
    self._views = None
    if self._memory_finalizer is not None:
      self._memory_finalizer()

  def __enter__(self):
    return self

  def __exit__(self, *exc_info):
    self.close()

  def __repr__(self):
    state = 'closed' if self._closed else f'pid {self._process.pid}'
    return f'ExternalProcess(index={self.index}, num_envs={self.num_envs}, {state})'

  # Starting and stopping the worker.

  def _start(self):
    self._launch()
    self.wait_ready()

  def _launch(self):
    # Two one-way pipes rather than one socket pair: a reader blocked on a socket is also
    # woken whenever its peer drains the socket's other direction, which costs every
    # worker a second context switch per step; a pipe's readers and writers wait apart.
    request_reader, request_writer = self._context.Pipe(duplex=False)
    reply_reader, reply_writer = self._context.Pipe(duplex=False)
    process = self._context.Process(
        target=_worker, args=(request_reader, reply_writer, self._constructor_bytes),
        daemon=True, name=f'ExternalProcess-{self.index}')
    with _main_module_hidden():
      process.start()
    # Only the worker may hold its ends: once it exits, our reads see EOF at once.
    request_reader.close()
    reply_writer.close()
    self._process = process
    self._channel = _Channel(reply_reader, request_writer, blocking=False)
    self._outstanding = collections.deque()
    self._replies = {}
    self._next_sequence = 0
    self._dead = None
    self._process_finalizer = weakref.finalize(
        self, _stop_process, process, reply_reader, request_writer, self._close_timeout)
    self._spaces_promise = self._request(
        ('spaces',), 'starting', blocking=False, timeout=self._start_timeout)

  def wait_ready(self):
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
    if self._spaces is None:
      self._spaces = spaces
      self.num_envs, self.is_vector, self.observation_space, self.action_space = spaces
      if self._use_shared_memory:
        self._create_shared_memory()
    elif not _same_spaces(spaces, self._spaces):
      self._process_finalizer()
      raise errors.SpaceMismatchError(
          f'Restarted worker for environment {self.index} reports spaces {spaces[2:]} '
          f'(slab of {spaces[0]}), before it had {self._spaces[2:]} (slab of {self._spaces[0]}).')
    if self._memory is not None:
      self._request(('attach', self._memory.name, self._layout), 'attaching shared memory')

  def _create_shared_memory(self):
    self._layout, size = shared_layout(self.num_envs, self.observation_space, self.action_space)
    self._memory = shared_memory.SharedMemory(create=True, size=size)
    self._memory_finalizer = weakref.finalize(self, release_memory, self._memory)
    self._views = views(self._memory.buf, self._layout)
    self._fast_step = 'actions' in self._views and 'observ' in self._views

  # Requests, replies and promises.

  def _check_open(self):
    if self._closed:
      raise errors.ClosedError(f'ExternalProcess for environment {self.index} is closed.')
    if self._spaces_promise is not None:
      self.wait_ready()  # Started with wait=False: requests need the spaces first.

  def _step(self, actions, copy, finish, blocking):
    self._check_open()
    # Shared memory holds one request at a time; steps queued behind others are pickled.
    if self._views is not None and self._fast_step and not self._outstanding:
      views = self._views
      views['actions'][...] = actions

      def read_shared(info):
        observ, reward = views['observ'], views['reward']
        terminated, truncated = views['terminated'], views['truncated']
        if copy:
          observ, reward = observ.copy(), reward.copy()
          terminated, truncated = terminated.copy(), truncated.copy()
        return finish((observ, reward, terminated, truncated, info))

      promise = self._send(_FAST_STEP, 'stepping', read_shared)
    else:
      message = pickle.dumps(('step', actions), pickle.HIGHEST_PROTOCOL)
      promise = self._send(message, 'stepping', finish)
    return promise() if blocking else promise

  def _request(self, command, what, blocking=True, timeout=None):
    self._check_open()
    message = cloudpickle.dumps(command)
    promise = self._send(message, what, lambda result: result, timeout)
    return promise() if blocking else promise

  def _send(self, message, what, finish, timeout=None):
    sequence = self._next_sequence
    self._next_sequence += 1
    if self._dead is None:
      try:
        self._channel.send(message, self._process)
      except OSError:
        pass  # The worker is gone; reading its reply reports that with the exit code.
    self._outstanding.append((sequence, what, finish, timeout or self._timeout))
    return Promise(self, sequence)

  def _reply_is_next(self, sequence):
    """Whether the next bytes from the worker start the reply to `sequence`."""
    outstanding = self._outstanding
    return (self._dead is None and outstanding and outstanding[0][0] == sequence
            and not self._channel.has_buffered())

  def _resolve(self, sequence):
    outstanding = self._outstanding
    if not self._replies and outstanding and outstanding[0][0] == sequence:
      # The common case: this reply is the next to arrive and none is kept.
      _, what, finish, timeout = outstanding.popleft()
      reply = self._decode(self._receive(what, timeout))
      return reply if finish is None else finish(reply)
    # Replies arrive in request order; earlier ones are kept for their own promises.
    while sequence not in self._replies:
      if not self._outstanding or self._outstanding[0][0] > sequence:
        raise ValueError(f'Promise {sequence} of environment {self.index} was already resolved.')
      current, what, finish, timeout = self._outstanding.popleft()
      try:
        reply = self._decode(self._receive(what, timeout))
        self._replies[current] = (True, reply if finish is None else finish(reply))
      except (errors.WorkerError, AttributeError) as error:
        self._replies[current] = (False, error)
    ok, value = self._replies.pop(sequence)
    if not ok:
      raise value
    return value

  def _decode(self, message):
    head = message[:1]
    if head == _FAST_STEP:  # Also the reply of a fast reset.
      return {}
    if head == _FAST_STEP_INFO:
      return pickle.loads(message[1:])
    status, payload = pickle.loads(message)
    if status == 'ok':
      return payload
    remote_type, text, remote_traceback, original = payload
    error = errors.WorkerError(
        f'{remote_type}: {text}', self.index, self.num_envs, remote_type, remote_traceback)
    cause = _unpickle_or_none(original)
    if isinstance(cause, AttributeError) and remote_type == 'AttributeError':
      error = AttributeError(str(error))
    error.__cause__ = cause
    raise error

  def _receive(self, what, timeout):
    if self._dead is not None:
      raise self._dead
    channel = self._channel
    try:
      message = channel.take_fast()
    except (EOFError, OSError):
      raise self._died(what) from None
    if message is not None:
      return message
    deadline = None
    while True:
      message = channel.take()
      if message is not None:
        return message
      try:
        if channel.fill():
          continue
      except (EOFError, OSError):
        raise self._died(what) from None
      # Nothing to read yet: sleep until there is, checking now and then that the worker
      # still lives, since a dead one whose pipe stays open (a grandchild may hold it)
      # would otherwise leave us waiting forever.
      if channel.wait_readable(_LIVENESS_POLL_MS):
        continue
      if not self._process.is_alive():
        raise self._died(what)
      if deadline is None and timeout is not None:
        deadline = time.monotonic() + timeout - _LIVENESS_POLL_MS / 1000
      if deadline is not None and time.monotonic() > deadline:
        self._process.kill()
        self._process.join(1.0)
        self._dead = errors.WorkerTimeoutError(
            f'worker process {self._process.pid} gave no reply within {timeout} s while '
            f'{what}, so it was killed', self.index, self.num_envs, self._process.exitcode)
        raise self._dead

  def _died(self, what):
    self._process.join(1.0)
    self._dead = errors.WorkerDiedError(
        f'worker process {self._process.pid} died while {what}', self.index, self.num_envs,
        self._process.exitcode)
    return self._dead


def wait_all(processes, tokens):
  """Waits for the replies of requests sent to several workers, whichever comes first.

  Where `end_fast_step` and promises wait for one worker at a time, this sleeps in one
  poll over all of them and reads each reply as soon as it arrives, so no reply waits
  behind a slower worker's and reading overlaps the other workers' stepping. Replies
  that do not arrive within a liveness interval are then awaited worker by worker, with
  the liveness checks and timeouts of a single worker, so a dead or hung worker is still
  found within bounded time.

  Args:
    processes: `ExternalProcess` workers.
    tokens: The token (from `begin_fast_step` or `begin_fast_reset`) of each worker's
      request.

  Returns:
    One `(True, raw info)` or `(False, exception)` per worker, in order; the exceptions
    are those `end_fast_step` would raise.
  """
  results = [None] * len(processes)
  waiting = {}  # Read end of the reply pipe -> position.
  for position, (process, token) in enumerate(zip(processes, tokens)):
    if process._reply_is_next(token):
      waiting[process._channel.fileno()] = position
    else:
      results[position] = _settle(process, token)
  if waiting:
    poller = select.poll()
    for fd in waiting:
      poller.register(fd, select.POLLIN)
    while waiting:
      ready = poller.poll(_LIVENESS_POLL_MS)
      if not ready:
        break
      for fd, _ in ready:
        position = waiting.pop(fd)
        poller.unregister(fd)
        results[position] = _settle(processes[position], tokens[position])
    for position in waiting.values():
      results[position] = _settle(processes[position], tokens[position])
  return results


def _settle(process, token):
  try:
    return True, process._resolve(token)
  except Exception as error:  # noqa: BLE001 - handed to the caller, which raises it.
    return False, error


class _Channel:
  """Length-prefixed messages over a pair of pipes, one in each direction.

  The parent uses it non-blocking, so it can bound every wait and notice dead workers;
  the worker uses it blocking, so it sleeps until the next request.
  """

  def __init__(self, reader, writer, blocking):
    self._reader, self._writer = reader, writer  # They own the file descriptors.
    self._fd = reader.fileno()
    self._write_fd = writer.fileno()
    os.set_blocking(self._fd, blocking)
    os.set_blocking(self._write_fd, blocking)
    self._buffer = bytearray()
    self._poller = select.poll()
    self._poller.register(self._fd, select.POLLIN)

  def take_fast(self):
    """Reads once and returns the message if it is the common one-byte step message.

    Returns None when nothing has arrived or the data is anything else (then it is
    buffered for `take`).
    """
    if self._buffer:
      return None
    try:
      chunk = os.read(self._fd, 1 << 16)
    except BlockingIOError:
      return None
    if chunk == _FAST_STEP_FRAME:
      return _FAST_STEP
    if not chunk:
      raise EOFError('the other end of the pipe is closed')
    self._buffer += chunk
    return None

  def take(self):
    """Returns the next complete message from the buffer, or None."""
    buffer = self._buffer
    if len(buffer) < 4:
      return None
    size = _HEADER.unpack_from(buffer)[0]
    if len(buffer) < 4 + size:
      return None
    message = bytes(buffer[4:4 + size])
    del buffer[:4 + size]
    return message

  def fill(self):
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

  def receive(self):
    """Blocks until a whole message has arrived and returns it (blocking end)."""
    message = self.take_fast()
    if message is not None:
      return message
    while True:
      message = self.take()
      if message is not None:
        return message
      self.fill()

  def fileno(self):
    """The file descriptor replies (or requests, in the worker) are read from."""
    return self._fd

  def has_buffered(self):
    """Whether bytes already read wait in the buffer."""
    return bool(self._buffer)

  def wait_readable(self, milliseconds):
    return bool(self._poller.poll(milliseconds))

  def send(self, payload, process=None):
    """Writes one message. On the non-blocking end, keeps reading while the pipe is full,
    so two large messages crossing each other cannot deadlock."""
    self.send_frame(_FAST_STEP_FRAME if payload == _FAST_STEP else frame(payload), process)

  def send_frame(self, data, process=None):
    """Writes one message already framed by `frame`; see `send`."""
    try:
      written = os.write(self._write_fd, data)
    except BlockingIOError:
      written = 0
    if written == len(data):
      return  # Always so for short messages while the pipe has room: one system call.
    data = memoryview(data)[written:]
    while data:
      try:
        data = data[os.write(self._write_fd, data):]
      except BlockingIOError:
        ready = select.select([self._fd], [self._write_fd], [], _LIVENESS_POLL_MS / 1000)
        if ready[0]:
          self.fill()
        if not ready[1] and process is not None and not process.is_alive():
          raise BrokenPipeError('the worker process is gone') from None

  def _missing(self):
    if len(self._buffer) < 4:
      return 0
    return 4 + _HEADER.unpack_from(self._buffer)[0] - len(self._buffer)


@contextlib.contextmanager
def _main_module_hidden():
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


def frame(payload):
  """Returns a message as it travels on the pipe: its length, then the payload."""
  return _HEADER.pack(len(payload)) + payload


def _unbatch_step(result):
  observ, reward, terminated, truncated, info = result
  observ = observ[0] if isinstance(observ, np.ndarray) else slab_lib.select(observ, 0)
  return observ, float(reward[0]), bool(terminated[0]), bool(truncated[0]), info


def _same_spaces(first, second):
  return first[0] == second[0] and first[2] == second[2] and first[3] == second[3]


def shared_layout(num_envs, observation_space, action_space):
  """Returns where each shared array lives in the block, and the block's size in bytes."""
  fields = []
  if slab_lib.is_array_space(action_space):
    fields.append(('actions', (num_envs, *action_space.shape), action_space.dtype))
  if slab_lib.is_array_space(observation_space):
    fields.append(('observ', (num_envs, *observation_space.shape), observation_space.dtype))
  fields.append(('reward', (num_envs,), np.float64))
  fields.append(('terminated', (num_envs,), np.bool_))
  fields.append(('truncated', (num_envs,), np.bool_))
  layout, offset = {}, 0
  for name, shape, dtype in fields:
    dtype = np.dtype(dtype)
    layout[name] = (offset, tuple(int(n) for n in shape), dtype.str)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    offset += -(-nbytes // 64) * 64  # Cache-line aligned, so fields never share a line.
  return layout, max(offset, 64)


def slice_layout(layout, start, size):
  """Returns the layout of rows [start, start + size) of every field of `layout`."""
  sliced = {}
  for name, (offset, shape, dtype) in layout.items():
    row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * np.dtype(dtype).itemsize
    sliced[name] = (offset + start * row_bytes, (size, *shape[1:]), dtype)
  return sliced


_INT32 = np.iinfo(np.int32)
_INT64 = np.iinfo(np.int64)


def fast_reset_fits(indices, seeds):
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


_FAST_RESET_FIRST = _FAST_RESET + _FAST_RESET_HEADER.pack(1, 0) + struct.pack('<i', 0)


def encode_fast_reset(indices, seeds=None):
  """Packs a fast reset request (see `_FAST_RESET`).

  Args:
    indices: Positions within the slab to reset, in the order of the reply's infos.
    seeds: One int or None per position, or None; each must fit int64.

  Returns:
    The message bytes.
  """
  if seeds is None and len(indices) == 1 and indices[0] == 0:
    return _FAST_RESET_FIRST  # A plain environment's reset, the common case.
  indices = np.asarray(indices, np.int32)
  if seeds is None or all(seed is None for seed in seeds):
    return _FAST_RESET + _FAST_RESET_HEADER.pack(len(indices), 0) + indices.tobytes()
  mask = np.array([seed is not None for seed in seeds], np.uint8)
  values = np.array([0 if seed is None else seed for seed in seeds], np.int64)
  return (_FAST_RESET + _FAST_RESET_HEADER.pack(len(indices), 1) + indices.tobytes()
          + mask.tobytes() + values.tobytes())


def _decode_fast_reset(message):
  """Unpacks a fast reset request into (positions, seeds or None)."""
  count, has_seeds = _FAST_RESET_HEADER.unpack_from(message, 1)
  offset = 1 + _FAST_RESET_HEADER.size
  indices = np.frombuffer(message, np.int32, count, offset).tolist()
  if not has_seeds:
    return indices, None
  offset += 4 * count
  mask = np.frombuffer(message, np.uint8, count, offset)
  values = np.frombuffer(message, np.int64, count, offset + count)
  return indices, [int(value) if present else None for present, value in zip(mask, values)]


def views(buffer, layout):
  """Returns numpy arrays for the fields of `layout` in `buffer` (no copy)."""
  return {name: np.ndarray(shape, np.dtype(dtype), buffer, offset)
          for name, (offset, shape, dtype) in layout.items()}


def _stop_process(process, reader, writer, timeout):
  """Asks the worker to close, then escalates to SIGTERM and SIGKILL; bounded in time."""
  message = pickle.dumps(('close',))
  try:
    os.write(writer.fileno(), _HEADER.pack(len(message)) + message)
  except (OSError, ValueError):
    pass  # Gone already, or the pipe is full of unread replies; terminate below.
  process.join(timeout)
  if process.is_alive():
    process.terminate()
    process.join(1.0)
  if process.is_alive():
    process.kill()
    process.join(1.0)
  reader.close()
  writer.close()


def release_memory(memory):
  """Unmaps and unlinks a shared-memory block; safe to call when it is already gone."""
  try:
    memory.close()
  except BufferError:
    pass  # A caller still holds a view; the mapping goes when that view does.
  try:
    memory.unlink()
  except FileNotFoundError:
    pass


def _unpickle_or_none(data):
  if data is None:
    return None
  try:
    return pickle.loads(data)
  except Exception:  # noqa: BLE001 - a cause that cannot be rebuilt is simply left out.
    return None


def _exception_payload(error):
  try:
    original = pickle.dumps(error)
  except Exception:  # noqa: BLE001 - unpicklable exceptions still travel as text.
    original = None
  return (type(error).__name__, str(error), traceback.format_exc(), original)


def _worker(reader, writer, constructor_bytes):
  """Body of the worker process: builds the environment and serves requests until told to stop.

  Args:
    reader: The read end of the request pipe.
    writer: The write end of the reply pipe.
    constructor_bytes: The cloudpickled environment constructor.
  """
  # Ctrl+C reaches the whole process group; the parent decides when workers stop, and
  # they leave as soon as it closes the pipe, so ignore SIGINT here.
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  channel = _Channel(reader, writer, blocking=True)
  slab, memory, fast_step, fast_reset = None, None, None, None
  try:
    while True:
      try:
        message = channel.receive()
      except (EOFError, OSError):
        break  # The parent is gone (exit, crash, SIGTERM, SIGKILL): do not linger.
      try:
        if message == _FAST_STEP or message[:1] == _FAST_RESET:
          if message == _FAST_STEP:
            info = fast_step()
          else:
            info = fast_reset(*_decode_fast_reset(message))
          if info:
            channel.send(_FAST_STEP_INFO + pickle.dumps(info, pickle.HIGHEST_PROTOCOL))
          else:
            channel.send_frame(_FAST_STEP_FRAME)
          continue
        command, *args = pickle.loads(message)
        if command == 'close':
          break
        if command == 'step':
          reply = pickle.dumps(('ok', slab.step(*args)), pickle.HIGHEST_PROTOCOL)
        elif command == 'spaces':
          slab = slab_lib.Slab(cloudpickle.loads(constructor_bytes)())
          reply = cloudpickle.dumps(('ok', (
              slab.num_envs, slab.is_vector, slab.observation_space, slab.action_space)))
        elif command == 'attach':
          name, layout = args
          previous, memory = memory, shared_memory.SharedMemory(name=name)
          arrays = views(memory.buf, layout)
          fast_step = fast_reset = None
          if 'actions' in arrays and 'observ' in arrays:
            fast_step = _make_fast_step(slab, arrays)
            fast_reset = _make_fast_reset(slab, arrays)
          del arrays
          if previous is not None:
            _close_quietly(previous)
          reply = pickle.dumps(('ok', None))
        else:
          reply = cloudpickle.dumps(('ok', _serve(slab, command, args)))
        channel.send(reply)
      except Exception as error:  # noqa: BLE001 - every failure goes back to the parent.
        channel.send(pickle.dumps(('error', _exception_payload(error))))
  finally:
    if slab is not None:
      try:
        slab.close()
      except Exception:  # noqa: BLE001 - closing is best effort on the way out.
        traceback.print_exc()
    fast_step = fast_reset = None
    if memory is not None:
      _close_quietly(memory)
    reader.close()
    writer.close()


def _close_quietly(memory):
  try:
    memory.close()
  except BufferError:
    pass  # A view is still alive; the mapping ends with the process.


def _serve(slab, command, args):
  """Executes one pickled request other than step/spaces/attach/close."""
  if command == 'reset':
    seed, options = args
    return slab.env.reset(seed=seed, options=options)
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


def _make_fast_step(slab, views):
  """Returns a function that steps the slab with the actions in shared memory, writes the
  results there too, and returns the raw info."""
  actions, observ = views['actions'], views['observ']
  reward, terminated, truncated = views['reward'], views['terminated'], views['truncated']
  env, shape = slab.env, observ.shape

  def step_single():
    # A plain environment: skip the slab's batching, this is the hot path.
    result = env.step(actions[0].copy())
    value = result[0]
    if np.shape(value) != shape[1:]:
      raise ValueError(f'Observation of shape {np.shape(value)} does not match the '
                       f'observation space shape {shape[1:]}.')
    observ[0] = value
    reward[0], terminated[0], truncated[0] = result[1], result[2], result[3]
    return result[4]

  def step_slab():
    values, rewards, terminateds, truncateds, info = slab.step(actions.copy())
    if np.shape(values) != shape:
      raise ValueError(f'Observations of shape {np.shape(values)} do not match the slab '
                       f'shape {shape} (slab size, observation space shape).')
    observ[...] = values
    reward[...], terminated[...], truncated[...] = rewards, terminateds, truncateds
    return info

  return step_slab if slab.is_vector else step_single


def _make_fast_reset(slab, views):
  """Returns a function that resets some environments of the slab, writes their
  observations to their rows of the shared `observ` array, and returns the infos (the raw
  info of a plain environment, vector format of the reset ones for a slab)."""
  observ = views['observ']
  env, shape = slab.env, observ.shape

  def reset_single(indices, seeds):
    # A plain environment: skip the slab's batching, resets are frequent.
    if indices != [0]:
      raise IndexError(f'A single environment has only index 0, got {indices}.')
    value, info = env.reset(seed=None if seeds is None else seeds[0])
    if np.shape(value) != shape[1:]:
      raise ValueError(f'Observation of shape {np.shape(value)} does not match the '
                       f'observation space shape {shape[1:]}.')
    observ[0] = value
    return info

  def reset_slab(indices, seeds):
    values, infos = slab.reset(indices, seeds)
    expected = (len(indices), *shape[1:])
    if np.shape(values) != expected:
      raise ValueError(f'Observations of shape {np.shape(values)} do not match the shape '
                       f'{expected} (environments reset, observation space shape).')
    observ[indices] = values
    return infos

  return reset_slab if slab.is_vector else reset_single
