"""Tests of agents/algorithms/ppo/ppo.py: penalty, clipping, update, save and restore."""

import os
import tempfile
import unittest
import weakref

import gymnasium
import numpy as np
import tensorflow as tf

from agents.algorithms.ppo import networks, ppo

OBSERVATION_SPACE = gymnasium.spaces.Box(-np.inf, np.inf, (3,), np.float32)
BOX = gymnasium.spaces.Box(-2.0, 2.0, (1,), np.float32)
DISCRETE = gymnasium.spaces.Discrete(3)


def _make(action_space=BOX, batch_size=4, network='feed_forward', seed=0,
          observation_space=OBSERVATION_SPACE, **kwargs):
  net = networks.make_network(network, observation_space, action_space, seed=seed,
                              policy_layers=[16], value_layers=[16], gru_units=8,
                              init_std=kwargs.pop('init_std', 1.0))
  options = dict(segment_length=8, update_epochs=4, num_minibatches=2, seed=seed)
  options.update(kwargs)
  return ppo.PPO(batch_size, observation_space, action_space, net, **options)


def _never_updating(algorithm):
  """The algorithm, for a test that never fills its memory: `experience` then need not
  trace the update it would never run (about a second of CPU per test)."""
  algorithm.update = lambda: tf.constant(False)
  return algorithm


_FUNCTIONS = weakref.WeakKeyDictionary()


def _functions(algorithm):
  """The algorithm's `perform` and `experience` as `tf.function`s, traced once per
  algorithm however often it is driven."""
  if algorithm not in _FUNCTIONS:
    _FUNCTIONS[algorithm] = (tf.function(algorithm.perform), tf.function(algorithm.experience))
  return _FUNCTIONS[algorithm]


def _drive(algorithm, steps, batch_size=4, seed=0, truncate_at=None):
  """Runs perform/experience on a toy stream; returns the actions performed."""
  rng = np.random.default_rng(seed)
  indices = tf.range(batch_size)
  algorithm.begin_episode(indices)
  perform, experience = _functions(algorithm)
  observ = rng.normal(size=(batch_size, 3)).astype(np.float32)
  actions = []
  for step in range(steps):
    action = perform(indices, observ)
    actions.append(action.numpy())
    next_observ = rng.normal(size=(batch_size, 3)).astype(np.float32)
    # Reward prefers positive actions, so there is something to learn.
    reward = np.asarray(action, np.float32).reshape(batch_size, -1)[:, 0]
    truncated = np.full(batch_size, truncate_at is not None and step % truncate_at == 0)
    experience(indices, observ, action, reward, np.zeros(batch_size, bool), truncated,
               next_observ)
    observ = next_observ
  return np.stack(actions)


class KLPenaltyTest(unittest.TestCase):

  def test_adaptation_by_one_and_a_half(self):
    target = 0.01
    self.assertAlmostEqual(float(ppo.adapt_kl_penalty(1.0, 0.02, target)), 1.5, places=6)
    self.assertAlmostEqual(float(ppo.adapt_kl_penalty(1.0, 0.005, target)), 1 / 1.5, places=6)
    self.assertAlmostEqual(float(ppo.adapt_kl_penalty(1.0, 0.01, target)), 1.0, places=6)
    # The band edges: above 1.3 and below 0.7 times the target only.
    self.assertAlmostEqual(float(ppo.adapt_kl_penalty(2.0, 0.0129, target)), 2.0, places=6)
    self.assertAlmostEqual(float(ppo.adapt_kl_penalty(2.0, 0.0071, target)), 2.0, places=6)

  def test_quadratic_cutoff_above_threshold(self):
    # Below 2 * target only the linear penalty acts.
    self.assertAlmostEqual(float(ppo.kl_penalty_loss(0.015, 2.0, 0.01, 2.0, 1000.0)), 0.03,
                           places=6)
    # Above it: 2 * 0.03 + 1000 * (0.03 - 0.02)^2 = 0.06 + 0.1.
    self.assertAlmostEqual(float(ppo.kl_penalty_loss(0.03, 2.0, 0.01, 2.0, 1000.0)), 0.16,
                           places=5)

  def test_update_adapts_penalty(self):
    algorithm = _make(learning_rate=0.05, kl_target=1e-6)
    _drive(algorithm, 8)
    self.assertEqual(int(algorithm.num_updates.numpy()), 1)
    # A large step against a tiny target raises the penalty by 1.5.
    self.assertAlmostEqual(float(algorithm.kl_penalty.numpy()), 1.5, places=5)


