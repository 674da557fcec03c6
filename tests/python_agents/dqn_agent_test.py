"""Tests for agents/python_agents/dqn_agent.py (BLE's `dqn`): trained by
run_training_loop, evaluated on tiny_eval."""

import os
import tempfile
import unittest

import gymnasium
import numpy as np

from agents.env.balloon import constants
from agents.python_agents import agent as agent_lib
from agents.python_agents import dqn_agent, eval_lib, train_lib
from agents.python_agents.dqn_agent import BatchedDQNAgent, DQNAgent, ReplayMemory

# Tiny enough to learn in a few steps: updates from the 16th transition on, every step.
TINY = dict(replay_capacity=500, minibatch_size=8, min_replay=16, update_period=1,
            target_update_period=10, epsilon_decay_steps=50)


def weights(agent):
  return [variable.numpy().copy() for variable in agent.learner.online.trainable_variables]


def changed(before, after):
  return any(not np.array_equal(old, new) for old, new in zip(before, after))


class DQNAgentTest(unittest.TestCase):

  def setUp(self):
    self.base_dir = tempfile.mkdtemp()

  def train(self, env, agent, num_iterations):
    return train_lib.run_training_loop(self.base_dir, env, agent, num_iterations,
                                       max_episode_length=24, progress=False,
                                       episodes_per_iteration=None)

  def test_trains_checkpoints_resumes_and_evaluates(self):
    env = gymnasium.make(constants.BALLOON_ENV_ID, wind='procedural')
    self.addCleanup(env.close)
    agent = DQNAgent(3, (1099,), **TINY)
    initial = weights(agent)
    self.assertEqual(self.train(env, agent, 2)['iteration'], 1)
    self.assertTrue(changed(initial, weights(agent)))
    self.assertTrue(os.path.exists(os.path.join(self.base_dir, 'checkpoints', 'dqn-1.index')))

    resumed = DQNAgent(3, (1099,), **TINY)
    self.assertEqual(self.train(env, resumed, 3)['iteration'], 2)  # iterations 0 and 1 were done
    # The resumed agent restored the 48 training steps of the first two iterations.
    self.assertEqual(resumed.training_steps, 3 * 24)

    suite = eval_lib.get_eval_suite('tiny_eval:wind=procedural').replace(episode_length=24)
    results = eval_lib.eval_agent(resumed, env, suite, calculate_flight_path=False)
    self.assertEqual([result.seed for result in results], list(range(10)))
    self.assertTrue(all(0.0 <= result.twr50 <= 1.0 for result in results))

  def test_batched_form_trains_one_learner_on_a_batch(self):
    batch = train_lib.make_batch_env(constants.BALLOON_ENV_ID, 4, num_processes=0,
                                     progress_reward=0.2, wind='procedural')
    self.addCleanup(batch.close)
    agent = BatchedDQNAgent(3, (1099,), 4, **TINY)
    initial = weights(agent)
    self.assertEqual(self.train(batch, agent, 1)['iteration'], 0)
    self.assertEqual(agent.training_steps, 4 * 24)
    # One update per transition from the step that brings the memory to 16 (4 per step).
    self.assertEqual(agent.learner.updates, 4 * 24 - 12)
    self.assertTrue(changed(initial, weights(agent)))
    suite = eval_lib.get_eval_suite('tiny_eval:wind=procedural').replace(episode_length=24)
    results = eval_lib.eval_agent(agent, None, suite, calculate_flight_path=False)
    self.assertEqual(len(results), 10)

  def test_single_and_batched_forms_act_alike(self):
    observations = np.random.default_rng(0).uniform(0, 1, (40, 1099)).astype(np.float32)
    single, batched = DQNAgent(3, (1099,), **TINY), BatchedDQNAgent(3, (1099,), 1, **TINY)
    row = np.zeros(1, np.int64)
    single_actions = [single.begin_episode(observations[0])]
    batched_actions = [int(batched.begin_episode(observations[:1], row)[0])]
    for observation in observations[1:]:
      single_actions.append(single.step(0.5, observation))
      batched_actions.append(int(batched.step(np.array([0.5]), observation[None], row)[0]))
    self.assertEqual(single_actions, batched_actions)
    for old, new in zip(weights(single), weights(batched)):
      np.testing.assert_allclose(old, new, rtol=1e-5, atol=1e-6)

  def test_is_greedy_and_records_nothing_in_eval_mode(self):
    agent = DQNAgent(3, (1099,), **TINY)
    agent.set_mode(agent_lib.AgentMode.EVAL)
    observations = np.random.default_rng(0).uniform(0, 1, (30, 1099)).astype(np.float32)
    first = [agent.begin_episode(observations[0])]
    first += [agent.step(1.0, observation) for observation in observations[1:]]
    agent.end_episode(1.0)
    self.assertEqual(len(agent.learner.memory), 0)
    again = [agent.begin_episode(observations[0])]
    again += [agent.step(1.0, observation) for observation in observations[1:]]
    self.assertEqual(first, again)

  def test_constructor_takes_bles_arguments_and_hyperparameters(self):
    agent = DQNAgent(num_actions=3, observation_shape=(1099,), learning_rate=1e-3, seed=3)
    self.assertEqual(agent.get_name(), 'DQNAgent')
    self.assertIn(agent.begin_episode(np.zeros(1099, np.float32)), (0, 1, 2))
    mlp = DQNAgent(4, (5, 2), network='mlp', hidden_layers=(8,))
    self.assertIn(mlp.begin_episode(np.zeros((5, 2), np.float32)), range(4))

  def test_refuses_what_the_column_network_cannot_read(self):
    with self.assertRaisesRegex(ValueError, r"network='column' reads BLE's 1099 features"):
      DQNAgent(3, (10,))
    with self.assertRaisesRegex(ValueError, "network must be 'column' or 'mlp', got 'cnn'"):
      DQNAgent(3, (1099,), network='cnn')


