"""Where each environment of a batch lives: checking batch indices, routing them to members.

A batch of B environments is the concatenation of its members' slabs: member
`p` hosts the batch indices `starts[p] .. starts[p] + sizes[p] - 1`, and
`member_of[i]` is the member hosting index `i`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# One member's part of a reset: (member position, local indices, their seeds or None).
Request = tuple[int, list[int], Sequence[int | None] | None]


def check_indices(indices: Sequence[int] | np.ndarray | None, size: int) -> np.ndarray:
  """Returns the indices to reset as an int64 array, all of them when None.

  Raises:
    IndexError: An index is not an integer, is outside the batch of `size`, or repeats.
  """
  if indices is None:
    return np.arange(size)
  indices = np.asarray(indices).reshape(-1)
  if indices.size and indices.dtype.kind not in 'iu':
    raise IndexError(f'Indices to reset must be integers, got dtype {indices.dtype}.')
  indices = indices.astype(np.int64)
  if not indices.size:
    return indices
  index_list = indices.tolist()
  if min(index_list) < 0 or max(index_list) >= size:
    outside = indices[(indices < 0) | (indices >= size)]
    raise IndexError(
        f'Index {outside[0]} to reset is outside the batch of {size} environments.')
  if len(set(index_list)) != len(index_list):
    raise IndexError(f'Indices to reset repeat an environment: {index_list}.')
  return indices


def check_seeds(seeds: Sequence[int | None] | None, count: int) -> list[int | None] | None:
  """Returns the seeds as a list of ints and Nones (None stays None).

  Raises:
    ValueError: There are seeds, but not `count` of them.
  """
  if seeds is None:
    return None
  seeds = list(seeds)
  if len(seeds) != count:
    raise ValueError(f'Got {len(seeds)} seeds for {count} indices to reset.')
  return [None if seed is None else int(seed) for seed in seeds]


def split_by_member(
    indices: Sequence[int] | np.ndarray, seeds: Sequence[int | None] | None,
    member_of: Sequence[int] | np.ndarray, starts: Sequence[int] | np.ndarray,
) -> tuple[list[Request], list[int],
           np.ndarray | None]:
  """Splits the environments to reset by the member that hosts them.

  Args:
    indices: Batch indices, checked (an array or a list).
    seeds: One int or None per index, or None.
    member_of: The member position of each batch index.
    starts: The first batch index of each member.

  Returns:
    Requests (member position, local indices, seeds or None) for the members concerned,
    in batch order; the number of indices in each; and the permutation that puts the
    members' results, joined in that order, into the order of `indices` (None when
    they are in that order already).
  """
  index_list = indices.tolist() if isinstance(indices, np.ndarray) else list(indices)
  if len(starts) == 1:  # One member: nothing to split or reorder.
    return [(0, [index - starts[0] for index in index_list], seeds)], [len(index_list)], None
  # Member position -> positions in `indices` of its environments.
  slots_of: dict[int, list[int]] = {}
  for slot, index in enumerate(index_list):
    slots_of.setdefault(member_of[index], []).append(slot)
  requests: list[tuple[int, list[int], Sequence[int | None] | None]]
  requests = []
  counts: list[int] = []
  joined: list[int] = []
  for position in sorted(slots_of):
    slots = slots_of[position]
    local = [index_list[slot] - starts[position] for slot in slots]
    member_seeds = None if seeds is None else [seeds[slot] for slot in slots]
    requests.append((position, local, member_seeds))
    counts.append(len(slots))
    joined.extend(slots)
  if joined == list(range(len(joined))):
    return requests, counts, None
  return requests, counts, np.argsort(joined, kind='stable')
