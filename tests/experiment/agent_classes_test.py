"""Tests of agents/experiment/agent_classes.py: checks, environments, construction, records."""

import unittest

import gymnasium

from agents.experiment import agent_classes
from agents.experiment.errors import ExperimentError
from tests.helpers import ble_agents, rlberry_agents


class NamedOnly:
  """Takes env only: gets no seed, output_dir or eval_env."""

  def __init__(self, env, width=1):
    self.env, self.width = env, width

  def fit(self, budget):
    del budget

  def eval(self):
    return 0.0


class CheckTest(unittest.TestCase):

  def test_agent_classes_of_both_interfaces_pass(self):
    self.assertIs(agent_classes.check_agent_class(rlberry_agents.StepCounter),
                  rlberry_agents.StepCounter)
    self.assertTrue(agent_classes.is_ble_agent_class(ble_agents.CountingAgent))
    self.assertTrue(agent_classes.is_ble_agent_class(ble_agents.BatchedCountingAgent))
    self.assertFalse(agent_classes.is_ble_agent_class(rlberry_agents.StepCounter))

  def test_errors_name_the_class_and_the_method(self):
    with self.assertRaisesRegex(ExperimentError, r'FitOnly has no callable eval\(\)'):
      agent_classes.check_agent_class(rlberry_agents.FitOnly)
    with self.assertRaisesRegex(ExperimentError, 'must be a class'):
      agent_classes.check_agent_class(rlberry_agents.StepCounter(None))
    with self.assertRaisesRegex(ExperimentError, "init_kwargs of agent_class StepCounter: .*"
                                "'learning_rat'"):
      agent_classes.check_init_kwargs(rlberry_agents.StepCounter, {'learning_rat': 1})
    with self.assertRaisesRegex(ValueError, "action_"):
      agent_classes.check_init_kwargs(ble_agents.CountingAgent, {'action_': 1})
    with self.assertRaisesRegex(ExperimentError, r'train_env must be \(id_or_constructor'):
      agent_classes.check_env('CartPole-v1', 'train_env')
    with self.assertRaisesRegex(ExperimentError, "eval_env: kwargs must be a dict"):
      agent_classes.check_env(('CartPole-v1', [1]), 'eval_env')
    with self.assertRaisesRegex(ExperimentError,
                                "agent_class 'tests.helpers:Missing': tests.helpers has no"):
      agent_classes.import_path('tests.helpers:Missing', 'agent_class')


class EnvironmentTest(unittest.TestCase):

  def test_ids_and_constructors_are_built_and_seeded(self):
    first = agent_classes.make_env(('CartPole-v1', {}), seed=3)
    second = agent_classes.make_env((gymnasium.make, {'id': 'CartPole-v1'}), seed=3)
    self.assertEqual(first.action_space.sample(), second.action_space.sample())
    self.assertEqual(first.unwrapped.state.tolist(), second.unwrapped.state.tolist())

  def test_records_round_trip(self):
    record = agent_classes.env_to_record((gymnasium.make, {'id': 'CartPole-v1'}))
    self.assertEqual(record, {'constructor': 'gymnasium.envs.registration:make',
                              'kwargs': {'id': 'CartPole-v1'}})
    self.assertEqual(agent_classes.env_from_record(record, 'env'),
                     (gymnasium.make, {'id': 'CartPole-v1'}))
    self.assertEqual(agent_classes.record({'f': len, 'n': (1, 2), 'x': object}),
                     {'f': 'builtins:len', 'n': [1, 2], 'x': 'builtins:object'})


class ConstructTest(unittest.TestCase):

  def test_seed_and_output_dir_only_when_named(self):
    agent = agent_classes.construct(rlberry_agents.StepCounter, 'env', {'learning_rate': 0.2},
                                    seed=5, output_dir='/run')
    self.assertEqual((agent.seed, agent.output_dir, agent.learning_rate), (5, '/run', 0.2))
    plain = agent_classes.construct(NamedOnly, 'env', {'width': 2}, seed=5, output_dir='/run')
    self.assertEqual((plain.env, plain.width), ('env', 2))


if __name__ == '__main__':
  unittest.main()
