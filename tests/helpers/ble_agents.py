"""Agents with BLE's Agent interface, importable by `--agent=tests.helpers.ble_agents:<Class>`
and as the experiment manager's `agent_class`.

`CountingAgent` acts by a fixed rule and counts what it saw; its state is saved per
iteration with numpy, and `export(directory)` writes it there (a policy export).
"""

import os

import numpy as np

from agents.python_agents import agent


class CountingAgent(agent.Agent):
  """Always action `action`; counts its episodes and steps (its checkpointed state)."""

  def __init__(self, num_actions, observation_shape, action=1):
    super().__init__(num_actions, observation_shape)
    self.action = action
    self.counts = np.zeros(2, np.int64)  # episodes, steps

  def begin_episode(self, observation):
    del observation
    self.counts[0] += 1
    return self.action

  def step(self, reward, observation):
    del reward, observation
    self.counts[1] += 1
    return self.action

  def end_episode(self, reward, terminal=True):
    del reward, terminal

  def save_checkpoint(self, checkpoint_dir, iteration_number):
    np.save(os.path.join(checkpoint_dir, f'counts_{iteration_number}.npy'), self.counts)

  def load_checkpoint(self, checkpoint_dir, iteration_number):
    self.counts = np.load(os.path.join(checkpoint_dir, f'counts_{iteration_number}.npy'))

  def export(self, directory):
    os.makedirs(directory, exist_ok=True)
    np.save(os.path.join(directory, 'counts.npy'), self.counts)


class BatchedCountingAgent(agent.BatchedAgent):
  """The batched form: action 1 for every row; counts the steps of all rows."""

  def __init__(self, num_actions, observation_shape, batch_size):
    super().__init__(num_actions, observation_shape, batch_size)
    self.steps = 0

  def begin_episode(self, observations, rows):
    return np.ones(len(rows), np.int64)

  def step(self, rewards, observations, rows):
    self.steps += len(rows)
    return np.ones(len(rows), np.int64)

  def end_episode(self, rewards, terminals, rows):
    pass


class NoStepAgent:
  """Lacks step(): not an agent."""

  def __init__(self, num_actions, observation_shape):
    del num_actions, observation_shape

  def begin_episode(self, observation):
    return 0

  def end_episode(self, reward, terminal=True):
    pass
