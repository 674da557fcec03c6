"""BatchPPO agents for TensorFlow 2: batched in-graph RL with process-parallel environments.

The entry points, imported lazily (worker processes import parts of this
package and must stay free of TensorFlow):

    from agents import configs, training
    config = configs.resolve('cartpole', {'loop.steps': 50_000})
    training.train(config, 'logdir/run')

- `agents.configs`: named configs, YAML, overrides, validation;
- `agents.builders`: environments, the batch and the algorithm from a config;
- `agents.training`: `train(config, run_dir)`, resume included;
- `agents.algorithms`: `InGraphAlgorithm`, the registry, PPO, the random agent;
- `agents.tools`: `BatchEnv`, `ExternalProcess`, `InGraphBatchEnv`, `FusedStep`,
  `simulate`, `Loop`;
- `agents.plugins`: the registries environments plug into (networks, configs,
  collectors, search spaces);
- `agents.evaluation`: suites of seeded episodes, results and their statistics;
- `agents.experiment`: `ExperimentManager`, many fits, searches and comparisons.
"""

import importlib

# The package's version: setup.py reads it from this line (the one place it is written),
# and run manifests (run.yaml) and experiment manifests record it.
__version__ = '0.1.0'

_MODULES = ('algorithms', 'builders', 'config_fields', 'configs', 'env', 'evaluation',
            'experiment', 'plugins', 'tools', 'training')

__all__ = list(_MODULES)


def __getattr__(name):
  if name not in _MODULES:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  return importlib.import_module(f'{__name__}.{name}')
