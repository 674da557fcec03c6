"""The training loop: the fused step, the loop around it, and `train(config, run_dir)`.

    from agents import configs, training
    training.train(configs.resolve('cartpole'), 'logdir/run')

- `simulate`: `FusedStep`, one `tf.function` call that steps every environment and,
  when it is time, runs the algorithm's update (BatchPPO's `simulate`);
- `loop`: `Loop`, the phases (train, eval) and their step counts;
- `builders`: environments, the batch and the algorithm from a config;
- `trainer`: `train(config, run_dir)`, a new run or a resumed one.

The run directory it writes (config, checkpoints, metrics, exported policy) is
`agents.run`'s. Names are imported lazily, so importing the package costs nothing.
"""

import importlib

_EXPORTS = {
    'EpisodeStatistics': 'simulate',
    'FusedStep': 'simulate',
    'Loop': 'loop',
    'train': 'trainer',
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
  if name not in _EXPORTS:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  return getattr(importlib.import_module(f'{__name__}.{_EXPORTS[name]}'), name)
