"""Tests for examples/dqn_agent.py: trained by run_training_loop, evaluated on tiny_eval."""

import os
import tempfile
import unittest

import gymnasium
import numpy as np

from agents.env.balloon import constants
from agents.python_agents import agent as agent_lib
from agents.python_agents import eval_lib, train_lib
from examples.dqn_agent import DQNAgent

# Tiny enough to learn in a few steps: updates from the 16th transition on, every step.
TINY = dict(hidden_layers=(16,), replay_capacity=500, batch_size=8, min_replay=16,
            update_period=1, target_update_period=10, epsilon_decay_steps=50)


def weights(agent):
  return [variable.numpy().copy() for variable in agent._online.trainable_variables]


class DQNAgentTest(unittest.TestCase):

  def setUp(self):
    self.env = gymnasium.make(constants.BALLOON_ENV_ID)
    self.addCleanup(self.env.close)
    self.base_dir = tempfile.mkdtemp()

  def train(self, agent, num_iterations):
    return train_lib.run_training_loop(self.base_dir, self.env, agent, num_iterations,
                                       max_episode_length=24, progress=False)

  def test_trains_checkpoints_resumes_and_evaluates(self):
    agent = DQNAgent(3, (1099,), **TINY)
    initial = weights(agent)
    self.assertEqual(self.train(agent, 2)['iteration'], 1)
    self.assertTrue(any(not np.array_equal(before, after)
                        for before, after in zip(initial, weights(agent))))
    self.assertTrue(os.path.exists(os.path.join(self.base_dir, 'checkpoints', 'dqn-1.index')))

    resumed = DQNAgent(3, (1099,), **TINY)
    self.assertEqual(self.train(resumed, 3)['iteration'], 2)  # iterations 0 and 1 were done

    suite = eval_lib.get_eval_suite('tiny_eval').replace(episode_length=24)
    results = eval_lib.eval_agent(resumed, self.env, suite, calculate_flight_path=False)
    self.assertEqual([result.seed for result in results], list(range(10)))
    self.assertTrue(all(0.0 <= result.twr50 <= 1.0 for result in results))
    # The resumed agent restored the 48 training steps of the first two iterations.
    self.assertEqual(int(resumed._training_steps.numpy()), 3 * 24)

  def test_is_greedy_and_records_nothing_in_eval_mode(self):
    agent = DQNAgent(3, (1099,), **TINY)
    agent.set_mode(agent_lib.AgentMode.EVAL)
    observations = np.random.default_rng(0).uniform(0, 1, (30, 1099)).astype(np.float32)
    first = [agent.begin_episode(observations[0])]
    first += [agent.step(1.0, observation) for observation in observations[1:]]
    agent.end_episode(1.0)
    self.assertEqual(len(agent._memory), 0)
    again = [agent.begin_episode(observations[0])]
    again += [agent.step(1.0, observation) for observation in observations[1:]]
    self.assertEqual(first, again)

  def test_constructor_takes_bles_arguments_and_hyperparameters(self):
    agent = DQNAgent(num_actions=3, observation_shape=(1099,), learning_rate=1e-3, seed=3)
    self.assertEqual(agent.get_name(), 'DQNAgent')
    self.assertIn(agent.begin_episode(np.zeros(1099, np.float32)), (0, 1, 2))


if __name__ == '__main__':
  unittest.main()
