"""`PPOAgent` and `QRDQNAgent`: the in-graph algorithms as rlberry agents, a few hundred steps."""

import tempfile
import unittest

from agents.experiment import ExperimentManager, PPOAgent, QRDQNAgent, gym_make


class GraphAgentsTest(unittest.TestCase):

  def test_ppo_in_a_manager_from_gym_make_logs_through_its_writer(self):
    manager = ExperimentManager(PPOAgent, (gym_make, dict(id='CartPole-v1')), fit_budget=64,
                                n_fit=1, seed=0, output_dir=tempfile.mkdtemp(),
                                init_kwargs=dict(num_envs=2), parallelization='inline',
                                eval_kwargs=dict(eval_horizon=20, n_simulations=1))
    manager.fit()
    manager.fit(32)  # Resumes from the run's checkpoint.
    agent, = manager.agent_handlers
    self.assertEqual(agent.total_steps, 96)
    rows = manager.get_writer_data()[0]
    self.assertIn('episode_rewards', set(rows['tag']))
    self.assertEqual(rows['global_step'].max(), 96)
    value, = manager.eval_agents(1)
    self.assertGreater(value, 0)
    loaded = ExperimentManager.load(manager.save())
    self.assertIn(loaded.get_agent_instances()[0].policy(agent.env.reset()[0]), (0, 1))

  def test_qrdqn_in_a_manager_from_a_gymnasium_id(self):
    manager = ExperimentManager(QRDQNAgent, ('CartPole-v1', {}), fit_budget=64, n_fit=1,
                                seed=0, output_dir=tempfile.mkdtemp(),
                                init_kwargs=dict(num_envs=2), parallelization='inline',
                                eval_kwargs=dict(eval_horizon=20, n_simulations=1))
    manager.fit()
    rows = manager.get_writer_data()[0]
    self.assertEqual(rows['global_step'].max(), 64)
    value, = manager.eval_agents(1)
    self.assertGreater(value, 0)

if __name__ == '__main__':
  unittest.main()
