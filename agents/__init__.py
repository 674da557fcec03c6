"""BatchPPO agents for TensorFlow 2: batched in-graph RL with process-parallel environments.

The entry points, imported lazily (worker processes import parts of this
package and must stay free of TensorFlow):

    from agents import configs, training
    config = configs.resolve('cartpole', {'loop.steps': 50_000})
    training.train(config, 'logdir/run')

- `agents.configs`: named configs, YAML, overrides, validation;
- `agents.tools`: BatchPPO's core: `ExternalProcess` (`wrappers`), `BatchEnv`,
  `InGraphBatchEnv`, `FusedStep` (`simulate`) and `Loop`;
- `agents.training`: the builders and `train(config, run_dir)`, resume included;
- `agents.run`: the run directory (manifest, checkpoints, metrics, trackers, exports);
- `agents.algorithms`: `InGraphAlgorithm`, the registry, PPO, QR-DQN, the random agent;
- `agents.plugins`: the registries environments plug into (networks, configs,
  collectors, search spaces);
- `agents.evaluation`: suites of seeded episodes, results and their statistics;
- `agents.experiment`: `ExperimentManager`, many fits, searches and comparisons.
"""

import importlib

from agents import tensorflow_start

# TensorFlow's import without its eager import of Keras (unused here): 2.2 s of CPU less
# in every process that imports TensorFlow; `tf.keras` still loads Keras when first used.
# Its start-up notices go too when TF_CPP_MIN_LOG_LEVEL asks for no INFO lines.
tensorflow_start.install()

# The package's version: setup.py reads it from this line (the one place it is written),
# and run manifests (run.yaml) and experiment manifests record it.
__version__ = '0.1.0'

_MODULES = ('algorithms', 'configs', 'env', 'evaluation', 'experiment', 'plugins',
            'python_agents', 'run', 'tools', 'training')

__all__ = list(_MODULES)


def __getattr__(name):
  if name not in _MODULES:
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
  return importlib.import_module(f'{__name__}.{name}')


def load_tests(loader, standard_tests, pattern):
  """Keeps `unittest` discovery out of the package: its tests live in `tests/`.

  Without this hook, `python -m unittest discover -p "*"` (BatchPPO's test command)
  would import every module here as a test module, `__init__.py` files included.
  """
  del loader, pattern
  return standard_tests
