"""Static TensorFlow shapes and dtypes of Gymnasium spaces, for the in-graph environments.

`tf.numpy_function` needs to know the dtype of every output before it runs, and
the variables that hold observations and actions need fixed shapes. Both come
from the spaces: `space_spec` turns a space into a `tf.TensorSpec` of one
environment's value, and rejects the spaces that have no single array form
(Dict, Tuple, Text, Graph) with an error that says which space and what to do.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
import tensorflow as tf

_LOG = logging.getLogger(__name__)
# Dropped info keys already logged by this process (warn_unexposed_infos).
_REPORTED: set[str] = set()


def space_spec(space: gymnasium.Space, what: str) -> tf.TensorSpec:
  """Returns the `tf.TensorSpec` of one value of a Gymnasium space.

  Args:
    space: a `gymnasium.Space` whose values are single arrays (Box, Discrete,
      MultiDiscrete, MultiBinary).
    what: what the space describes, e.g. 'observation space'; used in errors.

  Returns:
    `tf.TensorSpec(space.shape, space.dtype)`.

  Raises:
    TypeError: the space is not a `gymnasium.Space`, or its values are not
      single arrays of a fixed shape and numeric dtype.
  """
  if not isinstance(space, gymnasium.Space):
    raise TypeError(f'The {what} must be a gymnasium.Space, got {type(space).__name__}.')
  if space.shape is None or space.dtype is None:
    raise TypeError(
        f'The {what} {space} has no fixed array shape and dtype; flatten it first, '
        'e.g. with gymnasium.wrappers.FlattenObservation.')
  dtype = np.dtype(space.dtype)
  if not (np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.bool_)):
    raise TypeError(f'The {what} {space} has the non-numeric dtype {dtype}.')
  return tf.TensorSpec(tuple(space.shape), tf.as_dtype(dtype))


def info_spec(key: str, spec: Any) -> tf.TensorSpec:
  """Checks one entry of an `info_specs` mapping and returns it as a `tf.TensorSpec`.

  Args:
    key: the info key, a string.
    spec: a `tf.TensorSpec` or a `(shape, dtype)` pair for one environment's value.

  Returns:
    The `tf.TensorSpec`.

  Raises:
    TypeError: the key is not a string or starts with '_' (reserved for masks),
      or the spec is neither form.
  """
  if not isinstance(key, str) or key.startswith('_'):
    raise TypeError(f'Info key {key!r} must be a string that does not start with "_" '
                    '(those are the Gymnasium vector-format masks).')
  if isinstance(spec, tf.TensorSpec):
    return spec
  try:
    shape, dtype = spec
    return tf.TensorSpec(tuple(shape), tf.as_dtype(dtype))
  except (TypeError, ValueError) as error:
    raise TypeError(f'Spec of info key {key!r} must be a tf.TensorSpec or a (shape, dtype) '
                    f'pair, got {spec!r}.') from error


def warn_unexposed_infos(infos: Mapping[str, Any], info_specs: Mapping[str, Any],
                         warned: set[str]) -> None:
  """Logs, in one line, the info keys an in-graph environment drops, each key once per process.

  A process that builds many in-graph environments on one kind of environment (an
  evaluation, a test suite) hears about a dropped key once, not once per environment.

  Args:
    infos: the info mapping of a step or reset (keys starting with '_' are masks).
    info_specs: the keys the environment exposes in the graph.
    warned: set of the keys this environment already dropped or drops on purpose; updated.
  """
  new = sorted(key for key in infos
               if not key.startswith('_') and key not in info_specs and key not in warned)
  if new:
    warned.update(new)
    unreported = [key for key in new if key not in _REPORTED]
    _REPORTED.update(unreported)
    if unreported:
      _LOG.warning('Info keys not exposed in the graph (name them in info_specs to keep '
                   'them): %s.', ', '.join(map(repr, unreported)))