class ReplayMemoryTest(unittest.TestCase):

  def test_n_step_returns_stop_at_ends_and_cuts(self):
    memory = ReplayMemory(1, 100, (1,), n_step=3, discount=0.5, seed=0)
    row = np.zeros(1, np.int64)
    # Episode 1: observations 0..4, the reward of step t is t + 1, terminal after step 4.
    for step in range(5):
      if step:
        memory.add_reward(row, [step])
      memory.add_step(row, np.array([[step]]), np.array([0]))
    memory.add_reward(row, [5], dqn_agent._TERMINAL)
    # Episode 2: observations 10 and 11 (reward 7), cut after 11; then 20, no reward yet.
    memory.add_step(row, np.array([[10]]), np.array([1]))
    memory.add_reward(row, [7])
    memory.add_step(row, np.array([[11]]), np.array([1]))
    memory.add_reward(row, [8], dqn_agent._CUT)
    memory.add_step(row, np.array([[20]]), np.array([2]))
    samples = {}
    observations, _, returns, discounts, next_observations, valid = memory.sample(400)
    for index in range(400):
      samples[float(observations[index, 0])] = (
          float(returns[index]), float(discounts[index]),
          float(next_observations[index, 0]), float(valid[index]))
    self.assertEqual(samples, {
        0.0: (1 + 0.5 * 2 + 0.25 * 3, 0.125, 3.0, 1.0),  # three steps, bootstrapped
        1.0: (2 + 0.5 * 3 + 0.25 * 4, 0.125, 4.0, 1.0),
        2.0: (3 + 0.5 * 4 + 0.25 * 5, 0.0, 10.0, 1.0),  # ends: no bootstrap
        3.0: (4 + 0.5 * 5, 0.0, 10.0, 1.0),
        4.0: (5.0, 0.0, 10.0, 1.0),
        10.0: (7.0, 0.5, 11.0, 1.0),  # cut after 11: bootstraps from 11
        11.0: (0.0, 1.0, 11.0, 0.0),  # the cut step itself: no transition
    })  # 20 has no reward yet: never drawn


if __name__ == '__main__':
  unittest.main()
