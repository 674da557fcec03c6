"""Environment and training tools: workers, batching, wrappers and small utilities.

Names are imported lazily: worker processes import `agents.tools.external_process`
and must not pay for TensorFlow, which only some of the tools need.
"""

import importlib

_EXPORTS = {
    'ActionError': 'errors',
    'AttrDict': 'attr_dict',
    'BatchEnv': 'batch_env',
    'ClosedError': 'errors',
    'ExternalProcess': 'external_process',
    'NonFiniteError': 'errors',
    'SpaceMismatchError': 'errors',
    'StreamingMean': 'streaming_mean',
    'WorkerDiedError': 'errors',
    'WorkerError': 'errors',
    'WorkerTimeoutError': 'errors',
    'count_weights': 'count_weights',
    'wrappers': None,
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
  if name not in _EXPORTS:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  module = importlib.import_module(f'{__name__}.{_EXPORTS[name] or name}')
  return module if _EXPORTS[name] is None else getattr(module, name)
