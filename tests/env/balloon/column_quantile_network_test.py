"""Tests of agents/env/balloon/column_quantile_network.py (QR-DQN's network kind `column`)."""

import unittest

import gymnasium
import numpy as np
import tensorflow as tf

from agents.algorithms.qrdqn import qrdqn
from agents.config_fields import ConfigError
from agents.configs import resolution
from agents.env.balloon import constants
from agents.env.balloon.column_quantile_network import ColumnQuantileNetwork

SIZE = constants.OBSERVATION_SIZE
AMBIENT = constants.NUM_AMBIENT_FEATURES
CENTRE = constants.BALLOON_COLUMN_INDEX


def _network(stride=4):
  network = ColumnQuantileNetwork(SIZE, 3, 5, hidden_layers=(16,), column_layers=(8, 8),
                                  column_stride=stride, seed=1)
  # No per-action term: each action's quantiles are then exactly a level's.
  for variable in network.action_term.trainable_variables:
    variable.assign(tf.zeros_like(variable))
  return network


def _observation(seed, unreachable_above=False):
  observ = np.random.default_rng(seed).uniform(0.0, 0.9, SIZE).astype(np.float32)
  if unreachable_above:
    column = observ[AMBIENT:].reshape(-1, 3)
    column[:CENTRE, 2] = 1.0  # speed feature 1: padding or unreachable
  return observ


def _level_quantiles(network, observ):
  """Every read level's quantiles [levels, N], computed by hand from the layers."""
  context = network.context(observ[None, :AMBIENT])
  winds = observ[AMBIENT:].reshape(-1, 3)[::network._stride]
  offsets = network._offsets.numpy()
  inputs = np.concatenate([winds, offsets], -1)
  hidden = tf.nn.relu(network.level_input(inputs) + network.context_input(context))
  return network.column(hidden).numpy(), winds[:, 2] < 1.0


class ColumnQuantileNetworkTest(unittest.TestCase):

  def test_actions_take_the_quantiles_of_their_levels(self):
    network = _network()
    observ = _observation(0)
    quantiles = network(observ[None]).numpy()[0]
    levels, valid = _level_quantiles(network, observ)
    centre = CENTRE // 4
    means = np.where(valid, levels.mean(-1), -np.inf)
    np.testing.assert_allclose(quantiles[1], levels[centre], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(quantiles[2], levels[np.argmax(means[:centre])], rtol=1e-5,
                               atol=1e-6)
    below = centre + 1 + np.argmax(means[centre + 1:])
    np.testing.assert_allclose(quantiles[0], levels[below], rtol=1e-5, atol=1e-6)

  def test_a_move_without_a_valid_level_is_a_stay(self):
    network = _network()
    quantiles = network(_observation(1, unreachable_above=True)[None]).numpy()[0]
    np.testing.assert_allclose(quantiles[2], quantiles[1], rtol=1e-6)

  def test_rows_are_independent_and_shapes(self):
    network = _network(stride=2)
    batch = np.stack([_observation(2), _observation(3)])
    both = network(batch).numpy()
    self.assertEqual(both.shape, (2, 3, 5))
    np.testing.assert_allclose(both[1], network(batch[1:]).numpy()[0], rtol=1e-5, atol=1e-6)

  def test_refuses_other_observations_and_strides(self):
    with self.assertRaisesRegex(ValueError, 'network.kind'):
      ColumnQuantileNetwork(10, 3, 5)
    with self.assertRaisesRegex(ValueError, 'column_stride'):
      ColumnQuantileNetwork(SIZE, 3, 5, column_stride=7)


class ColumnKindConfigTest(unittest.TestCase):

  def test_balloon_qrdqn_with_the_column_kind_builds(self):
    config = resolution.resolve('balloon_qrdqn', {
        'network.kind': 'column', 'network.hidden_layers': [16],
        'algorithm.replay_capacity': 2_048})
    self.assertEqual(config['network']['column_stride'], 4)
    algorithm = qrdqn.QRDQN.from_config(
        config, gymnasium.spaces.Box(-np.inf, np.inf, (SIZE,), np.float32),
        gymnasium.spaces.Discrete(3))
    self.assertIsInstance(algorithm.online_network, ColumnQuantileNetwork)
    self.assertEqual(tuple(algorithm.quantiles(np.zeros((2, SIZE), np.float32)).shape),
                     (2, 3, 51))

  def test_a_stride_that_skips_the_balloon_is_refused(self):
    with self.assertRaisesRegex(ConfigError, 'network.column_stride'):
      resolution.resolve('balloon_qrdqn', {'network.kind': 'column',
                                           'network.column_stride': 7})


if __name__ == '__main__':
  unittest.main()
