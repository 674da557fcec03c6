"""Nested structures of tuples, lists, namedtuples and dicts: BatchPPO's `tools.nested`.

    nested.map(lambda x: 2 * x, {'a': (1, 2), 'b': 3})    # {'a': (2, 4), 'b': 6}
    nested.zip((1, 2), (3, 4))                            # ((1, 3), (2, 4))
    nested.flatten({'b': [1, 2], 'a': 3})                 # (3, 1, 2): dict values by key
    nested.filter(lambda x: x > 1, (1, 2, [3, 0]))        # (2, [3])

Several structures given to `map`, `zip` or `filter` must have the same nesting;
leaves are everything else (arrays and tensors included). `filter` drops the leaves
that fail the predicate and the containers left empty (a namedtuple keeps its fields,
None where empty). `flatten=True` returns the leaves of the result as a flat tuple.
For TensorFlow's own structures (`tf.nest`) these agree with `tf.nest.map_structure`
and `tf.nest.flatten` on tuples, lists and dicts.
"""

import builtins

__all__ = ['filter', 'flatten', 'map', 'zip']


def _is_namedtuple(value):
  return isinstance(value, tuple) and hasattr(value, '_fields')


def _rebuild(template, items):
  """A container of `template`'s type holding `items`."""
  if _is_namedtuple(template):
    return type(template)(*items)
  return type(template)(items)


def _children(structures):
  """The kind of the structures ('sequence', 'dict' or None for leaves) after checking
  that they match."""
  if builtins.all(isinstance(s, (tuple, list)) for s in structures):
    if len({len(s) for s in structures}) > 1:
      raise ValueError(f'Cannot combine sequences of different lengths: '
                       f'{[len(s) for s in structures]}.')
    return 'sequence'
  if builtins.all(isinstance(s, dict) for s in structures):
    if len({frozenset(s) for s in structures}) > 1:
      raise ValueError(f'Cannot combine dicts with different keys: '
                       f'{[sorted(s) for s in structures]}.')
    return 'dict'
  return None


def map(function, *structures, flatten=False):  # pylint: disable=redefined-builtin,redefined-outer-name
  """Applies `function` to the leaves (one argument per structure) and keeps the nesting.

  Args:
    function: called with the corresponding leaf of every structure.
    *structures: one or more structures of the same nesting.
    flatten: return the result's leaves as a flat tuple instead.

  Returns:
    The mapped structure (or its leaves).

  Raises:
    ValueError: the structures' nestings differ.
  """
  def apply(*parts):
    kind = _children(parts)
    if kind == 'sequence':
      return _rebuild(parts[0], [apply(*group) for group in builtins.zip(*parts)])
    if kind == 'dict':
      return type(parts[0])({key: apply(*(part[key] for part in parts)) for key in parts[0]})
    return function(*parts)

  if not structures:
    return ()
  result = apply(*structures)
  return _flatten(result) if flatten else result


def zip(*structures, flatten=False):  # pylint: disable=redefined-builtin,redefined-outer-name
  """Combines the corresponding leaves of several structures into tuples.

  With one structure, its leaves stay as they are.
  """
  return map(lambda *leaves: leaves if len(leaves) > 1 else leaves[0], *structures,
             flatten=flatten)


def _flatten(structure):
  if isinstance(structure, dict):
    structure = [structure[key] for key in sorted(structure)]
  if isinstance(structure, (tuple, list)):
    return tuple(leaf for part in structure for leaf in _flatten(part))
  return (structure,)


def flatten(structure):
  """The leaves of a structure as a flat tuple; dict values in the order of their keys."""
  return _flatten(structure)


# pylint: disable-next=redefined-builtin,redefined-outer-name
def filter(predicate, *structures, flatten=False):
  """Keeps the leaves for which `predicate` is true, dropping containers left empty.

  With several structures, `predicate` gets one leaf of each and the kept leaves are
  tuples of them.

  Args:
    predicate: called with the corresponding leaf of every structure.
    *structures: one or more structures of the same nesting.
    flatten: return the kept leaves as a flat tuple instead.

  Returns:
    The filtered structure (or its leaves).

  Raises:
    ValueError: the structures' nestings differ.
  """
  dropped = object()

  def keep(value):
    return value is not dropped and not (
        isinstance(value, (tuple, list, dict)) and not _is_namedtuple(value) and not value)

  def select(*parts):
    kind = _children(parts)
    if kind == 'sequence':
      kept = [select(*group) for group in builtins.zip(*parts)]
      if _is_namedtuple(parts[0]):
        return _rebuild(parts[0], [value if keep(value) else None for value in kept])
      return _rebuild(parts[0], [value for value in kept if keep(value)])
    if kind == 'dict':
      kept = {key: select(*(part[key] for part in parts)) for key in parts[0]}
      return type(parts[0])({key: value for key, value in kept.items() if keep(value)})
    leaf = parts if len(parts) > 1 else parts[0]
    return leaf if predicate(*parts) else dropped

  if not structures:
    return ()
  result = select(*structures)
  result = () if result is dropped else result
  return _flatten(result) if flatten else result
