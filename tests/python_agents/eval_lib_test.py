"""Tests for agents/python_agents/eval_lib.py: BLE's eval_agent over the evaluation runner."""

import dataclasses
import json
import unittest

import numpy as np

from agents.evaluation import environments, runner, suites
from agents.evaluation.errors import EvaluationError
from agents.python_agents import agent as agent_lib
from agents.python_agents import eval_lib, run_helpers

# BLE 1.0.1's eval_lib.EvaluationResult, field for field.
BLE_FIELDS = ['seed', 'cumulative_reward', 'time_within_radius', 'out_of_power',
              'envelope_burst', 'zeropressure', 'final_timestep', 'flight_path']
SHORT = eval_lib.EvaluationSuite(range(5), max_episode_length=24, wind='procedural')


def station_seeker(num_actions=3, observation_shape=(1099,)):
  return run_helpers.create_agent('station_seeker', num_actions, observation_shape)


class RecordingBatchedAgent(agent_lib.BatchedAgent):
  """Stays; records each call, and fails if a row is stepped outside its episode."""

  def __init__(self, batch_size):
    super().__init__(3, (1099,), batch_size)
    self.flying = np.zeros(batch_size, bool)
    self.begun = self.ended = 0
    self.mode = None

  def set_mode(self, mode):
    self.mode = mode

  def begin_episode(self, observations, rows):
    assert not self.flying[rows].any(), rows
    self.flying[rows] = True
    self.begun += len(rows)
    return np.ones(len(rows), np.int64)

  def step(self, rewards, observations, rows):
    assert self.flying[rows].all(), rows
    assert len(rewards) == len(observations) == len(rows)
    return np.ones(len(rows), np.int64)

  def end_episode(self, rewards, terminals, rows):
    assert self.flying[rows].all(), rows
    self.flying[rows] = False
    self.ended += len(rows)


class OutOfRange(agent_lib.Agent):

  def begin_episode(self, observation):
    return 7

  def step(self, reward, observation):
    return 7

  def end_episode(self, reward, terminal=True):
    pass


class NoStep:

  def begin_episode(self, observation):
    return 1

  def end_episode(self, reward, terminal=True):
    pass


class EvalAgentTest(unittest.TestCase):

  def test_results_have_bles_fields_in_bles_order(self):
    fields = [field.name for field in dataclasses.fields(eval_lib.EvaluationResult)]
    self.assertEqual(fields[:len(BLE_FIELDS)], BLE_FIELDS)
    result = eval_lib.eval_agent(station_seeker(), None, SHORT)[0]
    self.assertIsInstance(result.time_within_radius, float)
    self.assertIsInstance(result.out_of_power, bool)
    self.assertEqual(result.final_timestep, 24)
    self.assertEqual(len(result.flight_path), 24)
    self.assertEqual(set(vars(result.flight_path[0])),
                     {'x', 'y', 'pressure', 'superpressure', 'time_elapsed', 'battery_soc'})

  def test_station_seeker_equals_the_projects_evaluation(self):
    suite = suites.complete(SHORT, environments.get(eval_lib.env_id_of(None)))
    expected = {result.seed: result for result in runner.fly(
        'station_seeker', suite, suite.seeds, workers=0)}
    one_by_one = eval_lib.eval_agent(station_seeker(), None, SHORT,
                                     calculate_flight_path=False)
    side_by_side = eval_lib.eval_agent(station_seeker, None, SHORT, batch_size=3,
                                       calculate_flight_path=False)
    listed = eval_lib.eval_agent([station_seeker(), station_seeker()], None, SHORT,
                                 calculate_flight_path=False)
    for results in (one_by_one, side_by_side, listed):
      self.assertEqual([result.seed for result in results], list(SHORT.seeds))
      for result in results:
        theirs = expected[result.seed]
        self.assertEqual(result.cumulative_reward, theirs.cumulative_reward)
        self.assertEqual(result.final_timestep, theirs.final_timestep)
        for name in ('time_within_radius', 'twr50', 'out_of_power', 'envelope_burst',
                     'zeropressure'):
          self.assertEqual(getattr(result, name), theirs.metrics[name], name)

  def test_a_batched_agent_flies_the_suite_in_batches_in_eval_mode(self):
    agent = RecordingBatchedAgent(batch_size=2)
    results = eval_lib.eval_agent(agent, None, SHORT, calculate_flight_path=False)
    self.assertEqual([result.seed for result in results], list(SHORT.seeds))
    self.assertEqual((agent.begun, agent.ended), (5, 5))
    self.assertEqual(agent.mode, agent_lib.AgentMode.EVAL)

  def test_any_gymnasium_environment(self):
    results = eval_lib.eval_agent(agent_lib.RandomAgent(2, (4,)), 'CartPole-v1',
                                  eval_lib.EvaluationSuite(range(2), 10))
    self.assertEqual(len(results), 2)
    self.assertIsNone(results[0].time_within_radius)
    self.assertEqual(results[0].flight_path, [])
    self.assertLessEqual(results[0].final_timestep, 10)

  def test_results_encode_as_bles_json(self):
    result = eval_lib.eval_agent(station_seeker(), None, SHORT)[0]
    data = json.loads(json.dumps(result, cls=eval_lib.EvalResultEncoder))
    self.assertEqual(list(data)[:len(BLE_FIELDS)], BLE_FIELDS)
    self.assertEqual(set(data['flight_path'][0]),
                     {'x', 'y', 'pressure', 'superpressure', 'elapsed_seconds', 'power'})

  def test_an_agent_missing_a_method_is_named(self):
    with self.assertRaisesRegex(agent_lib.AgentError, r'NoStep has no callable step\(\)'):
      eval_lib.eval_agent(NoStep(), None, SHORT)

  def test_an_action_out_of_range_is_named(self):
    with self.assertRaisesRegex(EvaluationError, r'OutOfRange returned actions \[7'):
      eval_lib.eval_agent(OutOfRange(3, (1099,)), None, SHORT)

  def test_batch_size_is_for_factories(self):
    with self.assertRaisesRegex(EvaluationError, 'agent instance'):
      eval_lib.eval_agent(station_seeker(), None, SHORT, batch_size=4)
    with self.assertRaisesRegex(EvaluationError, 'positive integer'):
      eval_lib.eval_agent(station_seeker, None, SHORT, batch_size=0)


class SuiteTest(unittest.TestCase):

  def test_bles_suites(self):
    tiny = eval_lib.get_eval_suite('tiny_eval')
    self.assertEqual(list(tiny.seeds), list(range(10)))
    self.assertEqual(tiny.max_episode_length, 960)
    self.assertEqual(len(eval_lib.get_eval_suite('small_eval').seeds), 100)
    self.assertLessEqual({'micro_eval', 'tiny_eval', 'small_eval', 'medium_eval', 'big_eval',
                          'all_strata', 'hardest_strata'}, set(eval_lib.available_suites()))

  def test_an_unknown_suite_is_a_value_error_listing_the_names(self):
    with self.assertRaisesRegex(ValueError, "unknown suite 'teeny_eval'.*tiny_eval"):
      eval_lib.get_eval_suite('teeny_eval')


class SuitesModuleTest(unittest.TestCase):
  """`agents.python_agents.suites` answers BLE's `suites.get_eval_suite` as eval_lib does."""

  def test_same_suite_as_eval_lib(self):
    from agents.python_agents import eval_lib, suites
    self.assertEqual(list(suites.get_eval_suite('small_eval').seeds),
                     list(eval_lib.get_eval_suite('small_eval').seeds))


if __name__ == '__main__':
  unittest.main()
