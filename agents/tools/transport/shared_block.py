"""The layout of a shared-memory block: where each array of a batch step lives.

A block holds, for K environments, the fields `actions` [K, *action shape] and
`observ` [K, *observation shape] (when the spaces hold plain arrays), then
`reward` float64[K], `terminated` bool[K] and `truncated` bool[K], each field
starting on its own 64-byte cache line. A layout is a plain dict
`field -> (byte offset, shape, dtype string)`, so it pickles into a request and
the worker maps the same arrays (`views`). BatchEnv builds one block for the
whole batch and hands each worker the rows of its slab (`slice_layout`).
"""

from __future__ import annotations

from collections.abc import Mapping
from multiprocessing import shared_memory
from typing import Any, TypeAlias

import numpy as np

from agents.tools import slab as slab_lib

# field -> (byte offset, shape, dtype string), as the module docstring says.
Layout: TypeAlias = dict[str, tuple[int, tuple[int, ...], str]]

_ALIGNMENT = 64


def shared_layout(num_envs: int, observation_space: Any, action_space: Any) -> tuple[Layout, int]:
  """Returns where each shared array lives in the block, and the block's size in bytes."""
  fields: list[tuple[str, tuple[int, ...], Any]] = []
  if slab_lib.is_array_space(action_space):
    fields.append(('actions', (num_envs, *action_space.shape), action_space.dtype))
  if slab_lib.is_array_space(observation_space):
    fields.append(('observ', (num_envs, *observation_space.shape), observation_space.dtype))
  fields.append(('reward', (num_envs,), np.float64))
  fields.append(('terminated', (num_envs,), np.bool_))
  fields.append(('truncated', (num_envs,), np.bool_))
  layout: Layout = {}
  offset = 0
  for name, shape, dtype in fields:
    dtype = np.dtype(dtype)
    layout[name] = (offset, tuple(int(n) for n in shape), dtype.str)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    offset += -(-nbytes // _ALIGNMENT) * _ALIGNMENT  # Fields never share a cache line.
  return layout, max(offset, _ALIGNMENT)


def slice_layout(layout: Layout, start: int, size: int) -> Layout:
  """Returns the layout of rows [start, start + size) of every field of `layout`."""
  sliced = {}
  for name, (offset, shape, dtype) in layout.items():
    row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * np.dtype(dtype).itemsize
    sliced[name] = (offset + start * row_bytes, (size, *shape[1:]), dtype)
  return sliced


def views(buffer: Any, layout: Layout) -> dict[str, np.ndarray]:
  """Returns numpy arrays for the fields of `layout` in `buffer` (no copy)."""
  return {name: np.ndarray(shape, np.dtype(dtype), buffer, offset)
          for name, (offset, shape, dtype) in layout.items()}


def supports_fast_step(arrays: Mapping[str, np.ndarray]) -> bool:
  """Whether a step can move actions and observations through these arrays alone."""
  return 'actions' in arrays and 'observ' in arrays


def release_memory(memory: shared_memory.SharedMemory) -> None:
  """Unmaps and unlinks a shared-memory block; safe to call when it is already gone."""
  close_quietly(memory)
  try:
    memory.unlink()
  except FileNotFoundError:
    pass


def close_quietly(memory: shared_memory.SharedMemory) -> None:
  """Unmaps a block, unless a view of it is still alive (then the mapping goes with it)."""
  try:
    memory.close()
  except BufferError:
    pass
