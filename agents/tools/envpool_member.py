"""EnvPool as a member of a `BatchEnv`: its C++ threads step the whole batch.

`environment.backend: envpool` builds the batch from one `EnvPoolMember`, which steps
an EnvPool pool in synchronous mode (`batch_size == num_envs`, results in environment
order) behind the `batch_member.BatchMember` interface, so `BatchEnv`, the in-graph
batch and the fused step run over it unchanged. As everywhere else, nothing resets
automatically: the caller resets the environments whose episode ended, and stepping
one before that raises `EpisodeEndedError`. EnvPool seeds environment `i` once, with
`seed + i`; the first reset of each environment may ask for that seed (as the in-graph
batch does), any other seed is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agents.tools import errors

INSTALL = "pip install 'agents[envpool]'"  # What makes `import envpool` work.
# Keys of EnvPool's infos that are its bookkeeping, not the environment's.
_OWN_KEYS = frozenset(('env_id', 'players', 'elapsed_step'))

StepResult = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]
ResetResult = tuple[np.ndarray, dict[str, Any]]


def import_envpool(task: str) -> Any:
  """The `envpool` module; ImportError naming `task` and the install command if missing."""
  try:
    import envpool
  except ImportError as error:
    raise ImportError(f'environment.backend: envpool (for {task!r}) needs the envpool '
                      f'package: {INSTALL}') from error
  return envpool


def check_task(task: str) -> None:
  """Raises ValueError naming `task` (and EnvPool's tasks like it) if EnvPool lacks it."""
  tasks = import_envpool(task).list_all_envs()
  if task not in tasks:
    family = task.split('-')[0].lower()
    near = [name for name in tasks if name.split('-')[0].lower() == family]
    hint = f' it has {", ".join(near)}' if near else ' see envpool.list_all_envs()'
    raise ValueError(f'environment.backend: envpool has no task {task!r};{hint}, or use '
                     "environment.backend: gymnasium.")


class EnvPoolMember:
  """`num_envs` environments of one EnvPool task, stepped by EnvPool's threads.

  Attributes:
    index: Batch index of the first environment, named in errors.
    num_envs: Number of environments.
    observation_space: Observation space of one environment.
    action_space: Action space of one environment.
  """

  is_vector = True  # Infos come out in vector format.

  def __init__(self, task: str, num_envs: int, seed: int = 0, num_threads: int = 0,
               index: int = 0, **kwargs: Any) -> None:
    """Makes the pool.

    Args:
      task: EnvPool task id, e.g. 'HalfCheetah-v5'.
      num_envs: Number of environments.
      seed: Environment `i` is seeded with `seed + i`.
      num_threads: EnvPool's threads; 0 lets EnvPool choose.
      index: Batch index of the first environment.
      **kwargs: Passed to `envpool.make_gymnasium` (e.g. max_episode_steps).

    Raises:
      ImportError: envpool is not installed (names the install command).
      ValueError: EnvPool has no such task.
    """
    check_task(task)
    self._pool = import_envpool(task).make_gymnasium(
        task, num_envs=num_envs, batch_size=num_envs, num_threads=num_threads, seed=seed,
        **kwargs)
    self.index, self.num_envs, self._seed = index, num_envs, seed
    self.observation_space = self._pool.observation_space
    self.action_space = self._pool.action_space
    self._ended = np.zeros(num_envs, bool)  # Episodes ended and not reset since.
    self._seeded = np.zeros(num_envs, bool)  # Environments reset at least once.
    self._all = np.arange(num_envs, dtype=np.int32)

  def step_batch(self, actions: np.ndarray, blocking: bool = True,
                 copy: bool = True) -> StepResult | Callable[[], StepResult]:
    """Steps every environment: (observ, reward, terminated, truncated, infos), or a
    callable returning it (the step runs here, at once)."""
    del copy  # EnvPool's arrays are fresh each step.
    if self._ended.any():
      positions = np.flatnonzero(self._ended).tolist()
      raise errors.name_environment(errors.EpisodeEndedError(positions, self.num_envs),
                                    self.index, self.num_envs)
    observ, reward, terminated, truncated, info = self._pool.step(actions, self._all)
    self._ended = terminated | truncated
    result = observ, reward, terminated, truncated, _vector_infos(info)
    return result if blocking else lambda: result

  def reset_batch(self, indices: Sequence[int] | None = None,
                  seeds: Sequence[int | None] | None = None,
                  blocking: bool = True) -> ResetResult | Callable[[], ResetResult]:
    """Resets the environments at `indices` (None: all), in that order: (observ, infos),
    or a callable returning it."""
    ids = self._all if indices is None else np.asarray(indices, np.int32)
    if seeds is not None:
      self._check_seeds(ids, seeds)
    observ, info = self._pool.reset(ids)
    self._ended[ids] = False
    self._seeded[ids] = True
    result = observ, _vector_infos(info)
    return result if blocking else lambda: result

  def _check_seeds(self, ids: np.ndarray, seeds: Sequence[int | None]) -> None:
    for position, seed in zip(ids.tolist(), seeds):
      if seed is not None and (self._seeded[position] or seed != self._seed + position):
        raise ValueError(
            f'Environment {self.index + position}: EnvPool seeds its environments once, '
            f'environment i with seed + i ({self._seed + position} here), and cannot reseed '
            f'it with {seed}.')

  def restart(self) -> None:
    """Refused: EnvPool's environments live in this process."""
    raise errors.WorkerError('an EnvPool member cannot be restarted.', self.index,
                             self.num_envs)

  def close(self) -> None:
    """Closes the pool (EnvPool frees its threads when the pool is collected)."""
    close = getattr(self._pool, 'close', None)
    if close is not None:
      close()


def _vector_infos(info: dict[str, Any]) -> dict[str, Any]:
  """EnvPool's infos in Gymnasium's vector format: the environment's own arrays, each
  with its all-true '_key' mask."""
  infos = {}
  for key, value in info.items():
    if key not in _OWN_KEYS and isinstance(value, np.ndarray):
      infos[key] = value
      infos['_' + key] = np.ones(len(value), bool)
  return infos
