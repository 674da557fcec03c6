"""The layout of a shared-memory block: where each array of a batch step lives.

A block holds, for K environments, the fields `actions` [K, *action shape] and
`observ` [K, *observation shape] (when the spaces hold plain arrays), then
`reward` float64[K], `terminated` bool[K] and `truncated` bool[K], each field
starting on its own 64-byte cache line. A layout is a plain dict
`field -> (byte offset, shape, dtype string)`, so it pickles into a request and
the worker maps the same arrays (`views`). BatchEnv builds one block for the
whole batch and hands each worker the rows of its slab (`slice_layout`).
"""

import numpy as np

from agents.tools import slab as slab_lib

_ALIGNMENT = 64


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
    offset += -(-nbytes // _ALIGNMENT) * _ALIGNMENT  # Fields never share a cache line.
  return layout, max(offset, _ALIGNMENT)


def slice_layout(layout, start, size):
  """Returns the layout of rows [start, start + size) of every field of `layout`."""
  sliced = {}
  for name, (offset, shape, dtype) in layout.items():
    row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * np.dtype(dtype).itemsize
    sliced[name] = (offset + start * row_bytes, (size, *shape[1:]), dtype)
  return sliced


def views(buffer, layout):
  """Returns numpy arrays for the fields of `layout` in `buffer` (no copy)."""
  return {name: np.ndarray(shape, np.dtype(dtype), buffer, offset)
          for name, (offset, shape, dtype) in layout.items()}


def supports_fast_step(arrays):
  """Whether a step can move actions and observations through these arrays alone."""
  return 'actions' in arrays and 'observ' in arrays


def release_memory(memory):
  """Unmaps and unlinks a shared-memory block; safe to call when it is already gone."""
  close_quietly(memory)
  try:
    memory.unlink()
  except FileNotFoundError:
    pass


def close_quietly(memory):
  """Unmaps a block, unless a view of it is still alive (then the mapping goes with it)."""
  try:
    memory.close()
  except BufferError:
    pass
