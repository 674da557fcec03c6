"""Combines several environments, in this process or in worker processes, into one batch.

CONTRACT (other modules rely on it; keep it when extending):

  batch = BatchEnv(envs)            # envs: gymnasium.Env objects, or slabs
  len(batch) -> B                   # number of environments
  batch.observation_space           # the space of ONE environment
  batch.action_space                # the space of ONE environment
  obs, infos = batch.reset(indices=None, seeds=None)
      # indices: int sequence/array (None = all); seeds: same length or None.
      # obs: np.ndarray [len(indices), *obs_shape]; infos: dict of arrays
      # in Gymnasium's vector format (key -> array [len(indices)], '_key' mask).
  obs, reward, terminated, truncated, infos = batch.step(actions)
      # actions: np.ndarray [B, *act_shape]; reward float32 [B];
      # terminated, truncated: bool [B]; infos as above with length B.
  batch.step_async(actions); ...; results = batch.step_wait()
  batch.reset_async(indices, seeds); ...; obs, infos = batch.reset_wait()
      # the same calls in two halves: the caller works while the workers do.
  batch.close()

No automatic reset: the caller resets the environments that finished. Actions
are checked against the action space (`ActionError`), and observations and
rewards for NaN and infinity (`NonFiniteError`, unless `check_finite=False`);
see `batch_checks.py`.

Members of the batch are plain `gymnasium.Env`s (one environment each), slabs
(`gymnasium.vector.VectorEnv`s with autoreset disabled, K environments each),
or `ExternalProcess` workers hosting either: anything that implements the
`batch_member.BatchMember` protocol. The batch size is the sum of the
members' sizes. `BatchEnv.from_constructors` builds the process-parallel
version: it starts every worker at once, and each `step` sends every request
before gathering any reply, so the workers step in parallel; the replies are read
as they arrive, waiting on all workers in one poll.

Consecutive workers whose spaces hold plain arrays form one member, a
`worker_pool.WorkerPool`: one shared-memory block holds their actions, observations,
rewards and flags, so a step costs one copy in, one small message to and from each
worker, and one copy out, with nothing pickled.

Every step takes one path: check the actions, send every member its part, gather
the replies, restart the members that died, check the results for NaN and infinity.
A reset takes the same path with the indices split by member.

A worker that dies can be restarted (`max_restarts`): the episodes it took along
report as truncated, with `infos['worker_restarted']` set, and the caller resets
them like any finished environment (`batch_restarts.py` has the details).
"""

import gymnasium
import numpy as np

from agents.tools import batch_checks, batch_index, batch_member, batch_restarts, errors, wrappers
from agents.tools import slab as slab_lib

RAY = 'ray'  # `processes` value: the slabs step in Ray actors (`ray_member`).


