"""What BatchEnv needs from each of its members, and the in-process member.

A member hosts K environments: a plain `gymnasium.Env` (K = 1) or a slab (an
autoreset-disabled `gymnasium.vector.VectorEnv`), either in this process
(`InProcessSlab`) or in a worker process (`ExternalProcess`). Both implement
the `BatchMember` protocol, so BatchEnv treats them alike; workers add the
shared-memory hot path on top (`attach_shared_block`, `begin_fast_step`, ...).
"""

from typing import Any, Protocol, runtime_checkable

import gymnasium

from agents.tools import errors
from agents.tools import slab as slab_lib


@runtime_checkable
class BatchMember(Protocol):
  """The interface of one member of a BatchEnv.

  Attributes:
    index: Batch index of the member's first environment, named in errors.
    num_envs: Number of environments K the member hosts.
    is_vector: Whether the hosted environment is a `VectorEnv` slab.
    observation_space: Observation space of one environment.
    action_space: Action space of one environment.
  """

  index: int
  num_envs: int
  is_vector: bool
  observation_space: Any
  action_space: Any

  def step_batch(self, actions, blocking=True, copy=True):
    """Steps the K environments: returns (observ[K], reward[K], terminated[K],
    truncated[K], infos in vector format), or a callable that waits for it."""

  def reset_batch(self, indices=None, seeds=None, blocking=True):
    """Resets some of the K environments: returns (observ, infos in vector format), or
    a callable that waits for it."""

  def restart(self):
    """Replaces a dead member by a fresh one, or raises WorkerError if it cannot."""

  def close(self):
    """Closes the environments; safe to call more than once."""


class InProcessSlab:
  """A member stepped in this process, with the promise interface of `ExternalProcess`."""

  def __init__(self, env, index=0):
    self._slab = slab_lib.Slab(env)
    self.index = index
    self.num_envs = self._slab.num_envs
    self.is_vector = self._slab.is_vector
    self.observation_space = self._slab.observation_space
    self.action_space = self._slab.action_space

  def step_batch(self, actions, blocking=True, copy=True):
    del copy  # Results are fresh arrays already.
    num_envs, is_vector = self.num_envs, self.is_vector

    def run():
      observ, reward, terminated, truncated, info = self._slab.step(actions)
      return (observ, reward, terminated, truncated,
              slab_lib.vector_infos(info, num_envs, is_vector))

    return run() if blocking else run

  def reset_batch(self, indices=None, seeds=None, blocking=True):
    run = lambda: self._slab.reset(indices, seeds)
    return run() if blocking else run

  def restart(self):
    raise errors.WorkerError('an in-process environment cannot be restarted.', self.index,
                             self.num_envs)

  def close(self):
    self._slab.close()


class SlabConstructor:
  """Picklable constructor of a `SyncVectorEnv` slab from per-environment constructors."""

  def __init__(self, constructors):
    self._constructors = list(constructors)

  def __call__(self):
    return slab_lib.make_sync_slab(self._constructors)


def as_member(env):
  """Wraps a `gymnasium.Env` or slab; returns a member (e.g. an ExternalProcess) as it is."""
  if not isinstance(env, (gymnasium.Env, gymnasium.vector.VectorEnv)) and isinstance(
      env, BatchMember):
    return env
  return InProcessSlab(env)
