"""Environment batching, BatchPPO's core: many environments stepped as one.

    from agents.batch import ExternalProcess, BatchEnv, InGraphBatchEnv

- `external_process`: one environment (or a slab of them) in its own OS process;
  `transport/` is the wire format, shared memory and the worker loop beneath it;
- `batch_env`: steps many batch members in parallel, with restarts of dead workers;
- `in_graph_batch_env`: the batch's step and reset as TensorFlow operations;
- `slab`, `batch_member`, `placement`: what a member is and where it runs;
- `ray_member`, `ray_cluster`: a member in a Ray actor, on any node of a cluster.

The fused step that drives an in-graph batch is `agents.training.simulate`.
Names are imported lazily: worker processes import `agents.batch.external_process`
and must not pay for TensorFlow, which only the in-graph batch needs.
"""

import importlib

_EXPORTS = {
    'ActionError': 'errors',
    'BatchEnv': 'batch_env',
    'ClosedError': 'errors',
    'ClusterLostError': 'errors',
    'ExternalProcess': 'external_process',
    'InGraphBatchEnv': 'in_graph_batch_env',
    'NonFiniteError': 'errors',
    'SpaceMismatchError': 'errors',
    'WorkerDiedError': 'errors',
    'WorkerError': 'errors',
    'WorkerTimeoutError': 'errors',
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
  if name not in _EXPORTS:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  return getattr(importlib.import_module(f'{__name__}.{_EXPORTS[name]}'), name)
