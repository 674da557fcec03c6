"""Tests of agents/env/balloon/lookahead.py: the observation option `lookahead`."""

import os
import tempfile
import unittest

import numpy as np

from agents.configs import yaml_io
from agents.env.balloon import constants, features, lookahead, planner, reward
from agents.env.balloon.constants import BALLOON_ENV_ID
from agents.env.balloon.env import BalloonEnv, BalloonVectorEnv
from agents.env.balloon.simulator import EVALUATION_SEED_BASE
from agents.evaluation import environments, policies, runner, suites

SEEDS = [EVALUATION_SEED_BASE + seed for seed in (2, 4, 9)]
# Two horizons of a few rollout steps keep the tests fast; the computation is the same.
SHORT = lookahead.Lookahead(hours=(1.0, 2.0), stride=4, step_s=1800.0)


def flown(option=SHORT, steps=6, seeds=SEEDS):
  """A slab with the option after `steps` steps (the GP holds measurements)."""
  env = BalloonVectorEnv(len(seeds), lookahead=option)
  observation, _ = env.reset(seed=seeds)
  for step in range(steps):
    observation, *_ = env.step(np.full(len(seeds), (constants.UP, constants.DOWN)[step % 2]))
  return env, observation


def manual_features(simulator, option, row, level_offset):
  """One level's features by a plain rollout in the estimated wind, GP mean in float64."""
  pressure = constants.COLUMN_MIN_PRESSURE + (
      features.balloon_level(simulator.pressure)[row] + level_offset
  ) * constants.COLUMN_PRESSURE_STEP
  count = simulator.num_balloons
  state = tuple(value[:, None].copy() for value in (
      simulator.x, simulator.y, simulator.pressure, simulator.time_elapsed_s))
  targets = np.full((count, 1), pressure)
  values, reward_sum = [], 0.0
  checkpoints = option.checkpoints()
  for step in range(1, checkpoints[-1] + 1):
    state = planner.rollout_step(simulator, state, targets, option.step_s,
                                 option.ascent_rate, option.descent_rate)
    distance_km = float(np.hypot(state[0][row, 0], state[1][row, 0]) / 1000.0)
    reward_sum += float(reward.distance_reward(distance_km))
    if step in checkpoints:
      values += [distance_km / (distance_km + constants.DISTANCE_SQUASH_KM), reward_sum / step]
  return np.array(values)


class LookaheadOptionTest(unittest.TestCase):

  def test_observation_gains_the_block_after_bles(self):
    env, observation = flown()
    size = constants.OBSERVATION_SIZE + constants.NUM_COLUMN_LEVELS * 4
    self.assertEqual(observation.shape, (len(SEEDS), size))
    self.assertEqual(env.single_observation_space.shape, (size,))
    self.assertTrue(env.observation_space.contains(observation))
    # BLE's 1099 floats are unchanged by the option.
    _, plain = flown(None)
    np.testing.assert_array_equal(observation[:, :constants.OBSERVATION_SIZE], plain)

  def test_levels_match_a_plain_rollout_in_the_estimated_wind(self):
    env, observation = flown()
    block = observation[:, constants.OBSERVATION_SIZE:].reshape(len(SEEDS), -1, 4)
    for row in range(len(SEEDS)):
      for offset in (-8, 0, 4, 12):
        index = constants.BALLOON_COLUMN_INDEX + offset
        if observation[row, constants.NUM_AMBIENT_FEATURES + 3 * index + 2] >= 1.0:
          continue  # unreachable: padding (tested below)
        # The block's GP mean is float32 (WindGP.mean_at), the reference's float64.
        np.testing.assert_allclose(block[row, index],
                                   manual_features(env.simulator, SHORT, row, offset),
                                   atol=1e-5)

  def test_only_reachable_levels_on_the_stride_are_computed(self):
    _, observation = flown()
    block = observation[:, constants.OBSERVATION_SIZE:].reshape(len(SEEDS), -1, 2, 2)
    column = observation[:, constants.NUM_AMBIENT_FEATURES:constants.OBSERVATION_SIZE].reshape(
        len(SEEDS), -1, 3)
    padding = np.all(block == np.array([1.0, 0.0], np.float32), axis=(2, 3))
    on_stride = (np.arange(constants.NUM_COLUMN_LEVELS) - constants.BALLOON_COLUMN_INDEX) % 4 == 0
    reachable = column[..., 2] < 1.0
    np.testing.assert_array_equal(~padding, reachable & on_stride[None])
    self.assertTrue((~padding).any(axis=1).all())  # every balloon has computed levels

  def test_single_environment_matches_the_slab(self):
    env = BalloonEnv(lookahead={'hours': [1, 2], 'stride': 4})
    observation, _ = env.reset(seed=SEEDS[0])
    observation, *_ = env.step(constants.UP)
    _, slab_observation = flown(steps=1, seeds=SEEDS[:1])
    np.testing.assert_array_equal(observation, slab_observation[0])
    self.assertEqual(env.observation_space.shape, observation.shape)

  def test_after_a_partial_reset_every_rows_block_is_its_balloons(self):
    env, _ = flown()
    mask = np.array([True, False, False])
    observation, _ = env.reset(seed=[SEEDS[0] + 100, None, None], options={'reset_mask': mask})
    expected = lookahead.lookahead_block(env.simulator, SHORT)
    np.testing.assert_array_equal(observation[:, constants.OBSERVATION_SIZE:], expected)


