"""Tests of agents/env/balloon/column_network.py."""

import types
import unittest

import gymnasium
import numpy as np
import tensorflow as tf

from agents import configs
from agents.algorithms.ppo import config as ppo_config
from agents.algorithms.ppo import networks
from agents.configs import sections
from agents.env.balloon import column_network, column_network_config, constants

OBSERVATION_SPACE = gymnasium.spaces.Box(0.0, 1.0, (constants.OBSERVATION_SIZE,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(3)
DOWN, STAY, UP = 0, 1, 2
CENTRE = constants.BALLOON_COLUMN_INDEX


def observations(batch, first_valid=100, last_valid=300, seed=0):
  """Balloon-like observations: padding (0, 1, 1) outside [first_valid, last_valid]."""
  rng = np.random.default_rng(seed)
  observ = np.zeros((batch, constants.OBSERVATION_SIZE), np.float32)
  observ[:, :constants.NUM_AMBIENT_FEATURES] = rng.uniform(size=(batch, 16))
  column = np.tile(np.array([0.0, 1.0, 1.0], np.float32), (batch, constants.NUM_COLUMN_LEVELS, 1))
  column[:, first_valid:last_valid + 1] = rng.uniform(0.0, 0.9, (batch, last_valid + 1
                                                                  - first_valid, 3))
  observ[:, constants.NUM_AMBIENT_FEATURES:] = column.reshape(batch, -1)
  return observ


def set_level(observ, level, triple):
  start = constants.NUM_AMBIENT_FEATURES + 3 * level
  observ = observ.copy()
  observ[:, start:start + 3] = triple
  return observ


def make(**kwargs):
  kwargs = {'seed': 1, 'policy_layers': [16], 'column_layers': [8, 8], 'value_layers': [16],
            **kwargs}
  return networks.make_network('column', OBSERVATION_SPACE, ACTIONS, **kwargs)


def logits(network, observ):
  params, _ = network.policy(tf.constant(observ), network.initial_state(len(observ)))
  return params.numpy()


class ColumnPolicyTest(unittest.TestCase):

  def test_starts_near_uniform_and_sequences_match_steps(self):
    network = make()
    observ = observations(6)
    params = logits(network, observ)
    self.assertEqual(params.shape, (6, 3))
    self.assertLess(np.abs(params).max(), 0.1)
    sequence = network.policy_sequence(observ.reshape(2, 3, -1), None, None).numpy()
    np.testing.assert_allclose(sequence.reshape(6, 3), params, rtol=1e-5, atol=1e-6)
    self.assertEqual(network.value(observ.reshape(2, 3, -1)).shape, (2, 3))

  def test_each_move_reads_only_the_levels_it_reaches(self):
    network = make()
    observ = observations(4)
    before = logits(network, observ)
    above = logits(network, set_level(observ, CENTRE - 7, [0.5, 0.1, 0.3]))
    below = logits(network, set_level(observ, CENTRE + 7, [0.5, 0.1, 0.3]))
    here = logits(network, set_level(observ, CENTRE, [0.5, 0.1, 0.3]))
    changed = lambda after: np.abs(after - before).max(axis=0) > 1e-7  # noqa: E731
    np.testing.assert_array_equal(changed(above), [False, False, True])
    np.testing.assert_array_equal(changed(below), [True, False, False])
    np.testing.assert_array_equal(changed(here), [False, True, False])

  def test_padding_and_unreachable_levels_are_ignored(self):
    network = make()
    observ = observations(3, first_valid=150, last_valid=300)
    # Level 120 is padding; a padding triple with other uncertainty stays padding.
    moved = set_level(observ, 120, [0.7, 1.0, 1.0])
    np.testing.assert_allclose(logits(network, moved), logits(network, observ), atol=1e-7)

  def test_a_move_with_no_valid_level_gets_the_floor_logit(self):
    network = make()
    observ = observations(2, first_valid=CENTRE, last_valid=300)
    params = logits(network, observ)
    bias = network.action_bias(network.context(observ[:, :16])).numpy()
    np.testing.assert_allclose(params[:, UP] - bias[:, UP], column_network._NO_LEVEL_LOGIT,
                               atol=1e-5)
    self.assertTrue(np.all(params[:, DOWN] > -1.0))

  def test_a_level_is_judged_alike_wherever_it_sits(self):
    # The level MLP is shared: the same triple at the same offset gives the same logit,
    # whatever the other features of other levels are.
    network = make()
    first, second = observations(1, seed=1), observations(1, seed=2)
    second[:, :16] = first[:, :16]
    for observ in (first, second):
      observ[:, 16 + 3 * (CENTRE + 1):] = np.tile([0.0, 1.0, 1.0], CENTRE)
    first = set_level(first, CENTRE + 5, [0.2, 0.3, 0.4])
    second = set_level(second, CENTRE + 5, [0.2, 0.3, 0.4])
    np.testing.assert_allclose(logits(network, first)[:, DOWN],
                               logits(network, second)[:, DOWN], rtol=1e-5)

  def test_stride_reads_every_kth_level_and_keeps_the_balloons_own(self):
    network = make(column_stride=4)
    observ = observations(2)
    before = logits(network, observ)
    skipped = logits(network, set_level(observ, CENTRE - 6, [0.5, 0.1, 0.3]))
    read = logits(network, set_level(observ, CENTRE - 8, [0.5, 0.1, 0.3]))
    np.testing.assert_allclose(skipped, before, atol=1e-7)
    self.assertGreater(np.abs(read - before)[:, UP].max(), 1e-7)
    here = logits(network, set_level(observ, CENTRE, [0.5, 0.1, 0.3]))
    self.assertGreater(np.abs(here - before)[:, STAY].max(), 1e-7)


  def test_the_column_value_reads_valid_levels_and_the_ambient_features(self):
    network = make(column_value=True, column_stride=4)
    observ = observations(4, first_valid=100, last_valid=300)
    value = lambda o: network.value(tf.constant(o)).numpy()  # noqa: E731
    before = value(observ)
    self.assertEqual(before.shape, (4,))
    self.assertTrue(np.all(np.abs(value(set_level(observ, CENTRE + 8, [0.5, 0.1, 0.3]))
                                  - before) > 1e-7))
    moved = observ.copy()
    moved[:, 3] += 0.5
    self.assertTrue(np.all(np.abs(value(moved) - before) > 1e-7))
    np.testing.assert_allclose(value(set_level(observ, 96, [0.7, 1.0, 1.0])), before, atol=1e-7)
    # Not the flat MLP: the value has no weight per index of the observation.
    self.assertNotEqual(network.value_mlp.layers[0].kernel.shape[0], constants.OBSERVATION_SIZE)
    np.testing.assert_allclose(network.value(tf.constant(observ.reshape(2, 2, -1))).numpy(),
                               before.reshape(2, 2), rtol=1e-5, atol=1e-6)

  def test_the_value_stride_reads_the_ambient_features_and_every_kth_level(self):
    network = make(column_stride=4, value_stride=4)
    self.assertEqual(network.value_mlp.layers[0].kernel.shape[0], 16 + 91 * 3)
    observ = observations(3)
    value = lambda o: network.value(tf.constant(o)).numpy()  # noqa: E731
    before = value(observ)
    np.testing.assert_array_equal(value(set_level(observ, CENTRE - 6, [0.5, 0.1, 0.3])), before)
    self.assertTrue(np.all(value(set_level(observ, CENTRE - 8, [0.5, 0.1, 0.3])) != before))
    moved = observ.copy()
    moved[:, 3] += 0.5
    self.assertTrue(np.all(value(moved) != before))
    np.testing.assert_allclose(network.value(tf.constant(observ[:2].reshape(1, 2, -1))).numpy(),
                               before[None, :2], rtol=1e-5, atol=1e-6)
    # A value stride that skips the balloon's own level is refused before anything is built.
    config = types.SimpleNamespace(
        network=ppo_config.NetworkConfig(kind='column'),
        network_options=column_network_config.ColumnNetworkConfig(value_stride=7),
        environment=sections.EnvironmentConfig(kwargs={}))
    with self.assertRaisesRegex(ValueError, "'network.value_stride' = 7 must divide 180"):
      column_network_config.ColumnNetworkConfig.check_run(config)

  def test_lookahead_block_features_join_each_read_level(self):
    features = 4
    space = gymnasium.spaces.Box(
        0.0, 1.0, (constants.OBSERVATION_SIZE + features * constants.NUM_COLUMN_LEVELS,),
        np.float32)
    network = networks.make_network('column', space, ACTIONS, seed=1, policy_layers=[16],
                                    column_layers=[8], value_layers=[16], column_stride=4)
    self.assertEqual(network.level_input.kernel.shape[0], 5 + features)
    observ = np.concatenate([observations(2), np.random.default_rng(3).uniform(
        size=(2, features * constants.NUM_COLUMN_LEVELS)).astype(np.float32)], 1)
    before = logits(network, observ)

    def with_block(level, values):
      changed = observ.copy()
      start = constants.OBSERVATION_SIZE + features * level
      changed[:, start:start + features] = values
      return changed

    # A read level's block features move the move that reaches it; an unread one's do not.
    moved = logits(network, with_block(CENTRE - 8, [0.0, 1.0, 0.0, 1.0])) - before
    self.assertGreater(np.abs(moved[:, UP]).min(), 1e-6)
    np.testing.assert_allclose(moved[:, [DOWN, STAY]], 0.0, atol=1e-6)
    np.testing.assert_allclose(logits(network, with_block(CENTRE - 9, [0.0, 1.0, 0.0, 1.0])),
                               before, atol=1e-7)

  def test_the_lookahead_stride_must_divide_the_column_stride(self):
    def run_config(lookahead):  # the typed sections check_run reads
      return types.SimpleNamespace(
          network=ppo_config.NetworkConfig(kind='column'),
          network_options=column_network_config.ColumnNetworkConfig(column_stride=4),
          environment=sections.EnvironmentConfig(kwargs={'lookahead': lookahead}))
    check_run = column_network_config.ColumnNetworkConfig.check_run
    with self.assertRaisesRegex(ValueError, "'network.column_stride' = 4 must be a multiple "
                                "of 'environment.kwargs.lookahead.stride' = 6"):
      check_run(run_config({'stride': 6}))
    with self.assertRaisesRegex(ValueError, "'environment.kwargs.lookahead'.*hours"):
      check_run(run_config({'hours': [-1]}))
    check_run(run_config({'stride': 2}))  # 4 reads every other one

  def test_keys_the_column_network_does_not_read_are_refused(self):
    for key, value in (('initializer', 'glorot'), ('init_output_factor', 0.1)):
      with self.subTest(key=key), self.assertRaisesRegex(
          configs.ConfigError, f"'network.{key}' = .* is not read by the column network"):
        configs.resolve('balloon', {f'network.{key}': value})

  def test_bad_spaces_and_stride_name_the_key(self):
    with self.assertRaisesRegex(ValueError, '1099 floats.*network.kind'):
      networks.make_network('column', gymnasium.spaces.Box(
          0, 1, (constants.OBSERVATION_SIZE + 5,)), ACTIONS)
    with self.assertRaisesRegex(ValueError, '1099 floats.*network.kind'):
      networks.make_network('column', gymnasium.spaces.Box(0, 1, (4,)), ACTIONS)
    with self.assertRaisesRegex(ValueError, 'Discrete\\(3\\).*network.kind'):
      networks.make_network('column', OBSERVATION_SPACE, gymnasium.spaces.Discrete(2))
    with self.assertRaisesRegex(ValueError, 'network.column_stride'):
      make(column_stride=7)
    with self.assertRaisesRegex(ValueError, 'network.column_layers'):
      make(column_layers=[])


if __name__ == '__main__':
  unittest.main()
