"""A member of a batch that steps its environments in a Ray actor, on any node of a cluster.

`RayMember` implements `batch_member.BatchMember` as `ExternalProcess` does, with Ray
for the transport: the actor (`SlabHost`) builds the environment or slab from its
constructor and steps it; `step_batch` and `reset_batch` send one actor call and return
a promise that waits for its reply. Observations come back through Ray's object store
(zero-copy on the learner's node, one transfer from another node).

    group = ray_cluster.ActorGroup(ray, count=2)
    members = start_members([make_slab_a, make_slab_b], group)
    batch = BatchEnv(members, max_restarts=2)

Faults, as for a worker process:
  - the environment raised: `WorkerError` with the actor's traceback and the
    exception's type;
  - the actor died (its process killed, its node lost): `WorkerDiedError` naming the
    node and Ray's cause; `restart` then starts a fresh actor in the same bundle, and
    BatchEnv reports the lost episodes as truncated;
  - no reply within `timeout`: the actor is killed, `WorkerTimeoutError`.
The actors belong to the process that created them: Ray ends them when it exits, is
killed, or loses the cluster, so none is left behind on any node; `close` kills them at
once.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from agents.tools import batch_checks, errors, ray_cluster
from agents.tools import slab as slab_lib

_LOG = logging.getLogger(__name__)
_SLICE_SECONDS = 1.0  # A reply is awaited in slices this long, checking the head between.


class SlabHost:
  """The actor's body: one environment or slab, stepped on request."""

  def __init__(self, constructor: Callable[[], Any]) -> None:
    self._slab = slab_lib.Slab(constructor())

  def describe(self) -> dict[str, Any]:
    """What the learner needs to know: size, spaces, and where the actor runs."""
    import ray
    slab = self._slab
    return dict(num_envs=slab.num_envs, is_vector=slab.is_vector,
                observation_space=slab.observation_space, action_space=slab.action_space,
                node_id=ray.get_runtime_context().get_node_id(), pid=os.getpid())

  def step(self, actions: Any) -> slab_lib.StepResult:
    observ, reward, terminated, truncated, info = self._slab.step(actions)
    return (observ, reward, terminated, truncated,
            slab_lib.vector_infos(info, self._slab.num_envs, self._slab.is_vector))

  def reset(self, indices: Sequence[int] | None,
            seeds: Sequence[int | None] | None) -> slab_lib.ResetResult:
    return self._slab.reset(indices, seeds)

  def close(self) -> None:
    self._slab.close()


