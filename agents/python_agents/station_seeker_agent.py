"""BLE's `agents/station_seeker_agent.py` under its name: `StationSeekerAgent`.

    from agents.python_agents import station_seeker_agent   # BLE: ...agents import ...
    agent = station_seeker_agent.StationSeekerAgent(3, (1099,))

The balloon's station seeker (the evaluation plug-in's `station_seeker` baseline, which
`create_agent('station_seeker', ...)` also gives), as a class with BLE's name and
`get_name()`.
"""

from agents.python_agents import policy_agents


class StationSeekerAgent(policy_agents.PolicyAgent):
  """BLE's station seeker: heads for the level whose wind best points home."""

  def __init__(self, num_actions, observation_shape):
    super().__init__(num_actions, observation_shape,
                     policy_agents.baseline_policy('station_seeker'), 'StationSeekerAgent')
