"""Tests of agents/env/balloon/observation/lookahead.py: the observation option `lookahead`."""

import dataclasses
import os
import tempfile
import unittest

import gymnasium
import numpy as np

from agents import configs
from agents.algorithms.ppo import networks
from agents.configs import yaml_io
from agents.env.balloon import column_network_config, constants
from agents.env.balloon.constants import BALLOON_ENV_ID
from agents.env.balloon.controllers import planner
from agents.env.balloon.env import BalloonEnv, BalloonVectorEnv
from agents.env.balloon.episode_start import EVALUATION_SEED_BASE
from agents.env.balloon.observation import features, lookahead
from agents.env.balloon.physics import reward
from agents.evaluation import environments, policies, runner, suites

SEEDS = [EVALUATION_SEED_BASE + seed for seed in (2, 4, 9)]
# Two horizons of a few rollout steps keep the tests fast; the computation is the same.
SHORT = lookahead.Lookahead(hours=(1.0, 2.0), stride=4, step_s=1800.0)


def flown(option=SHORT, steps=6, seeds=SEEDS):
  """A slab with the option after `steps` steps (the GP holds measurements)."""
  env = BalloonVectorEnv(len(seeds), lookahead=option, wind='procedural')
  observation, _ = env.reset(seed=seeds)
  for step in range(steps):
    observation, *_ = env.step(np.full(len(seeds), (constants.UP, constants.DOWN)[step % 2]))
  return env, observation


def per_level(observation, features):
  """The lookahead block of a slab's observations as [B, 361, features]."""
  return observation[:, constants.OBSERVATION_SIZE:].reshape(len(observation), -1, features)


