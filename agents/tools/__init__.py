"""The framework's machinery: workers, the batch, the in-graph batch, the fused step, the loop.

    from agents.tools import BatchEnv, InGraphBatchEnv, FusedStep, Loop
    from agents.tools.simulate import simulate   # the fused step as a plain function

(`agents.tools.simulate` is the module: a submodule shadows a package attribute
of its name once imported.) Names are imported lazily: worker processes import
`agents.tools.external_process` and must not pay for TensorFlow, which only
some of the tools need.
"""

import importlib

_EXPORTS = {
    'ActionError': 'errors',
    'BatchEnv': 'batch_env',
    'ClosedError': 'errors',
    'EpisodeStatistics': 'simulate',
    'ExternalProcess': 'external_process',
    'FusedStep': 'simulate',
    'InGraphBatchEnv': 'in_graph_batch_env',
    'Loop': 'loop',
    'MetricsWriter': 'metrics_writer',
    'NonFiniteError': 'errors',
    'SpaceMismatchError': 'errors',
    'WorkerDiedError': 'errors',
    'WorkerError': 'errors',
    'WorkerTimeoutError': 'errors',
    'read_metrics': 'metrics_writer',
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
  if name not in _EXPORTS:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  return getattr(importlib.import_module(f'{__name__}.{_EXPORTS[name]}'), name)
