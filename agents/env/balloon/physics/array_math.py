"""Two interchangeable math namespaces for the physics: numpy arrays or Python floats.

The sub-step physics (thermal, ACS, buoyancy) is written once against a small math
namespace `m` and runs either on numpy arrays over a slab of balloons (`NUMPY`) or on
plain Python floats (`SCALAR`). A slab of one balloon takes the scalar path: each numpy
call costs ~0.3 µs however small its array, and the 18 sub-steps of an agent step make
a few thousand of them, while the same arithmetic on floats is ten times cheaper. One
source for the equations keeps both paths identical; a test checks they agree.
"""

import math

import numpy as np


class _NumpyMath:
  """numpy ufuncs: the slab path."""

  is_scalar = False

  sqrt = staticmethod(np.sqrt)
  exp = staticmethod(np.exp)
  cbrt = staticmethod(np.cbrt)
  abs = staticmethod(np.abs)
  copysign = staticmethod(np.copysign)
  maximum = staticmethod(np.maximum)
  minimum = staticmethod(np.minimum)
  where = staticmethod(np.where)
  clip = staticmethod(np.clip)
  interp = staticmethod(np.interp)
  sin = staticmethod(np.sin)
  cos = staticmethod(np.cos)
  tan = staticmethod(np.tan)
  arcsin = staticmethod(np.arcsin)
  arctan2 = staticmethod(np.arctan2)
  radians = staticmethod(np.radians)
  degrees = staticmethod(np.degrees)
  mod = staticmethod(np.mod)
  hypot = staticmethod(np.hypot)

  @staticmethod
  def floor_index(value):
    """Floor of a non-negative array as integer indices."""
    return value.astype(np.intp)

  @staticmethod
  def lookup(table, row, column):
    """table[row][column] for index arrays."""
    return table[row, column]


def _scalar_where(condition, if_true, if_false):
  return if_true if condition else if_false


def _scalar_clip(value, low, high):
  return low if value < low else high if value > high else value


def _scalar_interp(value, xs, ys):
  if value <= xs[0]:
    return ys[0]
  for index in range(1, len(xs)):
    if value <= xs[index]:
      weight = (value - xs[index - 1]) / (xs[index] - xs[index - 1])
      return ys[index - 1] + weight * (ys[index] - ys[index - 1])
  return ys[-1]


class _ScalarMath:
  """math-module functions on Python floats: the one-balloon path."""

  is_scalar = True

  sqrt = staticmethod(math.sqrt)
  exp = staticmethod(math.exp)
  cbrt = staticmethod(lambda value: value ** (1.0 / 3.0))  # only for positive volumes
  abs = staticmethod(abs)
  copysign = staticmethod(math.copysign)
  maximum = staticmethod(max)
  minimum = staticmethod(min)
  where = staticmethod(_scalar_where)
  clip = staticmethod(_scalar_clip)
  interp = staticmethod(_scalar_interp)
  sin = staticmethod(math.sin)
  cos = staticmethod(math.cos)
  tan = staticmethod(math.tan)
  arcsin = staticmethod(math.asin)
  arctan2 = staticmethod(math.atan2)
  radians = staticmethod(math.radians)
  degrees = staticmethod(math.degrees)
  mod = staticmethod(lambda value, divisor: value % divisor)  # sign of the divisor, as np.mod
  hypot = staticmethod(math.hypot)

  @staticmethod
  def floor_index(value):
    """Floor of a non-negative float as an int."""
    return int(value)

  @staticmethod
  def lookup(table, row, column):
    """table[row][column] for int indices."""
    return table[row][column]


NUMPY = _NumpyMath()
SCALAR = _ScalarMath()


def clip(value, low, high):
  """np.clip for arrays through two ufunc calls (np.clip's Python wrappers cost 3× more)."""
  return np.minimum(np.maximum(value, low), high)