class RayMember:
  """Hosts an environment (or a slab) in a Ray actor; implements `BatchMember`.

  Attributes:
    index: Batch index of the first hosted environment, named in errors.
    num_envs, is_vector, observation_space, action_space: as the hosted slab's.
    node_id: Ray id of the node the actor runs on.
    node: that node's name ('ip', or 'ip#k' among nodes sharing an address).
    pid: the actor's process id on its node.
    timeout: Seconds a reply may take before the actor counts as hung, or None.
  """

  def __init__(self, constructor: Callable[[], Any], group: ray_cluster.ActorGroup, bundle: int,
               index: int = 0, timeout: float | None = 600.0, start_timeout: float = 120.0,
               wait: bool = True) -> None:
    """Starts the actor in bundle `bundle` of `group` (an `ray_cluster.ActorGroup`).

    Args:
      constructor: Callable returning a `gymnasium.Env` or an autoreset-disabled
        `VectorEnv`; it travels to the actor with cloudpickle.
      group: The `ActorGroup` whose bundle the actor takes.
      bundle: Index of that bundle.
      index: Batch index of the first environment.
      timeout: Seconds to wait for a step or reset; None waits as long as the actor lives.
      start_timeout: Seconds to wait for the actor to build its environment.
      wait: Whether to wait for the environment here; False: call `wait_ready` later.
    """
    self._ray = ray_cluster.import_ray()
    self._constructor = constructor
    self._group = group
    self._bundle = bundle
    self.index = index
    self.timeout = timeout
    self._start_timeout = start_timeout
    self.num_envs, self.is_vector = 1, False
    self.observation_space = self.action_space = None
    self.node_id: str | None = None
    self.node: str | None = None
    self.pid: int | None = None
    self._actor: Any = None  # The Ray actor handle and its `describe` reply, once launched.
    self._ready: Any = None
    self._closed = False
    group.join()
    self._launch()
    if wait:
      try:
        self.wait_ready()
      except BaseException:
        self.close()
        raise

  def _launch(self) -> None:
    self._actor = _actor_class().options(**self._group.options(self._bundle)).remote(
        self._constructor)
    self._ready = self._actor.describe.remote()

  def wait_ready(self) -> None:
    """Waits until the actor has built its environment; takes its size and spaces."""
    info = self._get(self._ready, 'start', self._start_timeout)
    if self.observation_space is not None:  # A restart: the fresh slab must match.
      for kind in ('observation', 'action'):
        batch_checks.check_same_space(kind, self.index, info[f'{kind}_space'],
                                      getattr(self, f'{kind}_space'))
    self.num_envs, self.is_vector = info['num_envs'], info['is_vector']
    self.observation_space, self.action_space = (info['observation_space'],
                                                 info['action_space'])
    self.node_id, self.pid = info['node_id'], info['pid']
    self.node = ray_cluster.node_names(self._ray).get(self.node_id, self.node_id[:8])

  @property
  def actor(self) -> Any:
    """The Ray actor handle."""
    return self._actor

  def step_batch(self, actions: Any, blocking: bool = True,
                 copy: bool = True) -> slab_lib.StepResult | Callable[[], slab_lib.StepResult]:
    del copy  # Replies are fresh arrays (read-only views of the object store).
    self._check_open()
    reply = self._actor.step.remote(actions)
    promise = lambda: self._get(reply, 'step')
    return promise() if blocking else promise

  def reset_batch(
      self, indices: Sequence[int] | None = None, seeds: Sequence[int | None] | None = None,
      blocking: bool = True,
  ) -> slab_lib.ResetResult | Callable[[], slab_lib.ResetResult]:
    self._check_open()
    indices = None if indices is None else [int(index) for index in indices]
    reply = self._actor.reset.remote(indices, seeds)
    promise = lambda: self._get(reply, 'reset')
    return promise() if blocking else promise

  def restart(self) -> None:
    """Replaces the dead actor by a fresh one in the same bundle."""
    self._check_open()
    old_node = self.node
    self._kill()
    self._launch()
    self.wait_ready()
    _LOG.warning('%s restarted on node %s (was on %s).', self._name(), self.node, old_node)

  def close(self) -> None:
    """Kills the actor (its environment's `close` is not awaited); safe to call again."""
    if self._closed:
      return
    self._closed = True
    try:
      self._kill()
    finally:
      self._group.release()

  def __repr__(self) -> str:
    return f'RayMember({self._name()}, node={self.node}, pid={self.pid})'

  # Helpers.

  def _name(self) -> str:
    last = self.index + self.num_envs - 1
    return (f'environment {self.index}' if self.num_envs == 1
            else f'environments {self.index}..{last}')

  def _kill(self) -> None:
    if self._actor is None or self._group.lost:  # Without a head, Ray calls would hang.
      return
    actor, self._actor = self._actor, None
    try:
      self._ray.kill(actor, no_restart=True)
    except Exception:  # noqa: BLE001 - already dead, or the cluster is gone.
      pass

  def _check_open(self) -> None:
    if self._closed:
      raise errors.ClosedError(f'The Ray actor of {self._name()} is closed.')

  def _get(self, reply: Any, what: str, timeout: float | None = None) -> Any:
    """The reply's value, or the named error of the environment, actor or cluster."""
    ray = self._ray
    timeout = timeout or self.timeout
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
      while True:  # In slices, so that a lost head is noticed while waiting.
        self._check_head(what)
        left = _SLICE_SECONDS if deadline is None else min(
            _SLICE_SECONDS, max(deadline - time.monotonic(), 0.0))
        try:
          return ray.get(reply, timeout=left)
        except ray.exceptions.GetTimeoutError:
          if deadline is not None and time.monotonic() >= deadline:
            raise
    except ray.exceptions.RayTaskError as error:
      cause = getattr(error, 'cause', None) or error
      raise errors.WorkerError(
          f'{type(cause).__name__}: {cause}'.splitlines()[0], self.index, self.num_envs,
          remote_type=type(cause).__name__, remote_traceback=str(error)) from None
    except ray.exceptions.GetTimeoutError:
      self._kill()
      raise errors.WorkerTimeoutError(
          f'the Ray actor on node {self.node} did not answer a {what} within '
          f'{timeout:g} s and was killed', self.index, self.num_envs) from None
    except ray.exceptions.RayActorError as error:
      self._check_head(what, force=True)
      cause = death_cause(error)
      _LOG.warning('The Ray actor of %s on node %s died during a %s: %s', self._name(),
                   self.node, what, cause)
      raise errors.WorkerDiedError(
          f'the Ray actor on node {self.node} died during a {what}: {cause}', self.index,
          self.num_envs) from None

  def _check_head(self, what: str, force: bool = False) -> None:
    if self._group.head_lost(force):
      raise errors.ClusterLostError(
          f"the Ray cluster's head at {self._group.head_address} no longer answers "
          f'(during a {what})', self.index, self.num_envs,
          address=self._group.head_address) from None


