"""Tests for agents/scripts/evaluate.py (DeterministicPolicy is covered by visualize_test)."""

import unittest

import gymnasium

from agents.scripts import evaluate


class _ConstantPolicy:

  def __init__(self, action):
    self.action, self.episodes, self.observations = action, 0, []

  def begin_episode(self):
    self.episodes += 1

  def __call__(self, observ):
    self.observations.append(observ)
    return self.action


class PlayEpisodeTest(unittest.TestCase):

  def test_plays_until_done_and_reports_every_step(self):
    env = gymnasium.make('CartPole-v1')
    policy = _ConstantPolicy(1)
    resets = []
    steps = list(evaluate.play_episode(env, policy, seed=3,
                                       on_reset=lambda observ, info: resets.append(observ)))
    self.assertEqual(policy.episodes, 1)
    self.assertEqual(len(resets), 1)
    self.assertTrue(steps[-1].done)
    self.assertFalse(any(step.done for step in steps[:-1]))
    self.assertEqual(len(policy.observations), len(steps))
    self.assertTrue((policy.observations[0] == resets[0]).all())
    self.assertEqual(sum(step.reward for step in steps), float(len(steps)))
    # The same seed replays the same episode.
    again = list(evaluate.play_episode(env, _ConstantPolicy(1), seed=3))
    self.assertEqual(len(again), len(steps))
    env.close()

  def test_max_steps_cuts_the_episode(self):
    env = gymnasium.make('CartPole-v1')
    steps = list(evaluate.play_episode(env, _ConstantPolicy(0), seed=0, max_steps=3))
    self.assertEqual(len(steps), 3)
    env.close()


if __name__ == '__main__':
  unittest.main()
