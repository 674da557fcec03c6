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

No automatic reset: the caller resets the environments that finished. Members are
anything that implements `batch_member.BatchMember`: runs of plain environments in
this process, slabs (`VectorEnv`s with autoreset disabled), `ExternalProcess` workers,
Ray actors, and runs of workers with array spaces, which form one
`worker_pool.WorkerPool` stepping through one shared-memory block.

Every step takes one path: check the actions (`ActionError`), send every member its
part before waiting for any (so workers step in parallel), gather the replies,
replace the members that died (`max_restarts`; their episodes end truncated with
`infos['worker_restarted']`, see `batch_restarts.py`), and check observations and
rewards for NaN and infinity (`NonFiniteError`, unless `check_finite=False`). A reset
takes the same path with its indices split by member.
"""

import gymnasium
import numpy as np

from agents.tools import batch_checks, batch_index, batch_member, batch_restarts, errors, wrappers

RAY = batch_member.RAY  # `processes` value: the slabs step in Ray actors (`ray_member`).


class BatchEnv:
  """Steps a list of environments, slabs or worker processes as one batch.

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
        observation or a reward is NaN or infinite (one pass over the batch: under
        1 % of a batch step).

    Raises:
      ValueError: `envs` is empty.
      SpaceMismatchError: Two environments have different spaces; names the first odd one.
    """
    if not envs:
      raise ValueError('BatchEnv needs at least one environment.')
    self._restarts = batch_restarts.WorkerRestarts(max_restarts)
    self._members = batch_member.as_members(envs, self._restarts)
    self._sizes = [member.num_envs for member in self._members]
    self._starts = [member.index for member in self._members]
    self._size = int(sum(self._sizes))
    # The member that hosts each environment of the batch.
    self._member_of = np.repeat(np.arange(len(self._members)), self._sizes).tolist()
    self.observation_space = self._members[0].observation_space
    self.action_space = self._members[0].action_space
    for member in self._members:
      for kind in ('observation', 'action'):
        batch_checks.check_same_space(kind, member.index, getattr(member, f'{kind}_space'),
                                      getattr(self, f'{kind}_space'))
    self._check_actions = batch_checks.ActionCheck(self.action_space, self._size)
    self._check_finite = check_finite
    self._closed = False
    self._in_flight = None  # (kind, request, promises) that `step_async` or `reset_async` sent.

  @classmethod
  def from_constructors(cls, constructor, num_envs, processes=True, envs_per_process=1,
                        max_restarts=0, check_finite=True, **process_kwargs):
    """Builds a batch of `num_envs` environments from constructors.

    Args:
      constructor: Callable returning a `gymnasium.Env`, or a sequence of `num_envs` such
        callables (for example with different configurations).
      num_envs: Number of environments in the batch.
      processes: As for `from_slab_constructors`.
      envs_per_process: Environments per slab: each worker (or, in-process, each
        `SyncVectorEnv`) steps this many environments together. The last slab may be
        smaller.
      max_restarts: As for `from_slab_constructors`.
      check_finite: As for `from_slab_constructors`.
      **process_kwargs: As for `from_slab_constructors`.

    Returns:
      A `BatchEnv`.
    """
    return cls.from_slab_constructors(
        batch_member.slab_constructors(constructor, num_envs, envs_per_process),
        processes=processes, max_restarts=max_restarts, check_finite=check_finite,
        **process_kwargs)

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
    members = batch_member.start_members(slab_constructors, processes, **process_kwargs)
    try:
      return cls(members, max_restarts=max_restarts, check_finite=check_finite)
    except BaseException:
      batch_member.close_all(members)
      raise

  def __len__(self):
    return self._size

  @property
  def workers(self):
    """The `ExternalProcess` workers of the batch (in pools or alone), in batch order."""
    return [worker for member in self._members for worker in getattr(member, 'workers', [member])
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
    environments. In-process members step here, at once. Raises `ActionError` as
    `step` does, before anything is sent, and RuntimeError if a step or reset is
    already in flight.
    """
    self._check_idle('step_async')
    actions = self._check_actions(actions)
    if len(self._members) == 1:  # The common case: one pool, group or slab takes all.
      self._in_flight = ('step', None, [self._members[0].step_batch(actions, False, False)])
      return
    self._in_flight = ('step', None, [
        member.step_batch(actions[start:start + size], blocking=False, copy=False)
        for member, start, size in zip(self._members, self._starts, self._sizes)])

  def step_wait(self):
    """The results of the step sent by `step_async`, as `step` returns them (and its
    errors); RuntimeError if no step is in flight."""
    _, promises = self._take_in_flight('step', 'step_wait')
    results, died = batch_member.gather(promises, self._members)
    for position, error in died:
      results[position] = self._restarts.interrupted_step(self._members[position], error)
    observ, reward, terminated, truncated, infos = batch_member.join_steps(results, self._sizes)
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
    Raises as `reset` does, before anything is sent, and RuntimeError if a step or
    reset is already in flight."""
    self._check_idle('reset_async')
    indices = batch_index.check_indices(indices, self._size)
    seeds = batch_index.check_seeds(seeds, len(indices))
    self._restarts.begin_reset(indices)
    requests, counts, order = batch_index.split_by_member(
        indices, seeds, self._member_of, self._starts)
    self._in_flight = ('reset', (indices, requests, counts, order), [
        self._members[position].reset_batch(local, member_seeds, blocking=False)
        for position, local, member_seeds in requests])

  def reset_wait(self):
    """The results of the reset sent by `reset_async`, as `reset` returns them;
    RuntimeError if no reset is in flight."""
    (indices, requests, counts, order), promises = self._take_in_flight('reset', 'reset_wait')
    if not len(indices):
      return gymnasium.vector.utils.create_empty_array(self.observation_space, 0), {}
    members = [self._members[position] for position, _, _ in requests]
    results, died = batch_member.gather(promises, members)
    for slot, error in died:
      _, local, member_seeds = requests[slot]
      results[slot] = self._restarts.reset_restarted(members[slot], error, local, member_seeds)
    observ, infos = batch_member.join_resets(results, counts, order)
    self._restarts.end_reset(indices, observ, self._size)
    if self._check_finite:
      batch_checks.check_finite(observ, None)
    return observ, infos

  def close(self):
    """Closes every environment and worker. Safe to call more than once."""
    if not self._closed:
      self._closed = True
      batch_member.close_all(self._members)

  def __enter__(self):
    return self

  def __exit__(self, *exc_info):
    self.close()

  def _check_open(self):
    if self._closed:
      raise errors.ClosedError('BatchEnv is closed.')

  def _check_idle(self, caller):
    self._check_open()
    if self._in_flight is not None:
      raise RuntimeError(f'BatchEnv.{caller}: a {self._in_flight[0]} is already in flight; '
                         f'call {self._in_flight[0]}_wait first.')

  def _take_in_flight(self, kind, caller):
    """The request and promises sent by `{kind}_async`, now taken off the batch."""
    self._check_open()
    if self._in_flight is None or self._in_flight[0] != kind:
      raise RuntimeError(f'BatchEnv.{caller}: no {kind} in flight; call {kind}_async first.')
    _, request, promises = self._in_flight
    self._in_flight = None
    return request, promises
