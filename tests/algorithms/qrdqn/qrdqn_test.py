"""Tests of agents/algorithms/qrdqn/qrdqn.py: loss, schedule, target updates, learning, resume,
export."""

import os
import tempfile
import unittest

import gymnasium
import numpy as np
import tensorflow as tf

from agents.algorithms.qrdqn import qrdqn
from agents.config_fields import ConfigError
from agents.tools import batch_env as batch_env_lib
from agents.tools import in_graph_batch_env, simulate

CHAIN_LENGTH = 4


class ChainEnv(gymnasium.Env):
  """A deterministic chain: RIGHT (1) moves on, STAY (0) stays; reward 1 on reaching the end.

  The observation is the one-hot position; the episode terminates at the end and is
  truncated after 8 steps, so an agent that stays must bootstrap on truncation.
  """

  def __init__(self):
    self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (CHAIN_LENGTH,), np.float32)
    self.action_space = gymnasium.spaces.Discrete(2)
    self._position = self._steps = 0

  def _observ(self):
    return np.eye(CHAIN_LENGTH, dtype=np.float32)[self._position]

  def reset(self, *, seed=None, options=None):
    super().reset(seed=seed)
    self._position = self._steps = 0
    return self._observ(), {}

  def step(self, action):
    self._steps += 1
    self._position += int(action)
    terminated = self._position == CHAIN_LENGTH - 1
    return self._observ(), float(terminated), terminated, self._steps >= 8, {}


CHAIN_CONFIG = dict(num_quantiles=8, discount=0.9, n_step=2, learning_rate=1e-2,
                    batch_size=32, replay_capacity=2_000, learning_starts=64, update_every=1,
                    gradient_steps=1, target_update_period=20, epsilon_decay_steps=800,
                    epsilon_end=0.1)


def _chain(num_envs=4, **overrides):
  """(fused step, algorithm) on a batch of chain environments, in this process."""
  batch = batch_env_lib.BatchEnv.from_constructors(ChainEnv, num_envs, processes=False)
  env = in_graph_batch_env.InGraphBatchEnv(batch, seed=0)
  algorithm = qrdqn.QRDQN(num_envs, batch.observation_space, batch.action_space,
                          qrdqn.config_lib.QRDQNConfig(**dict(CHAIN_CONFIG, **overrides)),
                          qrdqn.config_lib.NetworkConfig(hidden_layers=(32,)), seed=3)
  return simulate.FusedStep(env, algorithm), algorithm


def _values(module):
  return {variable.name + str(index): variable.numpy()
          for index, variable in enumerate(module.variables)}


class QuantileHuberLossTest(unittest.TestCase):

  def test_matches_a_hand_computation(self):
    # Quantiles 0 and 1 at tau 1/4 and 3/4 against target samples 0.5 and 3 (kappa 1):
    # i=0: u=0.5 -> 1/4 * 0.125, u=3 -> 1/4 * 2.5; mean 0.328125.
    # i=1: u=-0.5 -> 1/4 * 0.125, u=2 -> 3/4 * 1.5; mean 0.578125.
    loss = qrdqn.quantile_huber_loss(tf.constant([[0.0, 1.0]]), tf.constant([[0.5, 3.0]]))
    self.assertAlmostEqual(float(loss[0]), 0.90625, places=6)

  def test_kappa_scales_the_quadratic_zone(self):
    # |u| = 3 < kappa = 4: quadratic, 0.5 * 9 / 4, weight 1/2 for one quantile.
    loss = qrdqn.quantile_huber_loss(tf.constant([[0.0]]), tf.constant([[3.0]]), kappa=4.0)
    self.assertAlmostEqual(float(loss[0]), 0.5 * 4.5 / 4.0, places=6)


class EpsilonScheduleTest(unittest.TestCase):

  def test_decays_linearly_then_stays(self):
    values = [float(qrdqn.linear_epsilon(step, 1.0, 0.1, 1_000)) for step in (0, 500, 1_000, 5_000)]
    np.testing.assert_allclose(values, [1.0, 0.55, 0.1, 0.1], rtol=1e-6)

  def test_explores_while_training_and_acts_greedily_in_evaluation(self):
    _, algorithm = _chain(epsilon_start=1.0, epsilon_end=1.0)
    observ = tf.tile(tf.one_hot([0], CHAIN_LENGTH), [256, 1])
    explored = algorithm.perform(tf.range(256), observ).numpy()
    self.assertEqual(set(explored.tolist()), {0, 1})
    algorithm.training.assign(False)
    greedy = algorithm.perform(tf.range(256), observ).numpy()
    self.assertEqual(len(set(greedy.tolist())), 1)
    self.assertEqual(greedy[0], int(np.argmax(algorithm.q_values(observ[:1]).numpy())))


