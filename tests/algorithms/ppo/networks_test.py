"""Tests of agents/algorithms/ppo/networks.py."""

import dataclasses
import unittest

import gymnasium
import numpy as np
import tensorflow as tf

from agents import config_fields, configs, plugins
from agents.algorithms.ppo import distributions, networks

OBSERVATION_SPACE = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)


class NetworksTest(unittest.TestCase):

  def test_feed_forward_gaussian_shapes_and_initial_std(self):
    network = networks.make_network('feed_forward', OBSERVATION_SPACE,
                                    gymnasium.spaces.Box(-1, 1, (2,)), init_std=0.5)
    params, state = network.policy(tf.zeros([5, 4]), network.initial_state(5))
    distribution = network.distribution(params)
    self.assertIsInstance(distribution, distributions.DiagonalGaussian)
    self.assertEqual(params.shape, (5, 4))
    self.assertEqual(state.shape, (5, 1))
    np.testing.assert_allclose(np.exp(distribution.log_std.numpy()), 0.5, rtol=1e-6)
    self.assertEqual(network.value(tf.zeros([2, 3, 4])).shape, (2, 3))

  def test_batchppo_style_gaussian(self):
    # BatchPPO's feed_forward_gaussian: tanh mean, softplus std, Glorot hidden layers and a
    # variance-scaling output layer; today's network is the default and reads its keys.
    action_space = gymnasium.spaces.Box(-1, 1, (2,))
    style = dict(mean_activation='tanh', std_transform='softplus', initializer='glorot',
                 init_output_factor=0.1)
    network = networks.make_network('feed_forward', OBSERVATION_SPACE, action_space,
                                    init_std=0.35, policy_layers=[8], **style)
    params, _ = network.policy(tf.fill([3, 4], 100.0), network.initial_state(3))
    distribution = network.distribution(params)
    self.assertLessEqual(np.abs(distribution.mean.numpy()).max(), 1.0)
    np.testing.assert_allclose(np.exp(distribution.log_std.numpy()), 0.35, rtol=1e-5)
    self.assertEqual({v.name.split(':')[0] for v in network.trainable_variables
                      if 'std' in v.name}, {'before_softplus_std'})
    output = network.policy_mlp.head.kernel.numpy()
    self.assertLessEqual(np.abs(output).max(), 2 * np.sqrt(1.3 * 0.1 / 8) + 1e-6)
    hidden = network.value_mlp.layers[0].kernel.numpy()
    self.assertLessEqual(np.abs(hidden).max(), np.sqrt(6 / (4 + 8)) + 1e-6)
    # The default keeps today's initial weights, draw for draw.
    today = networks.make_network('feed_forward', OBSERVATION_SPACE, action_space, seed=1)
    legacy = networks.make_network('feed_forward', OBSERVATION_SPACE, action_space, seed=1,
                                   mean_activation='none', std_transform='exp',
                                   initializer='orthogonal', init_output_factor=None)
    for a, b in zip(today.trainable_variables, legacy.trainable_variables):
      np.testing.assert_array_equal(a.numpy(), b.numpy())
    with self.assertRaisesRegex(ValueError, 'network.mean_activation'):
      networks.make_network('feed_forward', OBSERVATION_SPACE, action_space,
                            mean_activation='sigmoid')

  def test_feed_forward_categorical(self):
    network = networks.make_network('feed_forward', OBSERVATION_SPACE,
                                    gymnasium.spaces.Discrete(3))
    params, _ = network.policy(tf.ones([2, 4]), network.initial_state(2))
    self.assertEqual(params.shape, (2, 3))
    self.assertIsInstance(network.distribution(params), distributions.Categorical)
    self.assertEqual(network.action_dtype, tf.int32)

  def test_recurrent_sequence_matches_steps_with_resets(self):
    network = networks.make_network('recurrent', OBSERVATION_SPACE,
                                    gymnasium.spaces.Box(-1, 1, (1,)), gru_units=6,
                                    policy_layers=[8], seed=3)
    rng = np.random.default_rng(0)
    observ = rng.normal(size=(2, 5, 4)).astype(np.float32)
    reset = np.zeros((2, 5), bool)
    reset[1, 2] = True
    initial = rng.normal(size=(2, 6)).astype(np.float32)
    sequence = network.policy_sequence(observ, initial, reset).numpy()
    state = tf.constant(initial)
    for t in range(5):
      state = tf.where(reset[:, t:t + 1], tf.zeros_like(state), state)
      params, state = network.policy(observ[:, t], state)
      np.testing.assert_allclose(sequence[:, t], params.numpy(), rtol=1e-5, atol=1e-6)

  def test_every_registered_kind_names_a_class_and_its_declared_keys(self):
    self.assertTrue({'feed_forward', 'recurrent', 'column'} <= set(plugins.NETWORKS.names()))
    for kind in plugins.NETWORKS.names():
      entry = plugins.NETWORKS.get(kind)
      self.assertTrue(issubclass(plugins.import_path(entry.network),
                                 networks.PolicyValueNetwork), kind)
      if entry.config is not None:
        self.assertTrue(dataclasses.is_dataclass(plugins.import_path(entry.config)), kind)

  def test_a_kind_registered_at_run_time_is_built_and_configured(self):
    plugins.NETWORKS.register('narrow', plugins.NetworkEntry(
        f'{__name__}:NarrowPolicy', f'{__name__}:NarrowConfig'))
    self.addCleanup(plugins.NETWORKS.unregister, 'narrow')
    network = networks.make_network('narrow', OBSERVATION_SPACE,
                                    gymnasium.spaces.Discrete(2), width=3)
    self.assertIsInstance(network, NarrowPolicy)
    self.assertEqual(network.width, 3)
    resolved = configs.resolve('cartpole', {'network.kind': 'narrow', 'network.width': 5})
    self.assertEqual(resolved['network']['width'], 5)
    self.assertNotIn('width', configs.resolve('cartpole')['network'])
    with self.assertRaisesRegex(configs.ConfigError, "'network.width'"):
      configs.resolve('cartpole', {'network.kind': 'narrow', 'network.width': 0})

  def test_unknown_network_and_space_name_the_culprit(self):
    with self.assertRaisesRegex(ValueError, "'network.kind' must be a registered network "
                                            "kind, .*; got 'transformer'"):
      networks.make_network('transformer', OBSERVATION_SPACE, gymnasium.spaces.Discrete(2))
    with self.assertRaisesRegex(ValueError, 'Box and Discrete'):
      networks.make_network('feed_forward', OBSERVATION_SPACE,
                            gymnasium.spaces.MultiBinary(3))
    with self.assertRaisesRegex(ValueError, 'config key "activation"'):
      networks.make_network('feed_forward', OBSERVATION_SPACE, gymnasium.spaces.Discrete(2),
                            activation='swish')

  def test_bfloat16_products_stay_close_and_train_float32_weights(self):
    kwargs = dict(observation_space=gymnasium.spaces.Box(-1.0, 1.0, (64,), np.float32),
                  action_space=gymnasium.spaces.Discrete(3), policy_layers=[32, 32],
                  value_layers=[32, 32], seed=2)
    exact = networks.make_network('feed_forward', **kwargs)
    fast = networks.make_network('feed_forward', matmul_dtype='bfloat16', **kwargs)
    observ = tf.constant(np.random.default_rng(0).normal(size=(16, 64)), tf.float32)
    state = exact.initial_state(16)
    # bfloat16 keeps 8 bits of mantissa: products agree to about a percent.
    np.testing.assert_allclose(fast.value(observ).numpy(), exact.value(observ).numpy(),
                               rtol=0.05, atol=0.05)
    np.testing.assert_allclose(fast.policy(observ, state)[0].numpy(),
                               exact.policy(observ, state)[0].numpy(), atol=1e-3)
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(fast.value(observ))
    gradients = tape.gradient(loss, fast.trainable_variables)
    self.assertTrue(all(variable.dtype == tf.float32 for variable in fast.trainable_variables))
    self.assertTrue(all(gradient.dtype == tf.float32 for gradient in gradients
                        if gradient is not None))
    with self.assertRaisesRegex(ValueError, 'network.matmul_dtype'):
      networks.make_network('feed_forward', matmul_dtype='float16', **kwargs)

  def test_same_seed_same_weights(self):
    first = networks.make_network('feed_forward', OBSERVATION_SPACE,
                                  gymnasium.spaces.Discrete(2), seed=4)
    second = networks.make_network('feed_forward', OBSERVATION_SPACE,
                                   gymnasium.spaces.Discrete(2), seed=4)
    for a, b in zip(first.trainable_variables, second.trainable_variables):
      np.testing.assert_array_equal(a.numpy(), b.numpy())



@dataclasses.dataclass(frozen=True)
class NarrowConfig:
  """The one key of the test's network kind."""
  width: int = config_fields.param(4, 'hidden width', low=1)


class NarrowPolicy(networks.FeedForwardPolicy):
  """A feed-forward policy of one hidden layer of `width` units."""

  def __init__(self, observ_size, action_space, width=4, **kwargs):
    kwargs.update(policy_layers=(width,), value_layers=(width,))
    super().__init__(observ_size, action_space, **kwargs)
    self.width = width


if __name__ == '__main__':
  unittest.main()