class PerformTest(unittest.TestCase):

  def test_actions_clipped_but_unclipped_sample_stored(self):
    algorithm = _never_updating(_make(init_std=20.0))
    actions = _drive(algorithm, 3)
    self.assertTrue(np.all(np.abs(actions) <= 2.0))
    stored = algorithm.memory.data()['action'].numpy()[:, :3, 0]
    self.assertGreater(np.abs(stored).max(), 2.0)
    np.testing.assert_allclose(np.clip(stored, -2, 2), actions[:, :, 0].T, rtol=1e-6)

  def test_mode_when_not_training_and_nothing_recorded(self):
    algorithm = _never_updating(_make())
    algorithm.training.assign(False)
    first = _drive(algorithm, 2, seed=1)
    second = _drive(algorithm, 2, seed=1)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(algorithm.memory.length.numpy(), [0, 0, 0, 0])

  def test_discrete_actions_are_int32_in_range(self):
    algorithm = _never_updating(_make(DISCRETE))
    actions = _drive(algorithm, 5)
    self.assertEqual(actions.dtype, np.int32)
    self.assertTrue(set(actions.ravel()) <= {0, 1, 2})


  def test_normalize_ranges_acts_in_unit_range_mapped_onto_the_bounds(self):
    space = gymnasium.spaces.Box(np.float32([-0.4, 0.0]), np.float32([0.4, 3.0]))
    algorithm = _never_updating(_make(space, init_std=20.0, normalize_ranges=True))
    actions = _drive(algorithm, 3)
    stored = algorithm.memory.data()['action'].numpy()[:, :3]  # [agent, step, dim]
    self.assertGreater(np.abs(stored).max(), 1.0)  # The sample itself is not clipped.
    unit = np.clip(stored, -1.0, 1.0)
    expected = space.low + (unit + 1.0) * 0.5 * (space.high - space.low)
    np.testing.assert_allclose(actions.transpose(1, 0, 2), expected, rtol=1e-6, atol=1e-7)
    self.assertTrue(np.all((actions >= space.low) & (actions <= space.high)))

  def test_normalize_ranges_maps_bounded_observations_only(self):
    bounded = gymnasium.spaces.Box(np.float32([0, -1, -8]), np.float32([2, 1, 8]))
    algorithm = _make(observation_space=bounded, normalize_ranges=True)
    observ = tf.constant([[0.0, -1.0, -8.0], [2.0, 1.0, 8.0], [1.0, 0.0, 4.0]])
    np.testing.assert_allclose(algorithm._flatten_observ(observ).numpy(),
                               [[-1, -1, -1], [1, 1, 1], [0, 0, 0.5]], atol=1e-6)
    # An unbounded space (one infinite bound is enough) is left as it is, and so is a Box
    # action space with an infinite bound: clipped to its bounds as without the option.
    half_open = gymnasium.spaces.Box(np.float32([-1.0]), np.float32([np.inf]))
    unbounded = _make(half_open, normalize_ranges=True)
    np.testing.assert_array_equal(unbounded._flatten_observ(observ).numpy(), observ.numpy())
    np.testing.assert_array_equal(unbounded.env_action(tf.constant([[-3.0], [5.0]])).numpy(),
                                  [[-1.0], [5.0]])

  def test_discrete_actions_start_where_the_space_starts(self):
    space = gymnasium.spaces.Discrete(3, start=5)
    algorithm = _make(space, batch_size=64)
    # Sampled (training) and most likely (evaluation) actions are both in 5..7, and the
    # update still learns from the category indices 0..2.
    actions = _drive(algorithm, 10, batch_size=64)
    self.assertEqual(set(np.unique(actions)), {5, 6, 7})
    algorithm.training.assign(False)
    mode = algorithm.perform(tf.range(4), tf.zeros([4, 3])).numpy()
    self.assertTrue(np.all((mode >= 5) & (mode <= 7)), mode)
    self.assertTrue(all(space.contains(int(action)) for action in mode))