class CheckLookaheadTest(unittest.TestCase):

  def test_values_that_turn_it_on_or_off(self):
    self.assertIsNone(lookahead.check_lookahead(None))
    self.assertIsNone(lookahead.check_lookahead(False))
    self.assertEqual(lookahead.check_lookahead(True), lookahead.Lookahead())
    self.assertEqual(lookahead.check_lookahead({'hours': 6}).hours, (6.0,))
    self.assertEqual(lookahead.check_lookahead(SHORT), SHORT)

  def test_bad_values_are_named(self):
    for value, words in (({'hours': []}, 'hours'), ({'hours': [6, 3]}, 'increasing'),
                         ({'stride': 7}, 'divisor of 180'), ({'step_s': 0}, 'step_s'),
                         ({'step_s': 9000, 'hours': [1]}, 'longest horizon'),
                         ({'horizon': 3}, 'unknown keys .*horizon'),
                         ({'ascent_rate': -1}, 'ascent_rate')):
      with self.subTest(value=value), self.assertRaisesRegex(ValueError, words):
        lookahead.check_lookahead(value)
    with self.assertRaisesRegex(TypeError, 'lookahead must be'):
      lookahead.check_lookahead('yes')
    with self.assertRaisesRegex(TypeError, 'lookahead must be'):
      BalloonVectorEnv(1, lookahead=3)

  def test_size(self):
    option = lookahead.Lookahead(hours=(3, 6, 12))
    self.assertEqual(option.features_per_level, 6)
    self.assertEqual(option.size, 6 * constants.NUM_COLUMN_LEVELS)
    self.assertEqual(option.checkpoints(), [6, 12, 24])


class ShapeRecorder:
  """A batched policy that flies STAY and keeps the observation shapes it was shown."""

  def __init__(self):
    self.shapes = set()

  def begin_episode(self, indices, seeds=None):
    del indices, seeds

  def __call__(self, observations):
    self.shapes.add(np.shape(observations)[1:])
    return np.full(len(observations), constants.STAY)


class EvaluationTest(unittest.TestCase):
  """Suites fly an agent with the observation option it trained with."""

  def setUp(self):
    self.environment = environments.get(BALLOON_ENV_ID)

  def test_a_runs_observation_options_are_read_from_its_config(self):
    run_dir = tempfile.mkdtemp()
    yaml_io.save_yaml({'environment': {
        'id': BALLOON_ENV_ID, 'kwargs': {'progress_reward': 0.2,
                                          'lookahead': {'hours': [1, 2]}}}},
                      os.path.join(run_dir, 'config.yaml'))
    self.assertEqual(policies.observation_kwargs(f'run:{run_dir}', self.environment),
                     {'lookahead': {'hours': [1, 2]}})
    # Training options (the shaped reward) stay behind; other agents have none.
    self.assertEqual(policies.observation_kwargs('station_seeker', self.environment), {})
    self.assertEqual(self.environment.observation_kwargs({'progress_reward': 0.2,
                                                           'lookahead': None}), {})

  def test_slabs_and_spaces_show_the_option(self):
    option = {'lookahead': {'hours': [1, 2]}}
    size = constants.OBSERVATION_SIZE + 4 * constants.NUM_COLUMN_LEVELS
    self.assertEqual(self.environment.observation_space(option).shape, (size,))
    self.assertEqual(self.environment.observation_space({}).shape,
                     (constants.OBSERVATION_SIZE,))
    suite = suites.Suite('short', range(2), episode_length=3)
    policy = ShapeRecorder()
    results = runner.fly('recorder', suite, suite.seeds, workers=0, policy=policy,
                         env_id=BALLOON_ENV_ID, observation_kwargs=option)
    self.assertEqual(len(results), 2)
    self.assertEqual(policy.shapes, {(size,)})


if __name__ == '__main__':
  unittest.main()
