"""BLE's `agents/random_walk_agent.py` under its name: `RandomWalkAgent`.

    from agents.python_agents import random_walk_agent      # BLE: ...agents import ...
    agent = random_walk_agent.RandomWalkAgent(3, (1099,), seed=1)

The balloon's random walk (the evaluation plug-in's `random_walk` baseline, which
`create_agent('random_walk', ...)` also gives), as a class with BLE's name, `get_name()`
and `seed`. Its random streams are NumPy's, so seed N is not BLE's seed N.
"""

from agents.python_agents import policy_agents


class RandomWalkAgent(policy_agents.PolicyAgent):
  """BLE's random walk: follows a target pressure that drifts at random."""

  def __init__(self, num_actions, observation_shape, seed=None):
    super().__init__(num_actions, observation_shape,
                     policy_agents.baseline_policy('random_walk', seed=seed or 0),
                     'RandomWalkAgent')
