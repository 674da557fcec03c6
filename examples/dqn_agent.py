"""The worked example of an agent written against BLE's interface: a DQN in TensorFlow.

It ships in the package as BLE's `dqn` agent (`agents/python_agents/dqn_agent.py`, where
its code and its description are); this module keeps the example's import path:

    from examples.dqn_agent import BatchedDQNAgent, DQNAgent
"""

from agents.python_agents.dqn_agent import BatchedDQNAgent, DQNAgent, ReplayMemory

__all__ = ['BatchedDQNAgent', 'DQNAgent', 'ReplayMemory']
