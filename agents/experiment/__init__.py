"""Experiments: many seeded fits, their data and plots, hyperparameter search, statistics.

    from agents.experiment import AgentWithSimplePolicy, ExperimentManager, compare

This package is rlberry's `rlberry.manager` (with `rlberry.agents`' base classes,
`rlberry.seeding.Seeder`, `rlberry.utils.writers`, `rlberry.utils.check_agent`,
`rlberry.wrappers.WriterWrapper` and `rlberry.envs.gym_make`) under one import.

`ExperimentManager` (`manager.py`) is rlberry's: it fits an agent class, for instance a
subclass of `Agent` or `AgentWithSimplePolicy` (`agent_base.py`) logging through a
`DefaultWriter` (`writer.py`). `ExperimentManager.from_config` gives the experiment of a
config of this project, a `ConfigExperiment` (`config_experiment.py`), which the command
line runs. Both share `experiment_base.py`; `search.py` and `search_distributions.py`
hold the Optuna search, `comparison.py` the statistics.
"""

import importlib

# Each public name and the module that defines it, imported when first asked for: a fit's
# worker process (which imports `agents.experiment.fitting`, hence this package) then
# pays for what it runs, not for pandas, SciPy and the rest of the experiment API.
_EXPORTS = {
    'Agent': 'agent_base', 'AgentWithSimplePolicy': 'agent_base', 'Seeder': 'agent_base',
    'WriterWrapper': 'agent_base', 'gym_make': 'agent_base',
    'AdastopComparator': 'agent_comparison', 'compare_agents': 'agent_comparison',
    'check_rl_agent': 'check_agent', 'check_rlberry_agent': 'check_agent',
    'compare': 'comparison', 'compare_scores': 'comparison',
    'ConfigExperiment': 'config_experiment', 'ExperimentError': 'errors',
    'AgentManager': 'manager', 'ExperimentManager': 'manager', 'preset_manager': 'manager',
    'NotAnExperimentError': 'manifest', 'MultipleManagers': 'multiple_managers',
    'PPOAgent': 'graph_agents', 'QRDQNAgent': 'graph_agents',
    'Categorical': 'search_distributions', 'Int': 'search_distributions',
    'LogUniform': 'search_distributions', 'SearchSpaceError': 'search_distributions',
    'Uniform': 'search_distributions', 'DefaultWriter': 'writer',
    'plot_smoothed_curves': 'writer_plots', 'plot_synchronized_curves': 'writer_plots',
    'plot_writer_data': 'writer_plots', 'evaluate_agents': 'writer_sources',
    'read_writer_data': 'writer_sources',
}

__all__ = sorted(_EXPORTS, key=lambda name: (name[0].islower(), name))


def __getattr__(name):
  """`agents.experiment.<name>`: the public name, imported from its module on first use."""
  module = _EXPORTS.get(name)
  if module is None:
    raise AttributeError(f"module 'agents.experiment' has no attribute {name!r}")
  value = getattr(importlib.import_module(f'agents.experiment.{module}'), name)
  globals()[name] = value
  return value


def __dir__():
  return sorted(set(globals()) | set(_EXPORTS))
