"""Tests for agents/python_agents/agent.py: BLE's Agent interface and its batched form."""

import os
import tempfile
import unittest

import numpy as np

from agents.python_agents import agent as agent_lib


class Constant(agent_lib.Agent):
  """Always `action`; raises in step when told to; checkpoints its name."""

  def __init__(self, num_actions=3, observation_shape=(2,), action=1, fail=False):
    self.action, self.fail, self.mode, self.ended = action, fail, None, []
    super().__init__(num_actions, observation_shape)

  def set_mode(self, mode):
    self.mode = agent_lib.AgentMode(mode)

  def begin_episode(self, observation):
    return self.action

  def step(self, reward, observation):
    if self.fail:
      raise ValueError('bad weights')
    return self.action

  def end_episode(self, reward, terminal=True):
    self.ended.append((reward, terminal))

  def save_checkpoint(self, checkpoint_dir, iteration_number):
    with open(os.path.join(checkpoint_dir, f'{iteration_number}.txt'), 'w') as file:
      file.write(str(self.action))


class AgentTest(unittest.TestCase):

  def test_bles_defaults(self):
    agent = agent_lib.RandomAgent(3, (1099,))
    self.assertEqual(agent.get_name(), 'RandomAgent')
    self.assertEqual(agent.reload_latest_checkpoint('/nowhere'), -1)
    self.assertIn(agent.begin_episode(np.zeros(1099)), (0, 1, 2))
    self.assertIsNone(agent.save_checkpoint('/nowhere', 0))
    self.assertEqual(Constant().mode, agent_lib.AgentMode.TRAIN)

  def test_check_agent_names_the_missing_method(self):
    class NoEnd:
      def begin_episode(self, observation):
        return 0

      def step(self, reward, observation):
        return 0

    with self.assertRaisesRegex(agent_lib.AgentError, r'NoEnd has no callable end_episode'):
      agent_lib.check_agent(NoEnd())


class BatchedFormTest(unittest.TestCase):

  def test_agent_per_row_routes_each_row_to_its_agent(self):
    agents = [Constant(action=0), Constant(action=2)]
    batched = agent_lib.AgentPerRow(agents)
    observations = np.zeros((2, 2))
    np.testing.assert_array_equal(batched.begin_episode(observations, np.array([0, 1])), [0, 2])
    np.testing.assert_array_equal(batched.step(np.array([1.0]), observations[1:],
                                               np.array([1])), [2])
    batched.end_episode(np.array([0.5]), np.array([False]), np.array([1]))
    self.assertEqual((agents[0].ended, agents[1].ended), ([], [(0.5, False)]))
    batched.set_mode('eval')
    self.assertEqual({agent.mode for agent in agents}, {agent_lib.AgentMode.EVAL})

  def test_agent_per_row_keeps_each_rows_checkpoint_apart(self):
    batched = agent_lib.AgentPerRow([Constant(action=0), Constant(action=2)])
    with tempfile.TemporaryDirectory() as directory:
      batched.save_checkpoint(directory, 3)
      with open(os.path.join(directory, 'row_1', '3.txt')) as file:
        self.assertEqual(file.read(), '2')

  def test_an_agent_that_raises_is_named_with_its_row(self):
    batched = agent_lib.AgentPerRow([Constant(), Constant(fail=True)])
    with self.assertRaisesRegex(agent_lib.AgentStepError,
                                r"agent's step\(\) raised for balloon \(row\) 1: "
                                'ValueError: bad weights') as caught:
      batched.step(np.zeros(2), np.zeros((2, 2)), np.array([0, 1]))
    error = caught.exception.at_iteration(4)
    self.assertEqual((error.method, error.row, error.iteration), ('step', 1, 4))
    self.assertIn('at iteration 4', str(error))

  def test_as_batched_and_is_batched(self):
    single = Constant()
    wrapped = agent_lib.as_batched(single)
    self.assertIsInstance(wrapped, agent_lib.AgentPerRow)
    self.assertIs(wrapped.agents[0], single)
    self.assertTrue(agent_lib.is_batched(wrapped))
    self.assertIs(agent_lib.as_batched(wrapped), wrapped)
    self.assertFalse(agent_lib.is_batched(single))


class CheckActionsTest(unittest.TestCase):

  def test_good_actions_become_an_int_array(self):
    checked = agent_lib.check_actions([np.int32(2), 0], np.array([4, 7]), 3)
    self.assertEqual(checked.dtype, np.int64)
    np.testing.assert_array_equal(checked, [2, 0])

  def test_bad_actions_name_the_action_the_row_and_the_range(self):
    expected = r'; expected an int in \[0, 3\)\.'
    cases = (([0, 3], r'action 3 for balloon \(row\) 7: out of range' + expected),
             ([-1, 0], r'action -1 for balloon \(row\) 4: out of range' + expected),
             ([0, 1.0], r'action 1\.0 for balloon \(row\) 7: of type float' + expected),
             ([True, 0], r'action True for balloon \(row\) 4: of type bool' + expected),
             ([[0, 1], [1, 1]],
              r'action \[0, 1\] for balloon \(row\) 4: an array of shape \(2,\)'),
             ([0], r'actions of shape \(1,\) for 2 balloons .*one int in \[0, 3\) per row'),
             # What AgentPerRow returns when one agent returns None.
             (agent_lib._action_array([1, None]),  # noqa: SLF001
              r'action None for balloon \(row\) 7: of type NoneType' + expected))
    for actions, message in cases:
      with self.subTest(actions=actions):
        with self.assertRaisesRegex(agent_lib.AgentActionError, '^Mine returned ' + message):
          agent_lib.check_actions(actions, np.array([4, 7]), 3, 'Mine')

  def test_the_error_is_an_agent_error_and_a_value_error(self):
    with self.assertRaises(agent_lib.AgentActionError) as caught:
      agent_lib.check_actions([5], np.array([0]), 3, iteration=2)
    self.assertIsInstance(caught.exception, ValueError)
    self.assertIsInstance(caught.exception, agent_lib.AgentError)
    self.assertEqual((caught.exception.action, caught.exception.row,
                      caught.exception.iteration), (5, 0, 2))


if __name__ == '__main__':
  unittest.main()
