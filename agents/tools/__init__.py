"""BatchPPO's core tools: many environments stepped as one, in the graph, fused with learning.

    from agents import tools
    env = tools.BatchEnv([tools.wrappers.ExternalProcess(make_env) for _ in range(8)],
                         blocking=False)

- `wrappers`: `ExternalProcess`, one environment (or a slab of them) in its own OS
  process; `transport/` is the wire format, shared memory and the worker loop beneath it;
- `batch_env`: `BatchEnv`, steps many batch members in parallel, with restarts of
  dead workers;
- `in_graph_batch_env`: `InGraphBatchEnv`, the batch's step and reset as TensorFlow
  operations;
- `simulate`: `FusedStep`, one `tf.function` call that steps every environment and,
  when it is time, runs the algorithm's update;
- `loop`: `Loop`, the phases (train, eval) and their step counts;
- `slab`, `batch_member`, `placement`: what a member is and where it runs;
- `ray_member`, `ray_cluster`: a member in a Ray actor, on any node of a cluster;
- BatchPPO's helpers: `AttrDict` (`attr_dict`), `nested` (map, zip, flatten, filter of
  nested structures), `count_weights` (`weight_count`), and for users' own tests
  `mock_environment` (`MockEnvironment`, scripted episode lengths) and `mock_algorithm`
  (`MockAlgorithm`, records every call `simulate` makes).

`tools.simulate` is the module and, called, its function `simulate.simulate` (the
fused step inside a `tf.function`, as BatchPPO's `tools.simulate(batch_env, algo)`).

Names are imported lazily: worker processes import `agents.tools.wrappers` and must
not pay for TensorFlow, which only the in-graph batch and the fused step need.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # What the lazy names are, for type checkers and editors.
  from agents.tools.attr_dict import AttrDict as AttrDict
  from agents.tools.batch_env import BatchEnv as BatchEnv
  from agents.tools.errors import ActionError as ActionError
  from agents.tools.errors import ClosedError as ClosedError
  from agents.tools.errors import ClusterLostError as ClusterLostError
  from agents.tools.errors import NonFiniteError as NonFiniteError
  from agents.tools.errors import SpaceMismatchError as SpaceMismatchError
  from agents.tools.errors import WorkerDiedError as WorkerDiedError
  from agents.tools.errors import WorkerError as WorkerError
  from agents.tools.errors import WorkerTimeoutError as WorkerTimeoutError
  from agents.tools.in_graph_batch_env import InGraphBatchEnv as InGraphBatchEnv
  from agents.tools.loop import Loop as Loop
  from agents.tools.mock_algorithm import MockAlgorithm as MockAlgorithm
  from agents.tools.mock_environment import MockEnvironment as MockEnvironment
  from agents.tools.simulate import FusedStep as FusedStep
  from agents.tools.weight_count import count_weights as count_weights
  from agents.tools.wrappers import ExternalProcess as ExternalProcess

_EXPORTS = {
    'ActionError': 'errors',
    'AttrDict': 'attr_dict',
    'BatchEnv': 'batch_env',
    'ClosedError': 'errors',
    'ClusterLostError': 'errors',
    'count_weights': 'weight_count',
    'ExternalProcess': 'wrappers',
    'FusedStep': 'simulate',
    'InGraphBatchEnv': 'in_graph_batch_env',
    'Loop': 'loop',
    'MockAlgorithm': 'mock_algorithm',
    'MockEnvironment': 'mock_environment',
    'NonFiniteError': 'errors',
    'SpaceMismatchError': 'errors',
    'WorkerDiedError': 'errors',
    'WorkerError': 'errors',
    'WorkerTimeoutError': 'errors',
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
  if name in _EXPORTS:
    return getattr(importlib.import_module(f'{__name__}.{_EXPORTS[name]}'), name)
  try:
    return importlib.import_module(f'{__name__}.{name}')
  except ModuleNotFoundError as error:
    if error.name != f'{__name__}.{name}':
      raise
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}') from None
