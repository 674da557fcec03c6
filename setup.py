"""Installs the `agents` package: batched in-graph reinforcement learning on TensorFlow 2."""

import os
import re

import setuptools


def _read(*parts):
  with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), *parts),
            encoding='utf-8') as file:
    return file.read()


def _version():
  """`agents.__version__`, read from agents/__init__.py without importing the package."""
  return re.search(r"^__version__ = '([^']+)'$", _read('agents', '__init__.py'),
                   re.MULTILINE).group(1)


# The arguments of setup(), which runs only as a script (pip, `python -m build` and
# `python setup.py` all run this file as `__main__`): importing it, as
# `python -m unittest discover -p "*"` does, installs nothing and does not exit.
_SETUP_ARGUMENTS = dict(
    # The import package is `agents`; the distribution name keeps clear of the
    # other projects on PyPI that are also called "agents".
    name='batchppo-agents',
    version=_version(),
    description=(
        'Batched in-graph reinforcement learning on TensorFlow 2 (BatchPPO) '
        'with a fast stratospheric balloon environment.'),
    long_description=_read('README.md'),
    long_description_content_type='text/markdown',
    # Supported: CPython 3.10 to 3.12 on Linux x86-64, where tensorflow-cpu
    # ships wheels; CI tests CPython 3.11 on Linux x86-64 (docs/packaging.md).
    python_requires='>=3.10',
    classifiers=[
        'Programming Language :: Python :: 3',
        'Programming Language :: Python :: 3 :: Only',
        'Programming Language :: Python :: 3.10',
        'Programming Language :: Python :: 3.11',
        'Programming Language :: Python :: 3.12',
        'Operating System :: POSIX :: Linux',
        'Topic :: Scientific/Engineering :: Artificial Intelligence',
    ],
    packages=setuptools.find_packages(include=['agents', 'agents.*']),
    # The difficulty strata's seed ranking (agents.evaluation.strata).
    package_data={'agents': ['py.typed'],
                  'agents.env.balloon': ['strata.json'],
                  # The gin files of BLE's agents (run_helpers.bind_gin_variables).
                  'agents.python_agents': ['configs/*.gin']},
    install_requires=[
        'tensorflow-cpu>=2.16',
        # TensorFlow no longer pulls it in, and tf.summary needs it.
        'tensorboard>=2.16',
        'gymnasium>=1.1',
        'numpy>=1.26',
        'cloudpickle>=2.0',
        'ruamel.yaml>=0.18',
        'tqdm>=4.60',
        # absl's logging: BLE's console collector logs through it (TensorFlow needs it too).
        'absl-py>=1.0',
        'threadpoolctl>=3.1',
        # Compiled inner loops of the balloon's wind GP and forecast (kernels.py).
        'numba>=0.60',
        # BLE's generative wind: its simplex noise (noise4, bit-identical to the 0.3
        # noise4d BLE calls) and its decoder's weights file (wind/simplex_noise.py,
        # wind/generative.py).
        'opensimplex>=0.4.5,<0.5',
        'msgpack>=1.0',
        # Evaluation statistics: bootstrap intervals and Wilcoxon (scipy), IQM and the
        # probability of improvement (rliable).
        'scipy>=1.10',
        'rliable>=1.2',
    ],
    extras_require={
        # Gymnasium's MuJoCo tasks (BatchPPO's configs: cheetah, hopper, walker, ant, ...).
        'mujoco': ['gymnasium[mujoco]>=1.0', 'mujoco>=3.1'],
        # EnvPool's C++ threads for the tasks it has (`environment.backend: envpool`).
        'envpool': ['envpool>=1.2.5'],
        # Flight plots, videos and the balloon renderer.
        'viz': ['matplotlib>=3.7', 'imageio>=2.30', 'imageio-ffmpeg>=0.4', 'pygame>=2.1'],
        # The experiment manager (agents.experiment): data frames, plots, search, statistics.
        'experiment': ['pandas>=2.0', 'matplotlib>=3.7', 'scipy>=1.11', 'optuna>=4.0',
                       'cmaes>=0.10', 'rliable>=1.0', 'adastop>=0.1'],
        # Ray: experiment fits and searches (parallelization='ray') and evaluation shards
        # (python -m agents.scripts.evaluate --ray).
        'ray': ['ray>=2.9'],
        # The documentation site (mkdocs.yml; `make docs`).
        'docs': ['mkdocs>=1.6', 'mkdocs-material>=9.5', 'mkdocstrings[python]>=0.26'],
        # Gin configuration of BLE's agents and scripts (run_helpers.bind_gin_variables,
        # python -m agents.python_agents.train / eval).
        'gin': ['gin-config>=0.5'],
        # Experiment trackers beside metrics.jsonl and TensorBoard (`loop.track`, --track).
        'mlflow': ['mlflow>=2.12'],
        'wandb': ['wandb>=0.17'],
        # Everything the test suite, the linters (ruff; import-linter's layer contracts),
        # the documentation build and the wheel check (.ci/run) need.
        'test': ['ruff>=0.6', 'import-linter>=2.13', 'scipy>=1.11', 'matplotlib>=3.7',
                 'imageio>=2.30', 'imageio-ffmpeg>=0.4', 'pygame>=2.1', 'pandas>=2.0',
                 'optuna>=4.0', 'rliable>=1.0', 'adastop>=0.1', 'ray>=2.9', 'mkdocs>=1.5',
                 'mkdocs-material>=9.0', 'mkdocstrings[python]>=0.24', 'mlflow>=2.12',
                 'wandb>=0.17', 'build>=1.0', 'gin-config>=0.5', 'pytest>=8.0', 'envpool>=1.2.5',
                 'pytest-xdist>=3.5', 'mypy>=1.10', 'gymnasium[mujoco]>=1.0', 'mujoco>=3.1',
                 'pylint>=3.0'],
        # Peers that the benchmarks compare against.
        'bench': ['stable-baselines3>=2.3', 'torch==2.13.0', 'envpool>=0.8'],
    },
    entry_points={
        'console_scripts': [
            'agents-train=agents.scripts.train:main',
            'agents-visualize=agents.scripts.visualize:main',
            'agents-experiment=agents.scripts.experiment:main',
            'agents-evaluate=agents.scripts.evaluate:main',
            'agents-export=agents.scripts.export:main',
        ],
        'gymnasium.envs': ['__root__=agents.env.registration:register_all'],
        # The balloon and the MuJoCo tasks plug into the framework's registries (agents.plugins).
        'agents.plugins': ['balloon=agents.env.balloon.plugin:register',
                           'mujoco=agents.env.mujoco.plugin:register',
                           'evaluation=agents.evaluation.plugin:register'],
    },
)


if __name__ == '__main__':
  setuptools.setup(**_SETUP_ARGUMENTS)
