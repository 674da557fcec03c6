"""Installs the `agents` package: batched in-graph reinforcement learning on TensorFlow 2."""

import setuptools

setuptools.setup(
    # The import package is `agents`; the distribution name keeps clear of the
    # other projects on PyPI that are also called "agents".
    name='batchppo-agents',
    version='0.1.0',
    description=(
        'Batched in-graph reinforcement learning on TensorFlow 2 (BatchPPO) '
        'with a fast stratospheric balloon environment.'),
    python_requires='>=3.10',
    packages=setuptools.find_packages(include=['agents', 'agents.*']),
    # The difficulty strata's seed ranking (agents.evaluation.strata).
    package_data={'agents.env.balloon': ['strata.json']},
    install_requires=[
        'tensorflow-cpu>=2.16',
        # TensorFlow no longer pulls it in, and tf.summary needs it.
        'tensorboard>=2.16',
        'gymnasium>=1.1',
        'numpy>=1.26',
        'cloudpickle>=2.0',
        'ruamel.yaml>=0.18',
        'tqdm>=4.60',
        'threadpoolctl>=3.1',
        # Compiled inner loops of the balloon's wind GP and forecast (kernels.py).
        'numba>=0.60',
        # Evaluation statistics: bootstrap intervals and Wilcoxon (scipy), IQM and the
        # probability of improvement (rliable).
        'scipy>=1.10',
        'rliable>=1.2',
    ],
    extras_require={
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
        # Everything the test suite, the linters (ruff; import-linter's layer contracts)
        # and the documentation build need.
        'test': ['ruff>=0.6', 'import-linter>=2.13', 'scipy>=1.11', 'matplotlib>=3.7',
                 'imageio>=2.30', 'imageio-ffmpeg>=0.4', 'pygame>=2.1', 'pandas>=2.0',
                 'optuna>=4.0', 'rliable>=1.0', 'adastop>=0.1', 'ray>=2.9', 'mkdocs>=1.5',
                 'mkdocs-material>=9.0', 'mkdocstrings[python]>=0.24'],
        # Peers that the benchmarks compare against.
        'bench': ['stable-baselines3>=2.3', 'torch==2.13.0'],
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
        # The balloon plugs into the framework's registries (agents.plugins).
        'agents.plugins': ['balloon=agents.env.balloon.plugin:register',
                           'evaluation=agents.evaluation.plugin:register'],
    },
)
