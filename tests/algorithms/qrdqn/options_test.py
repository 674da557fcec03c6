"""Tests of QR-DQN's options: `reward_scale`, `network.kind` and `network.initial_weights`."""

import unittest
from unittest import mock

import gymnasium
import numpy as np

from agents.algorithms.qrdqn import config as config_lib
from agents.algorithms.qrdqn import qrdqn
from agents.config_fields import ConfigError
from agents.configs import resolution, sections
from tests.algorithms.qrdqn import qrdqn_test

OBSERV = gymnasium.spaces.Box(0.0, 1.0, (4,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(2)
HIDDEN = (8,)


def _layers(scale=1.0):
  """Layer weights of an mlp of `HIDDEN` on `OBSERV` with 2 actions x 3 quantiles."""
  sizes = [4, *HIDDEN, 6]
  return [(np.full((fan_in, fan_out), scale * (index + 1), np.float32),
           np.arange(fan_out, dtype=np.float32))
          for index, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:]))]


def good_weights():
  return _layers(0.1)


def missing_weights():
  raise ValueError('the weights are not here; fetch them with `fetch-command`.')


def _algorithm(initial_weights='', kind='mlp'):
  return qrdqn.QRDQN(2, OBSERV, ACTIONS, config_lib.QRDQNConfig(num_quantiles=3,
                                                                 replay_capacity=64),
                     config_lib.NetworkConfig(kind=kind, hidden_layers=HIDDEN,
                                              initial_weights=initial_weights))


class RewardScaleTest(unittest.TestCase):

  def test_scaling_the_rewards_is_scaling_the_option(self):
    # The same transitions, rewards halved in one memory, scale 0.5 in the other: the
    # same gradient step.
    runs = []
    for scale in (0.5, 1.0):
      fused_step, algorithm = qrdqn_test._chain(learning_starts=10**6, reward_scale=scale)
      fused_step(reset=True, steps=20)
      runs.append(algorithm)
    scaled, halved = runs
    self.assertGreater(float(np.abs(scaled.memory.reward.numpy()).sum()), 0.0)
    halved.memory.reward.assign(0.5 * scaled.memory.reward)
    losses = [float(algorithm.train_step()['loss']) for algorithm in runs]
    self.assertAlmostEqual(losses[0], losses[1], places=6)
    for a, b in zip(scaled.online_network.trainable_variables,
                    halved.online_network.trainable_variables):
      np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)

  def test_must_be_positive(self):
    with self.assertRaisesRegex(ConfigError, 'reward_scale'):
      resolution.resolve('cartpole_qrdqn', {'algorithm.reward_scale': 0.0})


class ReplayRatioTest(unittest.TestCase):
  """`update_every` batch steps between updates of `gradient_steps` steps, once
  `learning_starts` environment steps are recorded."""

  def _gradient_steps(self, **overrides):
    fused_step, algorithm = qrdqn_test._chain(num_envs=4, **overrides)
    fused_step(reset=True, steps=12)
    self.assertEqual(int(algorithm.batch_steps.numpy()), 12)
    return int(algorithm.num_updates.numpy())

  def test_updates_every_k_batch_steps(self):
    # Batch steps 3, 6, 9 and 12 update, 2 gradient steps each.
    self.assertEqual(self._gradient_steps(learning_starts=0, update_every=3,
                                          gradient_steps=2), 8)

  def test_waits_for_learning_starts(self):
    # 4 environments: 20 steps are recorded at batch step 5; 6, 9 and 12 update.
    self.assertEqual(self._gradient_steps(learning_starts=20, update_every=3,
                                          gradient_steps=2), 6)


class NetworkKindTest(unittest.TestCase):

  def test_mlp_is_the_default_kind(self):
    self.assertEqual(sections.defaults_of('qrdqn')['network']['kind'], 'mlp')
    self.assertIsInstance(_algorithm().online_network, qrdqn.QuantileNetwork)

  def test_an_unknown_kind_names_the_key(self):
    with self.assertRaisesRegex(ConfigError, 'network.kind'):
      resolution.resolve('cartpole_qrdqn', {'network.kind': 'nope'})


class InitialWeightsTest(unittest.TestCase):

  def test_both_networks_start_from_the_weights(self):
    algorithm = _algorithm(f'{__name__}:good_weights')
    expected = good_weights()
    for network in (algorithm.online_network, algorithm.target_network):
      layers = [*network.body.layers, network.body.head]
      for layer, (kernel, bias) in zip(layers, expected):
        np.testing.assert_array_equal(layer.kernel.numpy(), kernel)
        np.testing.assert_array_equal(layer.bias.numpy(), bias)

  def test_a_failing_source_is_one_line_naming_the_key(self):
    # It fails before any network is built (Perciatelli44's would be 7 x 600 units).
    with mock.patch.object(qrdqn, 'build_network', wraps=qrdqn.build_network) as build, \
        self.assertRaises(ConfigError) as caught:
      _algorithm(f'{__name__}:missing_weights')
    build.assert_not_called()
    message = str(caught.exception)
    self.assertNotIn('\n', message)
    self.assertIn("'network.initial_weights'", message)
    self.assertIn('fetch-command', message)

  def test_other_shapes_are_refused(self):
    with self.assertRaisesRegex(ConfigError, 'layer 0 has shape'):
      qrdqn.QRDQN(2, OBSERV, ACTIONS, config_lib.QRDQNConfig(num_quantiles=3,
                                                             replay_capacity=64),
                  config_lib.NetworkConfig(hidden_layers=(9,),
                                           initial_weights=f'{__name__}:good_weights'))

  def test_other_layer_counts_are_refused(self):
    with self.assertRaisesRegex(ConfigError, 'gives 2 layers; the network has 3'):
      qrdqn.QRDQN(2, OBSERV, ACTIONS, config_lib.QRDQNConfig(num_quantiles=3,
                                                             replay_capacity=64),
                  config_lib.NetworkConfig(hidden_layers=(8, 8),
                                           initial_weights=f'{__name__}:good_weights'))


if __name__ == '__main__':
  unittest.main()
