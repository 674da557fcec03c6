"""How a `BatchEnv` replaces its dead workers and reports the episodes they took along.

A worker that dies during `step` is restarted (up to the batch's budget); its
environments report the interrupted episode as truncated, with reward 0, their last
observation and `infos['worker_restarted']`. A worker that dies during `reset` is
restarted and its whole fresh slab is reset; the slab's environments the caller did not
ask to reset lost their episodes with the worker, and their next step reports them as
truncated.
"""

import gymnasium
import numpy as np

from agents.tools import errors
from agents.tools import slab as slab_lib

# The info key of the environments whose episode a worker's restart cut short.
INFO_KEY = 'worker_restarted'


class WorkerRestarts:
  """The restart budget of a batch and the episodes its restarts interrupted.

  Attributes:
    max_restarts: How many dead workers the batch replaces in total.
    count: How many it has replaced so far.
  """

  def __init__(self, members, starts, sizes, max_restarts):
    """Args: the batch's members, the batch index of each one's first environment, their
    sizes, and the restart budget."""
    self._members, self._starts, self._sizes = members, starts, sizes
    self.max_restarts = max_restarts
    self.count = 0
    # Environments whose episode ended with a worker that died during a reset of some
    # other environment of its slab; their next step reports the episode as truncated.
    self._lost = np.zeros(int(sum(sizes)), bool)

  def restart(self, position, error):
    """Restarts the member at `position`, or raises `error` once the budget is spent."""
    if self.count >= self.max_restarts:
      raise error
    self.count += 1
    self._members[position].restart()

  def interrupted_step(self, position, last_observ, observation_space):
    """The step result of the environments of a dead worker: a truncated episode.

    Args:
      position: The member's position in the batch.
      last_observ: The batch's last observations (None: zeros stand in).
      observation_space: The space of one environment.
    """
    start, size = self._starts[position], self._sizes[position]
    if last_observ is not None:
      observ = last_observ[start:start + size]
    else:
      observ = gymnasium.vector.utils.create_empty_array(observation_space, size, np.zeros)
    flags = np.ones(size, bool)
    infos = {INFO_KEY: flags, '_' + INFO_KEY: flags.copy()}
    return observ, np.zeros(size), np.zeros(size, bool), np.ones(size, bool), infos

  def truncate_lost_episodes(self, truncated, infos):
    """Marks as truncated (in place) the episodes lost to a restart during a reset."""
    lost = self._lost
    if not lost.any():
      return infos
    truncated |= lost
    infos = dict(infos)
    restarted = infos.get(INFO_KEY, np.zeros(len(lost), bool)) | lost
    infos[INFO_KEY], infos['_' + INFO_KEY] = restarted, restarted.copy()
    self._lost = np.zeros(len(lost), bool)
    return infos

  def forget_lost_episodes(self, indices):
    """The environments at `indices` are being reset: their lost episodes are moot."""
    self._lost[indices] = False

  def reset_restarted(self, position, local, member_seeds, reset_member):
    """Resets every environment of a member just restarted during a reset.

    A fresh slab has never been reset, and the episodes of its other environments ended
    with the dead worker: they are reset here too (unseeded), and their next step
    reports the lost episode as truncated with `infos['worker_restarted']`.

    Args:
      position: The member's position in the batch.
      local: The slab indices the caller asked to reset.
      member_seeds: Their seeds, or None.
      reset_member: Function (member, all local indices, all seeds) -> (observ or None,
        infos) that resets the member and returns its results in slab order.

    Returns:
      (observ or None, infos) of the requested environments, in the order of `local`.
    """
    size = self._sizes[position]
    seeds = [None] * size
    for index, seed in zip(local, member_seeds or [None] * len(local)):
      seeds[index] = seed
    observ, infos = reset_member(self._members[position], list(range(size)), seeds)
    others = np.setdiff1d(np.arange(size), local)
    self._lost[self._starts[position] + others] = True
    if observ is not None:
      observ = slab_lib.select(observ, np.asarray(local))
    if infos:
      infos = slab_lib.select(infos, np.asarray(local))
    return observ, infos


def sort_replies(members, results):
  """Sorts the replies `wait_all` gathered from `members`.

  Returns:
    The vector infos of each member ({} where it failed), the `(slot, WorkerDiedError)`
    of each dead worker, and the `(slot, exception)` of the first other failure or None.
  """
  infos, died, failed = [], [], None
  for slot, (member, (ok, value)) in enumerate(zip(members, results)):
    if ok:
      infos.append(slab_lib.vector_infos(value, member.num_envs, member.is_vector))
      continue
    infos.append({})
    if isinstance(value, errors.WorkerDiedError):
      died.append((slot, value))
    elif failed is None:
      failed = (slot, value)
  return infos, died, failed