class UpdateTest(unittest.TestCase):

  def _fill_memory(self, algorithm, action_space):
    """Fills the memory with a fixed batch acted on by the current policy."""
    rng = np.random.default_rng(2)
    _drive(algorithm, 7, seed=2)  # One step short of an update.
    self.assertEqual(int(algorithm.num_updates.numpy()), 0)
    memory = algorithm.memory
    reward = rng.normal(size=memory.buffers['reward'].shape).astype(np.float32)
    memory.buffers['reward'].assign(reward)
    memory.length.assign(tf.fill([4], memory.capacity))
    # The last column was never written: copy step 0 so it is a valid transition.
    for buffer in tf.nest.flatten(memory.buffers):
      values = buffer.numpy()
      values[:, -1] = values[:, 0]
      buffer.assign(values)

  def _normalized_batch(self, algorithm):
    batch = algorithm.training_batch()
    advantage = batch['advantage']
    batch['advantage'] = (advantage - tf.reduce_mean(advantage)) / (
        tf.math.reduce_std(advantage) + 1e-8)
    return batch

  @staticmethod
  def _surrogate_loss(algorithm, batch):
    """The policy loss of the current policy on a batch of the memory's layout."""
    network = algorithm.network
    old = network.distribution(batch['params'])
    new = network.distribution(algorithm._policy_params(batch))
    ratio = tf.exp(new.log_prob(batch['action']) - old.log_prob(batch['action']))
    return -tf.reduce_mean(ratio * batch['advantage'])

  def _check_update_lowers_surrogate(self, action_space, **kwargs):
    algorithm = _make(action_space, num_minibatches=1, **kwargs)
    self._fill_memory(algorithm, action_space)
    batch = self._normalized_batch(algorithm)
    before = float(self._surrogate_loss(algorithm, batch))
    algorithm.update()
    after = float(self._surrogate_loss(algorithm, batch))
    # The old policy acted, so the ratio starts at 1 and the loss at -mean(A) = 0.
    self.assertAlmostEqual(before, 0.0, places=5)
    self.assertLess(after, before - 0.01)
    self.assertEqual(int(algorithm.num_updates.numpy()), 1)
    np.testing.assert_array_equal(algorithm.memory.length.numpy(), [0, 0, 0, 0])
    for name, variable in algorithm.metrics.items():
      self.assertTrue(np.isfinite(variable.numpy()), name)
    return algorithm

  def test_gaussian_kl_penalty_update_lowers_surrogate(self):
    algorithm = self._check_update_lowers_surrogate(BOX, learning_rate=3e-3)
    self.assertGreater(float(algorithm.metrics['kl'].numpy()), 0.0)

  def test_categorical_clipped_update_lowers_surrogate(self):
    self._check_update_lowers_surrogate(DISCRETE, learning_rate=3e-3,
                                        policy_objective='clipped')

  def test_recurrent_update_runs_in_chunks(self):
    algorithm = _make(network='recurrent', learning_rate=3e-3)
    _drive(algorithm, 8, truncate_at=3)
    self.assertEqual(int(algorithm.num_updates.numpy()), 1)
    self.assertTrue(np.isfinite(algorithm.metrics['policy_loss'].numpy()))
    self.assertGreater(float(algorithm.metrics['kl'].numpy()), 0.0)

  def test_xla_update_matches_the_update_op_by_op(self):
    # `jit_compile` compiles the same computation: on the same memory and seed both
    # updates move the weights alike (XLA may round differently, so not bit for bit).
    trained = []
    for jit_compile in (True, False):
      algorithm = _make(BOX, learning_rate=3e-3, jit_compile=jit_compile)
      self._fill_memory(algorithm, BOX)
      before = [variable.numpy() for variable in algorithm.network.trainable_variables]
      algorithm.update()
      trained.append([variable.numpy() - start for variable, start in
                      zip(algorithm.network.trainable_variables, before)])
      self.assertEqual(int(algorithm.num_updates.numpy()), 1)
    for compiled, op_by_op in zip(*trained):
      np.testing.assert_allclose(compiled, op_by_op, rtol=1e-3, atol=1e-5)
    self.assertGreater(max(float(np.abs(step).max()) for step in trained[0]), 1e-4)

  def test_bad_minibatch_split_names_the_keys(self):
    with self.assertRaisesRegex(ValueError,
                                "'algorithm.num_minibatches' = 3 must divide num_agents"):
      _make(num_minibatches=3)

  def test_forced_reset_truncates_abandoned_episode(self):
    algorithm = _never_updating(_make())
    _drive(algorithm, 3)
    algorithm.begin_episode(tf.constant([1], tf.int32))
    np.testing.assert_array_equal(algorithm.memory.data()['truncated'].numpy()[:, 2],
                                  [False, True, False, False])


class SaveRestoreTest(unittest.TestCase):

  def test_restore_reproduces_actions_exactly(self):
    original = _make(seed=0)
    _drive(original, 10, seed=3)  # Includes one update and normaliser statistics.
    directory = tempfile.mkdtemp()
    path = tf.train.Checkpoint(algorithm=original).save(os.path.join(directory, 'ckpt'))
    expected = _drive(original, 5, seed=4)
    restored = _make(seed=7)  # Different initial weights and sampling seed.
    tf.train.Checkpoint(algorithm=restored).restore(path).assert_existing_objects_matched()
    actual = _drive(restored, 5, seed=4)
    np.testing.assert_array_equal(actual, expected)


if __name__ == '__main__':
  unittest.main()
