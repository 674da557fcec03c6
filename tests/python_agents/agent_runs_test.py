"""Tests of agents/python_agents/agent_runs.py: naming agents, building them for a batch,
budgets in whole iterations, and the run's metric rows."""

import unittest

from agents.python_agents import agent as agent_lib
from agents.python_agents import agent_runs
from tests.helpers import ble_agents


class ResolveTest(unittest.TestCase):

  def test_classes_and_create_agent_names(self):
    single = agent_runs.resolve_agent('tests.helpers.ble_agents:CountingAgent')
    self.assertIs(single.agent_class, ble_agents.CountingAgent)
    self.assertFalse(single.batched)
    self.assertTrue(agent_runs.resolve_agent(
        'tests.helpers.ble_agents:BatchedCountingAgent').batched)
    self.assertIsNone(agent_runs.resolve_agent('station_seeker').agent_class)

  def test_errors_name_the_culprit(self):
    for spec, message in (('tests.helpers.nope:A', "cannot import 'tests.helpers.nope'"),
                          ('tests.helpers.ble_agents:Nope', "has no 'Nope'"),
                          ('tests.helpers.ble_agents:NoStepAgent', r'no callable step\(\)'),
                          ('nope', "unknown agent 'nope'"), ('', 'must name an agent')):
      with self.subTest(spec=spec), self.assertRaisesRegex(agent_runs.AgentSpecError, message):
        agent_runs.resolve_agent(spec)
    with self.assertRaisesRegex(agent_runs.AgentSpecError, "unexpected keyword .*'speed'"):
      agent_runs.check_kwargs(agent_runs.resolve_agent('tests.helpers.ble_agents:CountingAgent'),
                              {'speed': 1})


class MakeAgentTest(unittest.TestCase):

  def test_one_agent_per_row_or_one_batched_agent(self):
    single = agent_runs.resolve_agent('tests.helpers.ble_agents:CountingAgent')
    self.assertIsInstance(agent_runs.make_agent(single, 3, (4,), 1), ble_agents.CountingAgent)
    per_row = agent_runs.make_agent(single, 3, (4,), 3, {'action': 2})
    self.assertIsInstance(per_row, agent_lib.AgentPerRow)
    self.assertEqual([agent.action for agent in per_row.agents], [2, 2, 2])
    self.assertEqual(len({id(agent) for agent in per_row.agents}), 3)
    batched = agent_runs.resolve_agent('tests.helpers.ble_agents:BatchedCountingAgent')
    self.assertEqual(agent_runs.make_agent(batched, 3, (4,), 5).batch_size, 5)

  def test_budgets_are_whole_iterations(self):
    self.assertEqual(agent_runs.iterations_for(1, 4, 10), 1)
    self.assertEqual(agent_runs.iterations_for(40, 4, 10), 1)
    self.assertEqual(agent_runs.iterations_for(41, 4, 10), 2)


if __name__ == '__main__':
  unittest.main()
