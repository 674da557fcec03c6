"""Tests of agents/env/balloon/controllers/baselines.py: the baseline policies over observations."""

import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon import evaluation as balloon_evaluation
from agents.env.balloon.controllers import baselines


def _observations(count, best_column=None, pressure_feature=0.5, distance_feature=0.2):
  observations = np.zeros((count, constants.OBSERVATION_SIZE), np.float32)
  observations[:, 0] = pressure_feature
  observations[:, 7] = distance_feature
  column = observations[:, 16:].reshape(count, 361, 3)
  column[:] = (0.0, 1.0, 1.0)
  column[:, 150:211] = (0.0, 0.9, 0.2)  # valid, wind mostly away from the station
  if best_column is not None:
    for row, index in enumerate(best_column):
      column[row, index] = (0.0, 0.0, 0.2)  # wind straight at the station
  return observations


class StationSeekerTest(unittest.TestCase):

  def test_heads_for_the_best_level(self):
    observations = _observations(3, best_column=[160, 180, 200])
    np.testing.assert_array_equal(baselines.station_seeker(observations),
                                  [constants.UP, constants.STAY, constants.DOWN])

  def test_score_formula(self):
    observations = _observations(1)
    column = observations[0, 16:].reshape(361, 3)
    column[170] = (0.2, 0.25, 0.4)
    distance_km = 250.0 * 0.2 / 0.8
    bearing, speed = 0.25 * np.pi, 30.0 * 0.4 / 0.6
    alpha = np.exp(-distance_km / 35.0)
    wind = (1 - alpha) * np.exp(-0.6 * bearing) + alpha * np.exp(-0.07 * speed)
    expected = (1 - 0.2 + 0.01) * wind + 0.5 * 0.2 + 0.05 * np.exp(-0.001 * 10)
    scores = baselines.station_seeker_scores(observations)
    self.assertAlmostEqual(scores[0, 170], expected, places=5)
    self.assertEqual(scores[0, 0], -np.inf)  # padding is never a candidate

  def test_compiled_actions_are_the_argmax_of_the_scores(self):
    """The compiled policy picks the first best level of `station_seeker_scores`."""
    from agents.env.balloon.env import BalloonVectorEnv
    env = BalloonVectorEnv(32, max_episode_steps=960, wind='procedural')
    observations, _ = env.reset(seed=list(range(500, 532)))
    rng = np.random.default_rng(0)
    for _ in range(60):
      scores = baselines.station_seeker_scores(observations)
      best = scores.argmax(axis=1)
      center = constants.BALLOON_COLUMN_INDEX
      expected = np.where(~np.isfinite(scores).any(axis=1), constants.STAY, np.where(
          best < center, constants.UP, np.where(best > center, constants.DOWN,
                                                constants.STAY)))
      actions = baselines.station_seeker(observations)
      np.testing.assert_array_equal(actions, expected)
      np.testing.assert_array_equal(baselines.station_seeker(observations.astype(np.float64)),
                                    expected)
      # Mix in random actions so the balloons visit more of the column.
      observations, *_ = env.step(np.where(rng.random(32) < 0.5, actions,
                                           rng.integers(0, 3, 32)))

  def test_no_valid_level_stays(self):
    observations = _observations(1)
    observations[0, 16:].reshape(361, 3)[:] = (0.0, 1.0, 1.0)
    np.testing.assert_array_equal(baselines.station_seeker(observations), [constants.STAY])


class RandomPoliciesTest(unittest.TestCase):

  def test_random_walk_steers_to_its_target(self):
    policy = baselines.RandomWalkPolicy(3, seed=0)
    policy._target[:] = 9500.0  # noqa: SLF001 - pin the target for the test
    pressures = np.array([9000.0, 9550.0, 10000.0])
    observations = np.zeros((3, constants.OBSERVATION_SIZE))
    observations[:, 0] = (pressures - 5000.0) / 9000.0
    # The first call is the episode's first action: no random step yet.
    np.testing.assert_array_equal(policy(observations),
                                  [constants.DOWN, constants.STAY, constants.UP])

  def test_random_walk_is_seeded(self):
    observations = np.zeros((4, constants.OBSERVATION_SIZE))
    first = [baselines.RandomWalkPolicy(4, seed=3)(observations) for _ in range(2)]
    np.testing.assert_array_equal(first[0], first[1])

  def test_evaluate_short_episode(self):
    result = balloon_evaluation.fly(baselines.StationSeekerPolicy(), [1, 2], wind='static', steps=3)
    self.assertEqual(result['twr50'].shape, (2,))
    self.assertTrue(np.all((result['twr50'] >= 0) & (result['twr50'] <= 1)))


if __name__ == '__main__':
  unittest.main()