@functools.cache
def _actor_class() -> Any:
  """`SlabHost` as a Ray actor class (made once per process). Ray does not restart it:
  `RayMember.restart` starts a fresh one, as a dead worker process is replaced."""
  import ray
  return ray.remote(max_restarts=0, max_task_retries=0)(SlabHost)


def death_cause(error: BaseException) -> str:
  """The short reason Ray gives for an actor's death (its long message has one sentence
  that says it)."""
  text = ' '.join(str(error).split())
  for pattern in (r'Worker exit detail: (.*?\.)(?: |$)', r'(The actor is dead because [^.]*\.)',
                  r'(The actor died because [^.]*\.)', r'(its node [^.]*\.)'):
    match = re.search(pattern, text)
    if match:
      return match.group(1)
  return text[:200]


def start_batch_members(constructors: Sequence[Callable[[], Any]], address: str | None = None,
                        num_cpus: int | None = None, **kwargs: Any) -> list[RayMember]:
  """Joins (or starts) Ray and starts one actor per slab constructor, spread over the nodes.

  Args:
    constructors: Callables, each returning an environment or an autoreset-disabled slab.
    address: The cluster's address; None: `RAY_ADDRESS`, else a local instance.
    num_cpus: CPUs of a local instance (None: the machine's cores, at least one per slab).
    **kwargs: Passed to `RayMember` (timeout, start_timeout).
  """
  count = len(constructors)
  ray = ray_cluster.init(address, num_cpus or max(os.cpu_count() or 1, count))
  group = ray_cluster.ActorGroup(ray, count, kwargs.get('start_timeout', 120.0))
  return start_members(constructors, group, **kwargs)


def start_members(constructors: Sequence[Callable[[], Any]], group: ray_cluster.ActorGroup,
                  **kwargs: Any) -> list[RayMember]:
  """Starts one `RayMember` per constructor, all at once, in bundles 0, 1, ... of `group`;
  returns them once every environment is built (or closes them all and raises)."""
  members = []
  try:
    for bundle, constructor in enumerate(constructors):
      members.append(RayMember(constructor, group, bundle, wait=False, **kwargs))
    start = 0
    for member in members:
      member.index = start
      member.wait_ready()
      start += member.num_envs
    return members
  except BaseException:
    for member in members:
      member.close()
    group.close()
    raise
