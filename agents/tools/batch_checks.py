"""Checks at the boundary between an agent and a batch of environments.

`ActionCheck` validates a batch of actions once, as one array: shape, dtype,
NaN and the bounds of the action space (Box bounds too, as Gymnasium's
`Box.contains` does), and names the first environment at fault. `check_finite`
finds NaN and infinity in a batch of observations or rewards, with one pass
over each array, and names the environment and the field.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium
import numpy as np

from agents.tools import errors
from agents.tools import slab as slab_lib

# Up to this many actions of a `Discrete` space, a Python list checks bounds fastest.
_SMALL_BATCH = 64


class ActionCheck:
  """Validates batches of actions for `size` environments sharing an action space."""

  def __init__(self, space: gymnasium.Space, size: int) -> None:
    self._space: Any = space  # Its shape and dtype are read only when it holds arrays.
    self._size = size
    self._array = slab_lib.is_array_space(space)
    self._shape = (size, *space.shape) if self._array else None  # type: ignore[misc]  # an array space's
    self._dtype: Any = np.dtype(space.dtype) if self._array else None
    self._integer = isinstance(space, (gymnasium.spaces.Discrete,
                                       gymnasium.spaces.MultiDiscrete,
                                       gymnasium.spaces.MultiBinary))
    self._bounds: Any = None  # (low, high) arrays, or None when unbounded.
    self._scalar_bounds: Any = None  # Python ints, for the small batches of a `Discrete` space.
    if self._integer:
      self._bounds = _integer_bounds(space)
      if isinstance(space, gymnasium.spaces.Discrete) and size <= _SMALL_BATCH:
        self._scalar_bounds = tuple(int(bound) for bound in self._bounds)
    elif isinstance(space, gymnasium.spaces.Box):
      low = np.where(space.bounded_below, space.low, -np.inf)
      high = np.where(space.bounded_above, space.high, np.inf)
      if np.isfinite(low).any() or np.isfinite(high).any():
        self._bounds = low, high
    self._cast_bounds: dict[Any, Any] = {}  # Box bounds in the float dtypes actions arrived in.

  def __call__(self, actions: Any) -> Any:
    """Returns the actions as an array of the space's dtype, or raises ActionError.

    Box bounds are compared in the dtype of the actions given, so an action clipped to
    the bounds in float32 (as PPO does) passes for a float64 space too, and reaches the
    environment inside the space's own bounds.
    """
    space, size = self._space, self._size
    if not self._array:
      actions = list(actions)
      if len(actions) != size:
        raise errors.ActionError(f'expected {size} actions, one per environment, '
                                 f'got {len(actions)}.')
      for index, action in enumerate(actions):
        if not space.contains(action):
          raise errors.ActionError(f'{action!r} is not in the action space {space}.', index)
      return actions
    actions = np.asarray(actions)
    if actions.shape != self._shape:
      raise errors.ActionError(
          f'expected an array of shape {self._shape} (batch of {size}, action shape '
          f'{space.shape}), got shape {actions.shape}.')
    if self._integer:
      if actions.dtype.kind not in 'iub':
        raise errors.ActionError(f'expected integer actions for {space}, got dtype '
                                 f'{actions.dtype}.')
      if self._scalar_bounds is not None:
        # A few scalars: Python's min and max of a list beat three NumPy calls.
        values = actions.tolist()
        low, high = self._scalar_bounds
        if low <= min(values) and max(values) <= high:
          return actions.astype(self._dtype, copy=False)
      low, high = self._bounds
      outside = np.logical_or(actions < low, actions > high)
      if np.logical_or.reduce(outside, axis=None):
        index = int(np.flatnonzero(outside.reshape(size, -1).any(1))[0])
        raise errors.ActionError(f'action {actions[index]} is outside {space}.', index)
      return actions.astype(self._dtype, copy=False)
    if actions.dtype.kind not in 'fiu':
      raise errors.ActionError(f'expected numeric actions for {space}, got dtype '
                               f'{actions.dtype}.')
    if actions.dtype.kind == 'f' and not np.isfinite(actions).all():
      index = int(np.flatnonzero(~np.isfinite(actions.reshape(size, -1)).all(1))[0])
      raise errors.ActionError(f'action {actions[index]} is not finite.', index)
    if self._bounds is None:
      return actions.astype(self._dtype, copy=False)
    self._check_box_bounds(actions)
    if actions.dtype.kind == 'f' and actions.dtype.itemsize < self._dtype.itemsize:
      # A bound rounded to the narrower dtype may lie just outside the space's own bound;
      # clipping moves such values by that rounding only.
      return np.clip(actions.astype(self._dtype), *self._bounds)
    return actions.astype(self._dtype, copy=False)

  def _check_box_bounds(self, actions: np.ndarray) -> None:
    low, high = self._bounds
    if actions.dtype.kind == 'f':
      cast = self._cast_bounds.get(actions.dtype)
      if cast is None:
        cast = self._cast_bounds[actions.dtype] = (low.astype(actions.dtype),
                                                   high.astype(actions.dtype))
      low, high = cast
    below, above = actions < low, actions > high
    if not np.logical_or.reduce(np.logical_or(below, above), axis=None):
      return
    size = self._size
    index = int(np.flatnonzero((below | above).reshape(size, -1).any(1))[0])
    side, bounds, name = (below, low, 'lower') if below[index].any() else (above, high, 'upper')
    flat = int(np.flatnonzero(side[index].reshape(-1))[0])
    indices = np.unravel_index(flat, self._space.shape)
    component = int(indices[0]) if len(indices) == 1 else tuple(int(c) for c in indices)
    value = actions[index].reshape(-1)[flat]
    bound = np.broadcast_to(bounds, self._space.shape).reshape(-1)[flat]
    raise errors.ActionError(
        f'component {component} is {value}, beyond the {name} bound {bound} of '
        f'{self._space}; clip actions to the bounds before stepping (PPO does).', index)


def check_finite(observ: Any, reward: Any) -> None:
  """Raises NonFiniteError if a float observation or reward of the batch is NaN or inf.

  Args:
    observ: Observations [B, ...] (arrays of other dtypes, and nested observations,
      are not checked).
    reward: Rewards [B], or None.

  Raises:
    NonFiniteError: Names the field, the first environment at fault and the value.
  """
  # Called on every batch step: the common case is two type tests and two dot products.
  if _all_finite(reward) and _all_finite(observ):
    return
  for field, values in (('reward', reward), ('observation', observ)):
    if _all_finite(values):
      continue
    rows = values.reshape(len(values), -1)
    index = int(np.flatnonzero(~np.isfinite(rows).all(1))[0])
    component = int(np.flatnonzero(~np.isfinite(rows[index]))[0])
    where = '' if values.ndim == 1 else (
        f'[{", ".join(str(int(c)) for c in np.unravel_index(component, values.shape[1:]))}]')
    raise errors.NonFiniteError(
        field, index, detail=f'{field}{where} is {rows[index, component]} (turn this '
        'check off with check_finite=False)')


def _all_finite(values: Any) -> bool:
  """Whether `values` is not a float array (nothing to check) or every value is finite.

  One pass without a temporary array in the common case: NaN and infinity propagate
  into the sum of squares (a BLAS dot), and only when that sum is not finite (perhaps
  merely overflowed) is each value tested.
  """
  if not isinstance(values, np.ndarray) or values.dtype.kind != 'f':
    return True
  flat = values.ravel()
  # Huge finite values overflow the sum: that is what the second test is for, not a warning.
  with np.errstate(over='ignore', invalid='ignore'):
    total = flat.dot(flat)
  return math.isfinite(total) or bool(np.isfinite(flat).all())


def check_same_space(kind: str, index: int, space: gymnasium.Space,
                     expected: gymnasium.Space) -> None:
  """Raises SpaceMismatchError naming environment `index` if `space` is not `expected`."""
  if space != expected:
    raise errors.SpaceMismatchError(
        f'Environment {index} has {kind} space {space}, but environment 0 has {expected}; '
        f'all environments of a batch must agree.')


def _integer_bounds(space: Any) -> tuple[np.ndarray, np.ndarray]:
  if isinstance(space, gymnasium.spaces.Discrete):
    return np.asarray(space.start), np.asarray(space.start + space.n - 1)
  if isinstance(space, gymnasium.spaces.MultiDiscrete):
    return np.asarray(space.start), np.asarray(space.start + space.nvec - 1)
  return np.zeros(space.shape, np.int64), np.ones(space.shape, np.int64)  # MultiBinary.
