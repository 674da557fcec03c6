"""`count_weights`: the number of learnable parameters, BatchPPO's `tools.count_weights`.

TensorFlow 2 has no default graph to search, so the count is over a `tf.Module` (an
algorithm, a network) or a list of variables rather than over a graph's collection;
`scope` and `exclude` select by variable name as in BatchPPO.
"""

import re
from collections.abc import Iterable

import numpy as np


def count_weights(module_or_variables, scope: str | None = None,
                  exclude: str | None = None) -> int:
  """Counts the trainable parameters of a module or of a list of variables.

  Args:
    module_or_variables: a `tf.Module` (its `trainable_variables` count) or an
      iterable of variables.
    scope: count only variables whose name starts with this prefix ('policy' matches
      'policy/...').
    exclude: a regular expression; variables whose name matches it (from the start)
      are left out.

  Returns:
    The number of parameters, an int.
  """
  variables = getattr(module_or_variables, 'trainable_variables', module_or_variables)
  if not isinstance(variables, Iterable):
    raise TypeError(f'count_weights takes a tf.Module or variables, got '
                    f'{type(module_or_variables).__name__}.')
  variables = list(variables)
  if scope:
    prefix = scope if scope.endswith('/') else scope + '/'
    variables = [variable for variable in variables if variable.name.startswith(prefix)]
  if exclude:
    pattern = re.compile(exclude)
    variables = [variable for variable in variables if not pattern.match(variable.name)]
  return int(sum(np.prod(variable.shape.as_list(), dtype=np.int64) for variable in variables))
