"""Experiments: many seeds of a config, their data and plots, hyperparameter search, statistics.

    from agents.experiment import ExperimentManager, compare

See `manager.py` for the manager, `search.py` and `search_distributions.py` for the
Optuna search, `comparison.py` for the statistics, and `configs_and_training.py` for
the one place where this package meets configs and training.
"""

from agents.experiment.comparison import compare, compare_scores
from agents.experiment.manager import ExperimentError, ExperimentManager
from agents.experiment.manifest import NotAnExperimentError
from agents.experiment.search_distributions import (
    Categorical,
    Int,
    LogUniform,
    SearchSpaceError,
    Uniform,
)

__all__ = [
    'Categorical', 'ExperimentError', 'ExperimentManager', 'Int', 'LogUniform',
    'NotAnExperimentError', 'SearchSpaceError', 'Uniform', 'compare', 'compare_scores',
]
