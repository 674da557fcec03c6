"""Experiments: many seeded fits, their data and plots, hyperparameter search, statistics.

    from agents.experiment import AgentWithSimplePolicy, ExperimentManager, compare

`ExperimentManager` (`manager.py`) is rlberry's: it fits an agent class, for instance a
subclass of `Agent` or `AgentWithSimplePolicy` (`agent_base.py`) logging through a
`DefaultWriter` (`writer.py`). `ExperimentManager.from_config` gives the experiment of a
config of this project, a `ConfigExperiment` (`config_experiment.py`), which the command
line runs. Both share `experiment_base.py`; `search.py` and `search_distributions.py`
hold the Optuna search, `comparison.py` the statistics.
"""

from agents.experiment.agent_base import Agent, AgentWithSimplePolicy, Seeder
from agents.experiment.comparison import compare, compare_scores
from agents.experiment.config_experiment import ConfigExperiment
from agents.experiment.errors import ExperimentError
from agents.experiment.manager import ExperimentManager
from agents.experiment.manifest import NotAnExperimentError
from agents.experiment.search_distributions import (
    Categorical,
    Int,
    LogUniform,
    SearchSpaceError,
    Uniform,
)
from agents.experiment.writer import DefaultWriter

__all__ = [
    'Agent', 'AgentWithSimplePolicy', 'Categorical', 'ConfigExperiment', 'DefaultWriter',
    'ExperimentError', 'ExperimentManager', 'Int', 'LogUniform', 'NotAnExperimentError',
    'SearchSpaceError', 'Seeder', 'Uniform', 'compare', 'compare_scores',
]
