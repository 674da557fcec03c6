"""Tests of agents/python_agents/agent_configs.py: the config of a `train --agent` run."""

import unittest

from agents import configs
from agents.python_agents import agent_configs

AGENT = 'tests.helpers.ble_agents:CountingAgent'


class AgentConfigTest(unittest.TestCase):

  def test_agent_section_replaces_network_and_algorithm(self):
    overrides, kwargs = agent_configs.split_overrides(
        {'loop.steps': 100, 'agent.action': 2, 'environment.num_agents': 2})
    self.assertEqual((overrides, kwargs),
                     ({'loop.steps': 100, 'environment.num_agents': 2}, {'action': 2}))
    config = agent_configs.make('cartpole', overrides, AGENT, kwargs)
    self.assertEqual(config['agent'], {'name': AGENT, 'kwargs': {'action': 2}})
    self.assertNotIn('algorithm', config)
    self.assertNotIn('network', config)
    self.assertEqual(config['environment']['num_agents'], 2)
    self.assertTrue(agent_configs.is_agent_config(config))
    self.assertFalse(agent_configs.is_agent_config(configs.resolve('cartpole')))

  def test_resume_changes_only_the_budget_and_trackers(self):
    saved = agent_configs.make('cartpole', {}, AGENT, {'action': 1})
    resumed = agent_configs.resume(saved, {'loop.steps': 10**6}, None, {})
    self.assertEqual(resumed['loop']['steps'], 10**6)
    self.assertEqual(saved['loop']['steps'], configs.resolve('cartpole')['loop']['steps'])
    refusals = (
        (({'seed': 3}, None, {}), 'seed = 0'),
        (({'environment.num_agents': 3}, None, {}), 'environment.num_agents = 8'),
        (({}, 'random', {}), "trained by agent '.*CountingAgent', not 'random'"),
        (({}, AGENT, {'action': 2}), 'agent.action = 1'),
    )
    for (overrides, name, kwargs), message in refusals:
      with self.subTest(message=message), self.assertRaisesRegex(configs.ConfigError, message):
        agent_configs.resume(saved, overrides, name, kwargs)

  def test_the_configs_algorithm_constrains_nothing(self):
    # PPO's balloon config would refuse 2 balloons (its mini-batches must divide them).
    config = agent_configs.make('balloon', {'environment.num_agents': 2}, AGENT, {})
    self.assertEqual(config['environment']['num_agents'], 2)

  def test_in_graph_sections_are_refused(self):
    with self.assertRaisesRegex(configs.ConfigError, 'has no network section'):
      agent_configs.split_overrides({'network.policy_layers': [8]})
    with self.assertRaisesRegex(configs.ConfigError, 'name a constructor argument'):
      agent_configs.split_overrides({'agent': 1})


if __name__ == '__main__':
  unittest.main()
