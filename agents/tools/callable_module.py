"""A module that may also be called as a function: how `tools.simulate` is both.

BatchPPO calls `tools.simulate(batch_env, algorithm, ...)` as a function, while the
code here imports the module of the same name (`from agents.tools import simulate`;
`simulate.FusedStep`). `make_callable` gives the module object itself a `__call__`
that forwards to one of its functions, so both uses hold whichever import path
loaded it first, and there is one copy of the function.
"""

import sys
import types


class CallableModule(types.ModuleType):
  """A module whose call forwards to its function named by `__call_target__`."""

  def __call__(self, *args, **kwargs):
    return getattr(self, self.__call_target__)(*args, **kwargs)


def make_callable(module_name: str, function_name: str) -> None:
  """Lets the loaded module `module_name` be called as its function `function_name`."""
  module = sys.modules[module_name]
  module.__call_target__ = function_name
  module.__class__ = CallableModule
