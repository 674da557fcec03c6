"""The balloon's hyperparameter search: its configs' spaces and its default objective.

Registered by the balloon's plug-in (`agents.plugins.SEARCH_SPACES`, and its
`search_objective`). Spaces are in the plain-mapping form of
`agents.experiment.search_distributions`, so declaring them imports nothing.
"""

BALLOON_SPACE = {
    'algorithm.learning_rate': {'type': 'log_uniform', 'low': 5e-5, 'high': 1e-3},
    'algorithm.entropy_coef': {'type': 'log_uniform', 'low': 1e-3, 'high': 3e-2},
    'algorithm.update_epochs': {'type': 'int', 'low': 2, 'high': 8},
    'algorithm.discount': {'type': 'categorical', 'choices': [0.99, 0.993, 0.996]},
}


def twr50_objective(config, suite=None):
  """The default objective of balloon configs: the mean TWR50 of a trial's fits on `suite`
  (flown by `ExperimentManager.eval_agents`).

  Args:
    config: the study's resolved config.
    suite: the suite to fly; None takes the config's `loop.eval_suite` (the `balloon`
      config's 'tiny_eval'; `--set loop.eval_suite=small_eval` ranks trials on 100 seeds),
      or 'tiny_eval' when it has none.
  """
  if suite is None:
    suite = (config.get('loop') or {}).get('eval_suite') or 'tiny_eval'

  def objective(manager):
    return float(manager.eval_agents(suite=suite)['twr50'].mean())
  objective.__name__ = f'twr50_on_{suite}'
  return objective