def extends_the_plain_block(observation, features, rest_padding):
  """Checks that `observation`'s block starts with the plain (SHORT) block's 4 features per
  level, unchanged, and that levels not computed read `rest_padding` after them; returns
  the block [B, 361, features] and which levels are padding [B, 361]."""
  _, plain = flown()
  block = per_level(observation, features)
  np.testing.assert_array_equal(block[..., :4], per_level(plain, 4))
  padding = np.all(block[..., :4] == np.array([1.0, 0.0, 1.0, 0.0], np.float32), axis=2)
  np.testing.assert_array_equal(
      block[padding][:, 4:],
      np.tile(np.array(rest_padding, np.float32), (padding.sum(), (features - 4) // 2)))
  return block, padding


def level_pressure(simulator, row, level_offset):
  """The pressure of the level `level_offset` levels from balloon `row`'s own."""
  return constants.COLUMN_MIN_PRESSURE + (
      features.balloon_level(simulator.pressure)[row] + level_offset
  ) * constants.COLUMN_PRESSURE_STEP


def rolled(simulator, option, row, level_offset, steps=None):
  """One level's rollout (x, y per step, float64 GP mean) over `steps` steps (all the
  option's by default), from the balloons' state now; returns the path and the final state."""
  pressure = level_pressure(simulator, row, level_offset)
  state = tuple(value[:, None].copy() for value in (
      simulator.x, simulator.y, simulator.pressure, simulator.time_elapsed_s))
  targets = np.full((simulator.num_balloons, 1), pressure)
  path = []
  for _ in range(option.checkpoints()[-1] if steps is None else steps):
    state = planner.rollout_step(simulator, state, targets, option.step_s,
                                 option.ascent_rate, option.descent_rate)
    path.append((state[0][row, 0], state[1][row, 0]))
  return np.array(path), state


def manual_features(simulator, option, row, level_offset):
  """One level's features by a plain rollout in the estimated wind, GP mean in float64."""
  path, _ = rolled(simulator, option, row, level_offset)
  distance_km = np.hypot(path[:, 0], path[:, 1]) / 1000.0
  values = []
  for checkpoint in option.checkpoints():
    reached = distance_km[checkpoint - 1]
    values += [reached / (reached + constants.DISTANCE_SQUASH_KM),
               reward.distance_reward(distance_km[:checkpoint]).sum() / checkpoint]
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
    block = per_level(observation, 4)
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
    env = BalloonEnv(lookahead={'hours': [1, 2], 'stride': 4}, wind='procedural')
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


def two_stage_reference(simulator, option, row, level_offset, computed_offsets):
  """The best two-stage plan's features of one level, from plain rollouts: the follow-up
  levels' own rollouts, shifted to where the first stage is at the switch."""
  switch = option.switch_step()
  first, _ = rolled(simulator, option, row, level_offset, steps=switch)
  spread = np.rint(np.linspace(0, 1, option.follow_levels) * (len(computed_offsets) - 1))
  plans = []
  for index in spread:
    follow_offset = computed_offsets[int(index)]
    path, _ = rolled(simulator, option, row, follow_offset)
    after = first[switch - 1] + path[switch:] - path[switch - 1]
    plans.append(np.concatenate([first, after]))
  values = []
  for checkpoint in option.checkpoints():
    if checkpoint <= switch:
      continue
    best = None
    for plan in plans:
      distance_km = np.hypot(plan[:checkpoint, 0], plan[:checkpoint, 1]) / 1000.0
      score = (reward.distance_reward(distance_km).sum(), -distance_km[-1])
      if best is None or score > best:
        best = score
    values += [-best[1] / (-best[1] + constants.DISTANCE_SQUASH_KM), best[0] / checkpoint]
  return np.array(values)


class TwoStageTest(unittest.TestCase):
  """`switch_hours`: the best plan that holds a level, then heads for a follow-up level."""

  OPTION = lookahead.Lookahead(hours=(1.0, 2.0), stride=4, step_s=1800.0, switch_hours=1.0,
                               follow_levels=3)

  def test_one_stage_features_come_first_and_are_unchanged(self):
    # Levels not computed read the padding in the two-stage features too.
    extends_the_plain_block(flown(self.OPTION)[1], 6, [1.0, 0.0])

  def test_levels_match_plans_built_from_plain_rollouts(self):
    env, observation = flown(self.OPTION)
    block = per_level(observation, 6)
    centre = constants.BALLOON_COLUMN_INDEX
    for row in range(len(SEEDS)):
      computed = np.flatnonzero(block[row, :, 0] < 1.0) - centre
      self.assertGreater(len(computed), 1)
      for offset in (computed[0], 0, computed[-1]):
        with self.subTest(row=row, offset=offset):
          # The block's GP mean is float32 (WindGP.mean_at), the reference's float64.
          np.testing.assert_allclose(
              block[row, centre + offset, 4:],
              two_stage_reference(env.simulator, self.OPTION, row, offset, computed), atol=1e-4)

  def test_the_configs_build_their_networks(self):
    # Two-stage features alone (the shipped model's setting); the `balloon_spread` config
    # adds two features per horizon and a value network that reads the column.
    two_stage = {'environment.kwargs': {'progress_reward': 0.2,
                                        'lookahead': {'switch_hours': 3.0}}}
    for name, overrides, spread, per_level_count in (('balloon', two_stage, 0, 10),
                                                     ('balloon_spread', {}, 8, 16)):
      with self.subTest(config=name):
        config = configs.resolve(name, overrides)
        option = lookahead.check_lookahead(config['environment']['kwargs']['lookahead'])
        self.assertEqual((option.switch_hours, option.spread_directions,
                          option.features_per_level), (3.0, spread, per_level_count))
        self.assertEqual(config['network']['column_value'], name == 'balloon_spread')
        column_network_config.ColumnNetworkConfig.check_run(config)
        space = environments.get(BALLOON_ENV_ID).observation_space({'lookahead': option})
        network = networks.make_network(
            'column', space, gymnasium.spaces.Discrete(3),
            **{key: value for key, value in config['network'].items() if key != 'kind'})
        self.assertEqual(network.level_input.kernel.shape[0], 5 + per_level_count)

  def test_size_and_settings(self):
    option = lookahead.Lookahead(switch_hours=3.0)
    self.assertEqual(option.two_stage_hours, (6.0, 12.0))
    self.assertEqual(option.features_per_level, 10)
    self.assertEqual(option.switch_step(), 6)
    self.assertEqual(lookahead.Lookahead().two_stage_hours, ())
    self.assertEqual(lookahead.check_lookahead({'switch_hours': 3}).switch_hours, 3.0)
    for value in ({'switch_hours': 12}, {'switch_hours': 0.7}, {'switch_hours': -1},
                  {'switch_hours': float('nan')}, {'switch_hours': True},
                  {'switch_hours': '3'}):
      with self.subTest(value=value), self.assertRaisesRegex(ValueError, 'switch_hours'):
        lookahead.check_lookahead(value)
    for value in (0, 2.5, True):
      with self.subTest(follow_levels=value), self.assertRaisesRegex(ValueError, 'follow_levels'):
        lookahead.check_lookahead({'switch_hours': 3, 'follow_levels': value})


def spread_reference(simulator, option, observation, row, level_offset):
  """One level's spread features from a plain rollout: its path displaced by constant wind
  errors of sqrt(2) sigma (sigma from the column's uncertainty) in each direction."""
  path, _ = rolled(simulator, option, row, level_offset)
  index = constants.BALLOON_COLUMN_INDEX + level_offset
  uncertainty = observation[row, constants.NUM_AMBIENT_FEATURES + 3 * index]
  length = np.sqrt(2.0 * uncertainty * constants.GP_PRIOR_VARIANCE)
  elapsed = option.step_s * np.arange(1, len(path) + 1)
  terms = []
  for angle in 2.0 * np.pi * np.arange(option.spread_directions) / option.spread_directions:
    x = path[:, 0] + length * np.cos(angle) * elapsed
    y = path[:, 1] + length * np.sin(angle) * elapsed
    terms.append(reward.distance_reward(np.hypot(x, y) / 1000.0))
  terms = np.array(terms)  # [directions, steps]
  values = []
  for checkpoint in option.checkpoints():
    means = terms[:, :checkpoint].mean(axis=1)
    values += [means.mean(), means.max()]
  return np.array(values)


class SpreadTest(unittest.TestCase):
  """`spread_directions`: each level's paths displaced by the wind estimate's uncertainty."""

  OPTION = dataclasses.replace(SHORT, spread_directions=4)

  def test_spread_features_come_last_and_the_rest_is_unchanged(self):
    block, padding = extends_the_plain_block(flown(self.OPTION)[1], 8, [0.0, 0.0])
    computed = block[~padding]
    # The best direction does at least as well as the average over directions.
    self.assertTrue(np.all(computed[:, [5, 7]] >= computed[:, [4, 6]] - 1e-6))

  def test_levels_match_displaced_plain_rollouts(self):
    env, observation = flown(self.OPTION)
    block = per_level(observation, 8)
    centre = constants.BALLOON_COLUMN_INDEX
    for row in range(len(SEEDS)):
      computed = np.flatnonzero(block[row, :, 0] < 1.0) - centre
      for offset in (computed[0], 0, computed[-1]):
        with self.subTest(row=row, offset=offset):
          np.testing.assert_allclose(
              block[row, centre + offset, 4:],
              spread_reference(env.simulator, self.OPTION, observation, row, offset),
              atol=1e-4)

  def test_a_measured_levels_spread_features_are_its_plain_ones(self):
    # A level the balloon has just measured is known: its displaced paths barely move.
    env, observation = flown(self.OPTION)
    block = per_level(observation, 8)
    own = block[:, constants.BALLOON_COLUMN_INDEX]
    uncertainty = observation[:, constants.NUM_AMBIENT_FEATURES
                              + 3 * constants.BALLOON_COLUMN_INDEX]
    self.assertTrue(np.all(uncertainty < 0.1))
    np.testing.assert_allclose(own[:, 4:], own[:, [1, 1, 3, 3]], atol=0.05)

  def test_settings(self):
    option = lookahead.Lookahead(switch_hours=3.0, spread_directions=8)
    self.assertEqual(option.spread_hours, (3.0, 6.0, 12.0))
    self.assertEqual(option.features_per_level, 16)
    self.assertEqual(lookahead.Lookahead().spread_hours, ())
    np.testing.assert_array_equal(option.padding(), [1, 0] * 5 + [0, 0] * 3)
    for value in (-1, 2.5, True, '8'):
      with self.subTest(spread_directions=value), self.assertRaisesRegex(
          ValueError, 'spread_directions must be 0 \\(off\\) or a positive integer'):
        lookahead.check_lookahead({'spread_directions': value})


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
    suite = suites.Suite('short', range(2), episode_length=3, wind='procedural')
    policy = ShapeRecorder()
    results = runner.fly('recorder', suite, suite.seeds, workers=0, policy=policy,
                         env_id=BALLOON_ENV_ID, observation_kwargs=option)
    self.assertEqual(len(results), 2)
    self.assertEqual(policy.shapes, {(size,)})


if __name__ == '__main__':
  unittest.main()
