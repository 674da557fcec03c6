"""Tests for agents/python_agents/run_helpers.py (create_agent, bind_gin_variables) and
quantile_agent.py."""

import contextlib
import io
import logging
import tempfile
import unittest
from unittest import mock

import numpy as np

from agents.env.balloon.controllers import baselines
from agents.evaluation.errors import EvaluationError
from agents.python_agents import agent as agent_lib
from agents.python_agents import run_helpers
from agents.run import checkpoints

OBSERVATIONS = np.random.default_rng(0).uniform(0, 1, (6, 1099)).astype(np.float32)


class CreateAgentTest(unittest.TestCase):

  def test_the_shipped_agents_under_bles_names(self):
    self.assertLessEqual({'random', 'station_seeker', 'random_walk', 'balloon_ppo', 'quantile'},
                         set(run_helpers.agent_names()))
    for name in ('random', 'station_seeker', 'random_walk', 'balloon_ppo'):
      agent = run_helpers.create_agent(name, 3, (1099,))
      self.assertIsInstance(agent, agent_lib.Agent, name)
      action = agent.begin_episode(OBSERVATIONS[0])
      self.assertIn(action, (0, 1, 2), name)
      self.assertIn(agent.step(0.5, OBSERVATIONS[1]), (0, 1, 2), name)
      agent.end_episode(0.5, terminal=False)

  def test_station_seeker_acts_as_the_baseline(self):
    agent = run_helpers.create_agent('station_seeker', 3, (1099,))
    actions = [agent.begin_episode(OBSERVATIONS[0])]
    actions += [agent.step(0.0, observation) for observation in OBSERVATIONS[1:]]
    self.assertEqual(actions, baselines.station_seeker(OBSERVATIONS).tolist())
    self.assertEqual(agent.get_name(), 'station_seeker')

  def test_balloon_ppo_flies_the_shipped_model(self):
    import tensorflow as tf
    model = tf.saved_model.load(run_helpers.BALLOON_PPO)
    agent = run_helpers.create_agent('balloon_ppo', 3, (1099,))
    actions = [agent.begin_episode(OBSERVATIONS[0])]
    actions += [agent.step(0.0, observation) for observation in OBSERVATIONS[1:]]
    self.assertEqual(actions, model.action(OBSERVATIONS).numpy().tolist())

  def test_balloon_ppo_without_the_model_says_where_it_looked(self):
    with self.assertRaisesRegex(EvaluationError, 'a wheel does not hold models/'):
      run_helpers.create_agent('balloon_ppo', 3, (1099,), path='/nonexistent/balloon_ppo')

  def test_an_unknown_name_lists_the_names(self):
    with self.assertRaisesRegex(run_helpers.UnknownAgentError,
                                "unknown agent 'perciatelli45'.*station_seeker"):
      run_helpers.create_agent('perciatelli45', 3, (1099,))


class QuantileAgentTest(unittest.TestCase):

  def make(self, **overrides):
    hyperparameters = dict(num_envs=2, replay_capacity=200, batch_size=8, learning_starts=8,
                           hidden_layers=(16,), num_quantiles=5)
    hyperparameters.update(overrides)
    single = run_helpers.create_agent('quantile', 3, (1099,), **hyperparameters)
    self.assertIsInstance(single, agent_lib.SingleBalloonAgent)
    return single.batched_agent

  def fly(self, agent, steps):
    rows = np.array([0, 1])
    agent.begin_episode(OBSERVATIONS[:2], rows)
    for step in range(steps):
      actions = agent.step(np.ones(2), OBSERVATIONS[[step % 6, (step + 1) % 6]], rows)
      self.assertTrue(set(actions.tolist()) <= {0, 1, 2})
    agent.end_episode(np.ones(2), np.array([True, False]), rows)

  def test_learns_in_train_mode_only(self):
    agent = self.make()
    self.assertIsInstance(agent, agent_lib.BatchedAgent)
    self.fly(agent, 10)
    updates = int(agent.qrdqn.num_updates.numpy())
    self.assertGreater(updates, 0)
    agent.set_mode(agent_lib.AgentMode.EVAL)
    self.fly(agent, 10)
    self.assertEqual(int(agent.qrdqn.num_updates.numpy()), updates)

  def test_checkpoints_restore_the_networks(self):
    agent = self.make()
    self.fly(agent, 10)
    directory = tempfile.mkdtemp()
    agent.save_checkpoint(directory, 3)
    restored = self.make()
    self.assertEqual(restored.reload_latest_checkpoint(directory), 3)
    for mine, theirs in zip(agent.qrdqn.online_network.trainable_variables,
                            restored.qrdqn.online_network.trainable_variables):
      np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    with self.assertRaises(checkpoints.CheckpointError):
      self.make(hidden_layers=(8,)).load_checkpoint(directory, 3)

  def test_an_unknown_hyperparameter_is_named(self):
    with self.assertRaisesRegex(ValueError, "no hyperparameter 'learning_rat'"):
      self.make(learning_rat=0.1)

  def test_a_value_out_of_range_is_named(self):
    with self.assertRaisesRegex(ValueError, "'QuantileAgent.learning_rate'.*got -1"):
      self.make(learning_rate=-1)

  def test_answers_bles_single_balloon_methods(self):
    agent = run_helpers.create_agent('quantile', 3, (1099,), replay_capacity=50, batch_size=4,
                                     learning_starts=4, hidden_layers=(8,), num_quantiles=3)
    self.assertIsInstance(agent, agent_lib.Agent)
    self.assertEqual(agent.get_name(), 'quantile')
    actions = [agent.begin_episode(OBSERVATIONS[0])]
    actions += [agent.step(1.0, observation) for observation in OBSERVATIONS[1:]]
    agent.end_episode(1.0, True)
    self.assertTrue(all(type(action) is int and 0 <= action < 3 for action in actions))
    self.assertGreater(int(agent.batched_agent.qrdqn.num_updates.numpy()), 0)


class BindGinVariablesTest(unittest.TestCase):

  def test_a_missing_gin_file_is_one_error_and_the_root_logger_stays_unconfigured(self):
    # gin's resource reader logs 'Path not found' through the root logger and, when the root
    # has no handler, runs logging.basicConfig(): both would outlive the one-line error.
    import gin
    for path in ('/nonexistent/mine.gin', 'nonexistent/mine.gin'):
      with self.subTest(path=path), mock.patch.object(logging.root, 'handlers', []):
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), self.assertRaisesRegex(
            run_helpers.GinConfigError, f'gin file {path}: no such file'):
          run_helpers.bind_gin_variables('random', agent_gin_file=path)
        gin.clear_config()
        self.assertEqual((stderr.getvalue(), logging.root.handlers), ('', []))


if __name__ == '__main__':
  unittest.main()
