"""Training from a config: the builders and `train(config, run_dir)`.

    from agents import configs, training
    training.train(configs.resolve('cartpole'), 'logdir/run')

- `builders`: environments, the batch and the algorithm from a config;
- `trainer`: `train(config, run_dir)`, a new run or a resumed one.

The fused step and the loop it drives are BatchPPO's core, in `agents.tools`
(`FusedStep`, `Loop`; re-exported here). The run directory it writes (config,
checkpoints, metrics, exported policy) is `agents.run`'s. Names are imported
lazily, so importing the package costs nothing.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # What the lazy names are, for type checkers and editors.
  from agents.tools.loop import Loop as Loop
  from agents.tools.simulate import FusedStep as FusedStep
  from agents.training.trainer import train as train

_EXPORTS = {
    'FusedStep': 'agents.tools.simulate',
    'Loop': 'agents.tools.loop',
    'train': 'agents.training.trainer',
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
  if name not in _EXPORTS:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  return getattr(importlib.import_module(_EXPORTS[name]), name)