class TargetUpdateTest(unittest.TestCase):

  def _filled(self, **overrides):
    fused_step, algorithm = _chain(learning_starts=10**6, **overrides)
    fused_step(reset=True, steps=20)  # Fills the memory; no update yet.
    return algorithm

  def test_periodic_copy(self):
    algorithm = self._filled(target_update_period=2)
    online, target = algorithm.online_network, algorithm.target_network
    algorithm.train_step()
    self.assertFalse(np.array_equal(online.variables[0].numpy(), target.variables[0].numpy()))
    algorithm.train_step()
    for a, b in zip(online.trainable_variables, target.trainable_variables):
      np.testing.assert_array_equal(a.numpy(), b.numpy())

  def test_polyak_average(self):
    algorithm = self._filled(target_update_period=1, target_update_tau=0.25)
    before = [v.numpy() for v in algorithm.target_network.trainable_variables]
    algorithm.train_step()
    for old, online, target in zip(before, algorithm.online_network.trainable_variables,
                                   algorithm.target_network.trainable_variables):
      np.testing.assert_allclose(target.numpy(), 0.25 * online.numpy() + 0.75 * old, rtol=1e-6,
                                 atol=1e-7)


class LearningTest(unittest.TestCase):

  def test_learns_the_chain(self):
    fused_step, algorithm = _chain()
    fused_step(reset=True, steps=500)
    self.assertGreater(int(algorithm.num_updates.numpy()), 400)
    states = tf.one_hot(tf.range(CHAIN_LENGTH - 1), CHAIN_LENGTH)
    q_values = algorithm.q_values(states).numpy()
    np.testing.assert_array_equal(np.argmax(q_values, axis=1), [1, 1, 1])
    # Q(s, RIGHT) = gamma ** (steps to the end - 1): 0.81, 0.9, 1.
    np.testing.assert_allclose(q_values[:, 1], [0.81, 0.9, 1.0], atol=0.1)


class ResumeTest(unittest.TestCase):

  def test_restored_run_continues_bit_exactly(self):
    uninterrupted_step, uninterrupted = _chain()
    uninterrupted_step(reset=True, steps=60)
    uninterrupted_step(reset=False, steps=60)

    first_step, first = _chain()
    first_step(reset=True, steps=60)
    path = tf.train.Checkpoint(algorithm=first).save(os.path.join(tempfile.mkdtemp(), 'ckpt'))
    _, resumed = _chain()
    tf.train.Checkpoint(algorithm=resumed).restore(path).assert_existing_objects_matched()
    # The same environments go on with the restored algorithm.
    simulate.FusedStep(first_step.batch_env, resumed)(reset=False, steps=60)

    self.assertGreater(int(resumed.num_updates.numpy()), 0)
    expected, actual = _values(uninterrupted), _values(resumed)
    self.assertEqual(expected.keys(), actual.keys())
    for name, value in expected.items():
      np.testing.assert_array_equal(actual[name], value, err_msg=name)


class ExportTest(unittest.TestCase):

  def test_saved_model_acts_greedily(self):
    fused_step, algorithm = _chain()
    fused_step(reset=True, steps=100)
    path = os.path.join(tempfile.mkdtemp(), 'policy')
    tf.saved_model.save(algorithm.export_policy(fused_step.batch_env.observation_space), path)
    loaded = tf.saved_model.load(path)
    observ = np.random.default_rng(0).uniform(size=(64, CHAIN_LENGTH)).astype(np.float32)
    expected = np.argmax(algorithm.q_values(observ).numpy(), axis=1)
    np.testing.assert_array_equal(loaded.action(observ).numpy(), expected)
    self.assertEqual(loaded.quantiles(observ).shape, (64, 2, 8))
    # Only the online network is saved: no replay memory in the SavedModel.
    saved = [name for name, _ in tf.train.list_variables(os.path.join(path, 'variables',
                                                                      'variables'))
             if not name.startswith('_CHECKPOINTABLE')]
    self.assertEqual(len(saved), len(algorithm.online_network.variables))


class BadInputTest(unittest.TestCase):

  def test_continuous_actions_are_refused(self):
    space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)
    with self.assertRaisesRegex(ConfigError, 'QR-DQN needs a discrete action space'):
      qrdqn.QRDQN(2, space, space)

  def test_replay_smaller_than_a_batch_is_refused(self):
    space = gymnasium.spaces.Discrete(2)
    with self.assertRaisesRegex(ConfigError, 'algorithm.replay_capacity'):
      qrdqn.QRDQN(2, gymnasium.spaces.Box(0.0, 1.0, (3,)), space, replay_capacity=16,
                  batch_size=32)


if __name__ == '__main__':
  unittest.main()
