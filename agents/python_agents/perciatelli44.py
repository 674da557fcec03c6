"""BLE's `agents/perciatelli44.py` under its name: `Perciatelli44`.

    from agents.python_agents import perciatelli44          # BLE: ...agents import ...
    agent = perciatelli44.Perciatelli44(3, (1099,))

BLE's frozen Perciatelli44 network (the balloon plug-in's `perciatelli44` baseline, which
`create_agent('perciatelli44', ...)` also gives) as a class with BLE's name. As BLE's, it
takes 3 actions and observations of 1099 floats only, its network's, and flies the
weights BLE 1.0.1's wheel holds, fetched separately
(`python -m agents.env.balloon.ble_models fetch`).
"""

from agents.env.balloon import constants
from agents.python_agents import policy_agents


class Perciatelli44(policy_agents.PolicyAgent):
  """BLE's Perciatelli44: the greedy action of its frozen quantile network."""

  def __init__(self, num_actions, observation_shape, path=None):
    """Loads the network.

    Args:
      num_actions: must be 3.
      observation_shape: must be (1099,).
      path: the weights' file (default: where `ble_models fetch` puts them).

    Raises:
      ValueError: another number of actions or observation shape, or no weights (the
        message says how to fetch them).
    """
    if num_actions != 3:
      raise ValueError(f'Perciatelli44 takes 3 actions (its network\'s), got num_actions='
                       f'{num_actions!r}.')
    if tuple(observation_shape) != (constants.OBSERVATION_SIZE,):
      raise ValueError(f'Perciatelli44 takes observations of shape '
                       f'({constants.OBSERVATION_SIZE},), got {tuple(observation_shape)}.')
    kwargs = {} if path is None else {'path': path}
    super().__init__(num_actions, observation_shape,
                     policy_agents.baseline_policy('perciatelli44', **kwargs), 'Perciatelli44')
