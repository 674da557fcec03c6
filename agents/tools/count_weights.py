"""Counts the trainable weights of a model, optionally only those whose names match."""

import re

import numpy as np
import tensorflow as tf


def count_weights(module, include=None, exclude=None):
  """Returns the number of trainable scalar weights of a `tf.Module` or Keras model.

  Args:
    module: A `tf.Module` (Keras models and layers are modules too) or a nested
      structure of `tf.Variable`s.
    include: Optional regex; only variables whose name it matches (`re.search`) count.
    exclude: Optional regex; variables whose name it matches do not count.

  Returns:
    The total number of scalar entries, as a Python int.

  Raises:
    ValueError: A variable's shape is not fully defined.
  """
  if isinstance(module, tf.Module) or hasattr(module, 'trainable_variables'):
    variables = module.trainable_variables
  else:
    variables = [v for v in tf.nest.flatten(module) if getattr(v, 'trainable', True)]
  include = include and re.compile(include)
  exclude = exclude and re.compile(exclude)
  total = 0
  for variable in variables:
    name = variable.name
    if include and not include.search(name):
      continue
    if exclude and exclude.search(name):
      continue
    shape = variable.shape
    if not shape.is_fully_defined():
      raise ValueError(f'Variable {name} has a shape {shape} that is not fully defined.')
    total += int(np.prod(shape.as_list(), dtype=np.int64))
  return total
