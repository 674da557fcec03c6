"""Tests for agents/evaluation/play.py: one episode at a time, a run's deterministic policy."""

import unittest

import gymnasium
import numpy as np

from agents.evaluation.play import DeterministicPolicy, play_episode
from agents.training import builders
from tests.helpers import tiny_run


class _ConstantPolicy:

  def __init__(self, action):
    self.action, self.episodes, self.observations = action, 0, []

  def begin_episode(self, indices):
    self.began_row_zero = list(indices) == [0]
    self.episodes += 1

  def __call__(self, observations):
    self.observations.append(observations[0])
    return [self.action] * len(observations)


class PlayEpisodeTest(unittest.TestCase):

  def test_plays_until_done_and_reports_every_step(self):
    env = gymnasium.make('CartPole-v1')
    policy = _ConstantPolicy(1)
    resets = []
    steps = list(play_episode(env, policy, seed=3,
                                       on_reset=lambda observ, info: resets.append(observ)))
    self.assertEqual(policy.episodes, 1)
    self.assertTrue(policy.began_row_zero)
    self.assertEqual(len(resets), 1)
    self.assertTrue(steps[-1].done)
    self.assertFalse(any(step.done for step in steps[:-1]))
    self.assertEqual(len(policy.observations), len(steps))
    self.assertTrue((policy.observations[0] == resets[0]).all())
    self.assertEqual(sum(step.reward for step in steps), float(len(steps)))
    # The same seed replays the same episode.
    again = list(play_episode(env, _ConstantPolicy(1), seed=3))
    self.assertEqual(len(again), len(steps))
    env.close()

  def test_max_steps_cuts_the_episode(self):
    env = gymnasium.make('CartPole-v1')
    steps = list(play_episode(env, _ConstantPolicy(0), seed=0, max_steps=3))
    self.assertEqual(len(steps), 3)
    env.close()


class DeterministicPolicyTest(unittest.TestCase):

  def test_a_batch_acts_row_by_row_like_single_observations(self):
    run_dir, _ = tiny_run.tiny_run()
    policy = DeterministicPolicy(run_dir)
    env = builders.make_env(policy.config)
    observations = np.stack([env.reset(seed=seed)[0] for seed in range(policy.num_agents)])
    env.close()
    policy.begin_episode(range(policy.num_agents))
    batch = policy(observations)
    self.assertEqual(len(batch), policy.num_agents)
    singles = [policy(observation[None])[0] for observation in observations]
    np.testing.assert_array_equal(batch, singles)

  def test_a_batch_larger_than_num_agents_is_refused(self):
    run_dir, _ = tiny_run.tiny_run()
    policy = DeterministicPolicy(run_dir)
    too_many = np.zeros((policy.num_agents + 1, 4), np.float32)
    with self.assertRaisesRegex(ValueError, 'num_agents'):
      policy(too_many)


if __name__ == '__main__':
  unittest.main()
