"""A uniform batched view of one environment or of a vector environment ("slab").

BatchEnv and the worker processes of ExternalProcess both step groups of
environments. A group is either a plain `gymnasium.Env` (a slab of one) or a
`gymnasium.vector.VectorEnv` whose autoreset is disabled, so the caller decides
when each environment resets (`reset(seed=[...], options={'reset_mask': mask})`).
`Slab` hides the difference: actions, observations, rewards and flags always
carry a leading axis of the slab's size.

Infos stay in each environment's own form ("raw"): a plain dict for a single
environment, Gymnasium's vector format (key -> array, '_key' -> mask) for a
vector environment. `vector_infos` turns raw infos into the vector format and
`concatenate_infos` joins the vector infos of several slabs into one batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from agents.tools import errors

# A batch member's step: (observ[K, ...], reward[K], terminated[K], truncated[K], infos);
# an observation is an array, or a dict / tuple of them for nested spaces.
StepResult: TypeAlias = tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]
# A batch member's reset: (observ[N, ...], infos).
ResetResult: TypeAlias = tuple[Any, dict[str, Any]]

# Spaces whose values are single numpy arrays of a fixed shape and dtype; only these
# travel through shared memory and get validated as one array.
ARRAY_SPACES = (gymnasium.spaces.Box, gymnasium.spaces.Discrete,
                gymnasium.spaces.MultiDiscrete, gymnasium.spaces.MultiBinary)


def is_array_space(space: gymnasium.Space) -> bool:
  """Returns whether values of `space` are single numpy arrays of a fixed shape."""
  return isinstance(space, ARRAY_SPACES)


class Slab:
  """Steps a `gymnasium.Env` or an autoreset-disabled `VectorEnv` as K environments.

  Attributes:
    env: The wrapped environment.
    is_vector: Whether `env` is a `VectorEnv`.
    num_envs: Number of environments K (1 for a plain environment).
    observation_space: The observation space of one environment.
    action_space: The action space of one environment.
  """

  def __init__(self, env: Any) -> None:
    self.env = env
    self.is_vector = isinstance(env, VectorEnv)
    if self.is_vector:
      mode = env.metadata.get('autoreset_mode')
      if mode not in (AutoresetMode.DISABLED, AutoresetMode.DISABLED.value):
        raise ValueError(
            f'A vector environment used as a slab must disable autoreset '
            f"(metadata['autoreset_mode'] == AutoresetMode.DISABLED), got {mode!r}; "
            'the batch resets finished environments itself.')
      self.num_envs = env.num_envs
      self.observation_space = env.single_observation_space
      self.action_space = env.single_action_space
    elif isinstance(env, gymnasium.Env):
      self.num_envs = 1
      self.observation_space = env.observation_space
      self.action_space = env.action_space
    else:
      raise TypeError(f'Expected a gymnasium.Env or gymnasium.vector.VectorEnv, got {type(env)}.')
    # Which environments ended an episode and have not been reset since; stepping one
    # raises `EpisodeEndedError` unless the environment declares it may step on.
    self.ended = np.zeros(self.num_envs, bool)
    self.tracks_ends = not getattr(getattr(env, 'unwrapped', env), 'steps_finished_episodes',
                                   False)

  def check_not_ended(self) -> None:
    """Raises `EpisodeEndedError` if an environment is stepped past its episode's end."""
    if self.ended.any():
      raise errors.EpisodeEndedError(np.flatnonzero(self.ended).tolist(), self.num_envs)

  def record_ends(self, terminated: np.ndarray | bool, truncated: np.ndarray | bool) -> None:
    """Notes the environments whose episode just ended (bool arrays or scalars)."""
    if self.tracks_ends:
      self.ended |= np.logical_or(terminated, truncated)

  def step(self, actions: Any) -> StepResult:
    """Steps every environment of the slab.

    Args:
      actions: Batched actions with a leading axis of size `num_envs`.

    Returns:
      Tuple (observ[K, ...], reward float64[K], terminated bool[K], truncated bool[K],
      raw_info), where raw_info is the environment's own info (dict or vector format).
    """
    self.check_not_ended()
    if self.is_vector:
      observ, reward, terminated, truncated, info = self.env.step(actions)
      terminated, truncated = np.asarray(terminated, bool), np.asarray(truncated, bool)
      self.record_ends(terminated, truncated)
      return observ, np.asarray(reward, np.float64), terminated, truncated, info
    observ, reward, terminated, truncated, info = self.env.step(actions[0])
    terminated, truncated = np.array([terminated], bool), np.array([truncated], bool)
    self.record_ends(terminated, truncated)
    return (batch_single(self.observation_space, observ), np.array([reward], np.float64),
            terminated, truncated, info)

  def reset(self, indices: Sequence[int] | np.ndarray | None = None,
            seeds: Sequence[int | None] | None = None) -> ResetResult:
    """Resets some environments of the slab.

    Args:
      indices: Positions within the slab to reset; None resets all of them.
      seeds: One seed (or None) per entry of `indices`, or None.

    Returns:
      Tuple (observ[len(indices), ...], infos in vector format of length len(indices)).
    """
    indices = np.arange(self.num_envs) if indices is None else np.asarray(indices, np.int64)
    seeds = [None] * len(indices) if seeds is None else [_plain_seed(s) for s in seeds]
    if not self.is_vector:
      if len(indices) != 1 or indices[0] != 0:
        raise IndexError(f'A single environment has only index 0, got {indices.tolist()}.')
      observ, info = self.env.reset(seed=seeds[0])
      self.ended[0] = False
      return batch_single(self.observation_space, observ), vector_infos(info, 1, False)
    mask = np.zeros(self.num_envs, bool)
    mask[indices] = True
    all_seeds: list[int | None] = [None] * self.num_envs
    for index, seed in zip(indices, seeds):
      all_seeds[index] = seed
    observ, info = self.env.reset(seed=all_seeds, options={'reset_mask': mask})
    self.ended[indices] = False
    return select(observ, indices), select(info, indices)

  def close(self) -> None:
    self.env.close()


