"""The worked example (examples/dqn_agent.py) through the two other ways users train it:
the command line (`train --agent=...`) and the experiment manager (`agent_class=...`)."""

import os
import tempfile
import unittest

from agents.experiment import ExperimentManager
from agents.python_agents import train_lib
from examples.dqn_agent import DQNAgent
from tests.scripts.train_agent_flag_test import metric_rows, run

# Learns from the 8th transition on, every step: enough to see the weights move.
TINY = dict(replay_capacity=200, minibatch_size=8, min_replay=8, update_period=1,
            target_update_period=5, epsilon_decay_steps=20)


class CommandLineTest(unittest.TestCase):

  def test_the_batched_dqn_trains_and_resumes_from_the_command_line(self):
    logdir = tempfile.mkdtemp()
    tiny = [f'--set=agent.{key}={value}' for key, value in TINY.items()]
    common = ['--logdir', logdir, '--timestamp', 'T', '--config', 'balloon', '--num_agents',
              '2', '--noenv_processes', '--set', 'environment.max_episode_steps=12', '--quiet',
              '--set', 'environment.kwargs={progress_reward: 0.2, wind: procedural}']
    code, _, stderr = run([*common, '--agent', 'examples.dqn_agent:BatchedDQNAgent',
                           '--set', 'loop.steps=24', *tiny])
    self.assertEqual(code, 0, stderr)
    run_dir = os.path.join(logdir, 'T-balloon')
    self.assertEqual([row['step'] for row in metric_rows(run_dir)], [24])
    self.assertTrue(any(name.startswith('dqn-0')
                        for name in os.listdir(os.path.join(run_dir, 'checkpoints'))))
    code, _, stderr = run([*common, '--set', 'loop.steps=48'])  # resume, train longer
    self.assertEqual(code, 0, stderr)
    self.assertEqual([row['step'] for row in metric_rows(run_dir)], [24, 48])


class ExperimentManagerTest(unittest.TestCase):

  def test_two_fits_of_the_dqn_class_train_and_evaluate(self):
    one_balloon = (train_lib.make_batch_env, dict(env_id='BalloonLearningEnvironment-v0',
                                                  num_balloons=1, num_processes=0,
                                                  wind='procedural'))
    manager = ExperimentManager(
        agent_class=DQNAgent, train_env=one_balloon, fit_budget=24, n_fit=2, seed=0,
        init_kwargs=dict(max_episode_length=12,
                         eval_suite='custom:seeds=0-1,episode_length=12,wind=procedural',
                         **TINY),
        parallelization='inline', output_dir=tempfile.mkdtemp())
    manager.fit()
    adapters = manager.get_agent_instances()
    self.assertEqual(len(adapters), 2)
    for adapter in adapters:
      self.assertEqual(adapter.agent.training_steps, 24)  # one balloon: the agent itself
    scores = manager.eval_agents(n_simulations=2)
    self.assertEqual(len(scores), 2)
    self.assertTrue(all(0.0 <= score <= 1.0 for score in scores))


if __name__ == '__main__':
  unittest.main()