class BatchEnv:
  """Steps a list of environments, slabs or worker processes as one batch.

  Its 26 methods are one protocol seen from three sides, kept together on purpose:
  Gymnasium's (`step`, `reset`, their `_async`/`_wait` halves, `close`, the context
  manager), the builders' (`from_constructors`, `from_slab_constructors`), and the ways a
  step finishes (in process, through the shared block, or from Ray's promises).

  Attributes:
    observation_space: Observation space of one environment.
    action_space: Action space of one environment.
  """

  def __init__(self, envs, max_restarts=0, check_finite=True):
    """Builds the batch from environments, slabs or `ExternalProcess` workers.

    Args:
      envs: Sequence of `gymnasium.Env`, autoreset-disabled `gymnasium.vector.VectorEnv`
        or `BatchMember` objects (such as `ExternalProcess` workers); their spaces must
        agree.
      max_restarts: Total number of dead workers the batch replaces before it gives up
        and raises `WorkerDiedError`.
      check_finite: Whether `step` and `reset` raise `NonFiniteError` when a float
        observation or a reward is NaN or infinite (one pass over the batch; see
        bench/finite_check_cost.py for its cost).

    Raises:
      ValueError: `envs` is empty.
      SpaceMismatchError: Two environments have different spaces; names the first odd one.
    """
    if not envs:
      raise ValueError('BatchEnv needs at least one environment.')
    self._restarts = batch_restarts.WorkerRestarts(max_restarts)
    self._members = batch_member.as_members(envs, self._restarts)
    self._sizes = [member.num_envs for member in self._members]
    self._starts = np.cumsum([0] + self._sizes)[:-1].tolist()
    self._size = int(sum(self._sizes))
    # The member that hosts each environment of the batch.
    self._member_of = np.repeat(np.arange(len(self._members)), self._sizes).tolist()
    self.observation_space = self._members[0].observation_space
    self.action_space = self._members[0].action_space
    for member, start in zip(self._members, self._starts):
      for kind in ('observation', 'action'):
        batch_checks.check_same_space(kind, start, getattr(member, f'{kind}_space'),
                                      getattr(self, f'{kind}_space'))
    self._check_actions = batch_checks.ActionCheck(self.action_space, self._size)
    self._check_finite = check_finite
    self._closed = False
    self._in_flight = None  # (kind, ...) of the request `step_async` or `reset_async` sent.

  @classmethod
  def from_constructors(cls, constructor, num_envs, processes=True, envs_per_process=1,
                        max_restarts=0, check_finite=True, **process_kwargs):
    """Builds a batch of `num_envs` environments from constructors.

    Args:
      constructor: Callable returning a `gymnasium.Env`, or a sequence of `num_envs` such
        callables (for example with different configurations).
      num_envs: Number of environments in the batch.
      processes: Whether to run the environments in worker processes ('ray': in Ray
        actors).
      envs_per_process: Environments per slab: each worker (or, in-process, each
        `SyncVectorEnv`) steps this many environments together. The last slab may be
        smaller.
      max_restarts: Total number of dead workers the batch replaces.
      check_finite: Whether NaN or infinite observations and rewards raise.
      **process_kwargs: Passed to `ExternalProcess` (context, timeout, start_timeout, ...).

    Returns:
      A `BatchEnv`.
    """
    if callable(constructor):
      constructors = [constructor] * num_envs
    else:
      constructors = list(constructor)
      if len(constructors) != num_envs:
        raise ValueError(f'Got {len(constructors)} constructors for {num_envs} environments.')
    if envs_per_process < 1:
      raise ValueError(f'envs_per_process must be at least 1, got {envs_per_process}.')
    groups = [constructors[start:start + envs_per_process]
              for start in range(0, num_envs, envs_per_process)]
    slab_constructors = [
        group[0] if envs_per_process == 1 else batch_member.SlabConstructor(group)
        for group in groups]
    return cls.from_slab_constructors(
        slab_constructors, processes=processes, max_restarts=max_restarts,
        check_finite=check_finite, **process_kwargs)

  @classmethod
  def from_slab_constructors(cls, slab_constructors, processes=True, max_restarts=0,
                             check_finite=True, **process_kwargs):
    """Builds a batch from constructors of whole slabs, one worker process per slab.

    For environments with a native vector form, e.g.
    `lambda: gymnasium.make_vec('BalloonLearningEnvironment-v0', num_envs=16)`, whose
    slab must have autoreset disabled.

    Args:
      slab_constructors: Callables, each returning a `gymnasium.Env` or an autoreset-
        disabled `gymnasium.vector.VectorEnv`.
      processes: Whether to run every slab in its own worker process; 'ray': in its own
        Ray actor, spread over the nodes of a cluster (`ray_member`).
      max_restarts: Total number of dead workers the batch replaces.
      check_finite: Whether NaN or infinite observations and rewards raise.
      **process_kwargs: Passed to `ExternalProcess` (context, timeout, start_timeout, ...),
        or with 'ray' to `ray_member.start_batch_members` (address, num_cpus, timeout,
        start_timeout).

    Returns:
      A `BatchEnv` whose size is the sum of the slab sizes.
    """
    if not processes:
      return cls([make() for make in slab_constructors], max_restarts=max_restarts,
                 check_finite=check_finite)
    if processes == RAY:
      from agents.tools import ray_member
      members = ray_member.start_batch_members(slab_constructors, **process_kwargs)
      try:
        return cls(members, max_restarts=max_restarts, check_finite=check_finite)
      except BaseException:
        for member in members:
          member.close()
        raise
    workers = []
    try:
      # Start every worker before waiting for any, so the constructors run in parallel;
      # indices are fixed once the slab sizes are known.
      for make in slab_constructors:
        workers.append(wrappers.ExternalProcess(make, wait=False, **process_kwargs))
      start = 0
      for worker in workers:
        worker.index = start
        worker.wait_ready()
        start += worker.num_envs
      return cls(workers, max_restarts=max_restarts, check_finite=check_finite)
    except BaseException:
      for worker in workers:
        worker.close()
      raise

  def __len__(self):
    return self._size

  @property
  def workers(self):
    """The `ExternalProcess` workers of the batch (in pools or alone), in batch order."""
    return [worker for member in self._members
            for worker in getattr(member, 'workers', [member])
            if isinstance(worker, wrappers.ExternalProcess)]

  @property
  def members(self):
    """Every member of the batch (`BatchMember`s), in batch order."""
    return list(self._members)

  @property
  def num_restarts(self):
    """How many dead workers this batch has replaced so far."""
    return self._restarts.count

  @property
  def max_restarts(self):
    """How many dead workers this batch replaces in total before it gives up."""
    return self._restarts.max_restarts

  def step(self, actions):
    """Steps every environment of the batch.

    Args:
      actions: Array of shape [B, *action_shape] (or a sequence of B actions for spaces
        that are not single arrays).

    Returns:
      Tuple (observ[B, ...], reward float32[B], terminated bool[B], truncated bool[B],
      infos in Gymnasium's vector format).

    Raises:
      ActionError: The actions have the wrong shape or dtype, or one is out of bounds
        (names the environment).
      WorkerError: An environment raised in its worker (carries the worker's traceback).
      WorkerDiedError: A worker died and no restarts are left.
    """
    self.step_async(actions)
    return self.step_wait()

  def step_async(self, actions):
    """Sends a step to every environment and returns without waiting for the results.

    The caller may work meanwhile (for example, compute the actions of another batch)
    and then collects the results with `step_wait`, as with Gymnasium's vector
    environments. In-process members step here, at once.

    Raises:
      ActionError: as in `step`, before anything is sent.
      RuntimeError: a step or reset is already in flight.
    """
    self._check_idle('step_async')
    actions = self._check_actions(actions)
    # Send every request before waiting for any, so the workers step in parallel.
    self._in_flight = ('step', None, [
        member.step_batch(actions[start:start + size], blocking=False, copy=False)
        for member, start, size in zip(self._members, self._starts, self._sizes)])

  def step_wait(self):
    """The results of the step sent by `step_async`; see `step` for them and the errors.

    Raises:
      RuntimeError: no step is in flight.
    """
    _, promises = self._take_in_flight('step', 'step_wait')
    results, died = self._gather(promises)
    for position, error in died:
      results[position] = self._restarts.interrupted_step(self._members[position], error)
    if len(results) == 1:
      # One member: its arrays need no joining, only a copy, as a slab or a pool may
      # reuse them on its next step.
      observ, reward, terminated, truncated, infos = results[0]
      observ = (np.array(observ) if isinstance(observ, np.ndarray)
                else slab_lib.concatenate([observ]))
      reward = np.asarray(reward, np.float32)
      terminated, truncated = np.array(terminated, bool), np.array(truncated, bool)
    else:
      observ = slab_lib.concatenate([result[0] for result in results])
      reward = np.concatenate([result[1] for result in results], dtype=np.float32)
      terminated = np.concatenate([result[2] for result in results])
      truncated = np.concatenate([result[3] for result in results])
      infos = slab_lib.concatenate_infos([result[4] for result in results], self._sizes)
    infos = self._restarts.end_step(observ, truncated, infos)
    if self._check_finite:
      batch_checks.check_finite(observ, reward)
    return observ, reward, terminated, truncated, infos

  def reset(self, indices=None, seeds=None):
    """Resets a subset of the environments.

    Args:
      indices: Batch indices to reset, in the order the results should have; None
        resets all.
      seeds: One seed (int or None) per entry of `indices`, or None.

    Returns:
      Tuple (observ[len(indices), ...], infos in vector format of length len(indices)).

    Raises:
      IndexError: An index is outside the batch or repeated.
      ValueError: `seeds` has a different length than `indices`.
    """
    self.reset_async(indices, seeds)
    return self.reset_wait()

  def reset_async(self, indices=None, seeds=None):
    """Sends a reset and returns without waiting; `reset_wait` collects its results.

    Raises:
      IndexError: as in `reset`, before anything is sent.
      ValueError: as in `reset`, before anything is sent.
      RuntimeError: a step or reset is already in flight.
    """
    self._check_idle('reset_async')
    indices = batch_index.check_indices(indices, self._size)
    if seeds is not None:
      seeds = list(seeds)
      if len(seeds) != len(indices):
        raise ValueError(f'Got {len(seeds)} seeds for {len(indices)} indices to reset.')
      seeds = [None if seed is None else int(seed) for seed in seeds]
    self._restarts.begin_reset(indices)
    requests, counts, order = batch_index.split_by_member(
        indices, seeds, self._member_of, self._starts)
    # Send every request before waiting for any, so the workers reset in parallel.
    promises = [self._members[position].reset_batch(local, member_seeds, blocking=False)
                for position, local, member_seeds in requests]
    self._in_flight = ('reset', (indices, requests, counts, order), promises)

  def reset_wait(self):
    """The results of the reset sent by `reset_async`; see `reset`.

    Raises:
      RuntimeError: no reset is in flight.
    """
    (indices, requests, counts, order), promises = self._take_in_flight('reset', 'reset_wait')
    if not len(indices):
      return gymnasium.vector.utils.create_empty_array(self.observation_space, 0), {}
    positions = [position for position, _, _ in requests]
    results, died = self._gather(promises, positions)
    for slot, error in died:
      position, local, member_seeds = requests[slot]
      results[slot] = self._restarts.reset_restarted(
          self._members[position], error, local, member_seeds)
    observ = slab_lib.concatenate([result[0] for result in results])
    infos = {}
    if any(result[1] for result in results):
      infos = slab_lib.concatenate_infos([result[1] for result in results], counts)
    if order is not None:
      observ = slab_lib.select(observ, order)
      infos = slab_lib.select(infos, order)
    self._restarts.end_reset(indices, observ, self._size)
    if self._check_finite:
      batch_checks.check_finite(observ, None)
    return observ, infos

  def close(self):
    """Closes every environment and worker. Safe to call more than once."""
    if self._closed:
      return
    self._closed = True
    first_error = None
    for member in self._members:
      try:
        member.close()
      except Exception as error:  # noqa: BLE001 - close the rest, then report the first.
        first_error = first_error or error
    if first_error is not None:
      raise first_error

  def __enter__(self):
    return self

  def __exit__(self, *exc_info):
    self.close()

  # Helpers.

  def _check_open(self):
    if self._closed:
      raise errors.ClosedError('BatchEnv is closed.')

  def _check_idle(self, caller):
    self._check_open()
    if self._in_flight is not None:
      raise RuntimeError(f'BatchEnv.{caller}: a {self._in_flight[0]} is already in flight; '
                         f'call {self._in_flight[0]}_wait first.')

  def _take_in_flight(self, kind, caller):
    """The request sent by `{kind}_async`, now taken off the batch."""
    self._check_open()
    if self._in_flight is None or self._in_flight[0] != kind:
      raise RuntimeError(f'BatchEnv.{caller}: no {kind} in flight; call {kind}_async first.')
    _, first, second = self._in_flight
    self._in_flight = None
    return first, second

  def _gather(self, promises, positions=None):
    """Resolves every promise before raising, so no worker is left with an unread reply."""
    positions = range(len(promises)) if positions is None else positions
    results, died, first_error = [], [], None
    for slot, (position, promise) in enumerate(zip(positions, promises)):
      try:
        results.append(promise())
      except errors.WorkerDiedError as error:
        results.append(None)
        died.append((slot, error))
      except Exception as error:  # noqa: BLE001 - re-raised below once all replies are in.
        results.append(None)
        first_error = first_error or errors.name_environment(error, self._starts[position],
                                                       self._sizes[position])
    if first_error is not None:
      raise first_error
    return results, died