def make_sync_slab(constructors: Iterable[Callable[[], gymnasium.Env]]) -> VectorEnv:
  """Builds a slab of environments stepped together in one process.

  Args:
    constructors: Callables that each return a `gymnasium.Env`.

  Returns:
    A `SyncVectorEnv` with autoreset disabled, so the caller decides when to reset.
  """
  return gymnasium.vector.SyncVectorEnv(
      list(constructors), copy=False, autoreset_mode=AutoresetMode.DISABLED)


def batch_single(space: gymnasium.Space, value: Any) -> Any:
  """Adds a leading axis of size one to one environment's value of `space`."""
  if isinstance(value, np.ndarray):
    return value[None]
  if is_array_space(space):
    return np.asarray(value, space.dtype)[None]
  out: Any = gymnasium.vector.utils.create_empty_array(space, 1)
  return gymnasium.vector.utils.concatenate(space, [value], out)


def select(value: Any, indices: Any) -> Any:
  """Selects rows of a batched value (array, or dict/tuple of them, e.g. vector infos)."""
  if isinstance(value, dict):
    return {key: select(item, indices) for key, item in value.items()}
  if isinstance(value, tuple):
    return tuple(select(item, indices) for item in value)
  return np.asarray(value)[indices]


def vector_infos(raw_info: Any, num_envs: int, is_vector: bool) -> dict[str, Any]:
  """Returns a slab's raw info in Gymnasium's vector format (a plain dict becomes length one).

  Args:
    raw_info: The info of a step or reset: a vector-format dict from a vector slab, or a
      plain environment's dict.
    num_envs: The slab's size (1 for a plain environment).
    is_vector: Whether `raw_info` comes from a vector slab (then it is returned as is).
  """
  if is_vector:
    return raw_info
  if not raw_info:
    return {}
  assert num_envs == 1, num_envs  # A plain environment is a slab of one.
  return _vector_info_of_one(raw_info)


