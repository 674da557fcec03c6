"""Tests of agents/python_agents/quantile_agent.py beyond run_helpers_test's: network kinds."""

import unittest

import numpy as np

from agents.config_fields import ConfigError
from agents.env.balloon.column_quantile_network import ColumnQuantileNetwork
from agents.python_agents import agent as agent_lib
from agents.python_agents.quantile_agent import QuantileAgent

OBSERVATIONS = np.random.default_rng(0).uniform(0.0, 0.9, (4, 1099)).astype(np.float32)


class NetworkKindTest(unittest.TestCase):

  def test_the_column_kind_with_its_own_keys_learns(self):
    agent = QuantileAgent(3, (1099,), num_envs=2, kind='column', hidden_layers=[16],
                          column_layers=[8], column_stride=6, num_quantiles=5,
                          replay_capacity=200, batch_size=8, learning_starts=8)
    self.assertIsInstance(agent.qrdqn.online_network, ColumnQuantileNetwork)
    self.assertEqual(agent.qrdqn.online_network._stride, 6)
    rows = np.array([0, 1])
    agent.begin_episode(OBSERVATIONS[:2], rows)
    for step in range(8):
      actions = agent.step(np.ones(2), OBSERVATIONS[[step % 4, (step + 1) % 4]], rows)
      self.assertTrue(set(actions.tolist()) <= {0, 1, 2})
    self.assertGreater(int(agent.qrdqn.num_updates.numpy()), 0)
    self.assertIsInstance(agent, agent_lib.BatchedAgent)

  def test_a_kind_key_without_its_kind_is_unknown(self):
    with self.assertRaisesRegex(ConfigError, "no hyperparameter 'column_layers'"):
      QuantileAgent(3, (1099,), num_envs=2, column_layers=[8], replay_capacity=200,
                    batch_size=8)

  def test_an_unknown_kind_names_the_key(self):
    with self.assertRaisesRegex(ConfigError, 'network.kind'):
      QuantileAgent(3, (1099,), num_envs=2, kind='nope', replay_capacity=200, batch_size=8)


if __name__ == '__main__':
  unittest.main()