def _vector_info_of_one(info: dict[str, Any]) -> dict[str, Any]:
  """One environment's info in the vector format of a batch of one, as Gymnasium's
  `VectorEnv` builds it: numbers and arrays gain a leading axis, `final_obs` and other
  objects go into object arrays, dicts are converted recursively, and each key gets its
  '_key' mask."""
  vector: dict[str, Any] = {}
  for key, value in info.items():
    array: Any
    if isinstance(value, dict) and key != 'final_obs':
      array = _vector_info_of_one(value)
    elif key != 'final_obs' and (type(value) in (int, float, bool)
                                 or isinstance(value, np.number)):
      array = np.array([value], dtype=type(value))
    elif key != 'final_obs' and isinstance(value, np.ndarray):
      array = value[None].copy()
    else:
      array = np.empty(1, dtype=object)
      array[0] = value
    vector[key], vector[f'_{key}'] = array, np.ones(1, dtype=np.bool_)
  return vector


def stack_flat_infos(infos: Sequence[Any]) -> dict[str, Any] | None:
  """The vector-format infos of plain environments whose infos are all flat dicts of
  numbers with the same keys and types (MuJoCo's), built column by column; None when
  they are not (then convert each with `vector_infos` and join them).

  The same arrays as `concatenate_infos` of each one's `vector_infos`, at a fraction of
  the cost: one array per key instead of one per key and environment.
  """
  first = infos[0]
  keys = first.keys()
  for info in infos:
    if info.keys() != keys:
      return None
  vector: dict[str, Any] = {}
  for key, value in first.items():
    kind = type(value)
    if key == 'final_obs' or not (kind in (int, float, bool) or isinstance(value, np.number)):
      return None
    column = [info[key] for info in infos]
    if any(type(item) is not kind for item in column):
      return None
    vector[key], vector[f'_{key}'] = np.array(column, dtype=kind), np.ones(len(infos), bool)
  return vector


def concatenate(pieces: Sequence[Any]) -> Any:
  """Joins the batched observations of consecutive slabs; nested ones through `tf.nest`."""
  if isinstance(pieces[0], np.ndarray):
    return np.concatenate(pieces)
  import tensorflow as tf  # Only nested observations need it; keep plain batches light.
  return tf.nest.map_structure(lambda *parts: np.concatenate(parts), *pieces)


def concatenate_infos(parts: Sequence[dict[str, Any]], sizes: Sequence[int]) -> dict[str, Any]:
  """Joins vector-format infos of consecutive slabs into the infos of the whole batch.

  Args:
    parts: One vector-format info dict per slab.
    sizes: The number of environments of each slab.

  Returns:
    A vector-format info dict whose arrays have length `sum(sizes)`; environments whose
    slab lacked a key hold zeros there and False in the '_key' mask.
  """
  if len(parts) == 1:
    return parts[0]
  keys: list[str] = []
  for part in parts:
    keys.extend(key for key in part if key not in keys)
  if not keys:
    return {}
  merged: dict[str, Any] = {}
  for key in keys:
    present = [(part[key], size) for part, size in zip(parts, sizes) if key in part]
    if all(isinstance(value, dict) for value, _ in present):
      merged[key] = concatenate_infos(
          [part.get(key, {}) for part in parts], sizes)
      continue
    template = next(np.asarray(value) for value, _ in present)
    pieces = []
    for part, size in zip(parts, sizes):
      if key in part:
        pieces.append(np.asarray(part[key]))
      elif key.startswith('_'):
        pieces.append(np.zeros(size, bool))
      else:
        fill = None if template.dtype == object else 0
        pieces.append(np.full((size, *template.shape[1:]), fill, template.dtype))
    merged[key] = np.concatenate(pieces)
  return merged


def _plain_seed(seed: Any) -> int | None:
  return None if seed is None else int(seed)
