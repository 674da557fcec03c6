"""Tests of InGraphBatchEnv: variables, graph reset and step, infos, checks at the boundary."""

import unittest
from unittest import mock

import gymnasium
import numpy as np
import tensorflow as tf

from agents.tools import batch_env as batch_env_lib
from agents.tools import in_graph_batch_env, mock_environment, space_spec


def _build(durations=([2], [3]), info_specs=mock_environment.INFO_SPECS, seed=None,
           action_space=None):
  envs = [mock_environment.MockEnvironment(d, action_space=action_space) for d in durations]
  batch = in_graph_batch_env.InGraphBatchEnv(
      batch_env_lib.BatchEnv(envs), info_specs=info_specs, seed=seed)
  return envs, batch


class InGraphBatchEnvTest(unittest.TestCase):

  def test_variables_take_shapes_and_dtypes_from_the_spaces(self):
    _, batch = _build()
    self.assertEqual(len(batch), 2)
    self.assertEqual(batch.observ.shape, (2, 2))
    self.assertEqual(batch.observ.dtype, tf.float32)
    self.assertEqual(batch.action.shape, (2, 1))
    self.assertEqual(batch.reward.dtype, tf.float32)
    np.testing.assert_array_equal(batch.done.numpy(), [True, True])
    np.testing.assert_array_equal(batch.terminated.numpy(), [False, False])
    np.testing.assert_array_equal(batch.truncated.numpy(), [False, False])

  def test_reset_of_a_subset_only_touches_those_environments(self):
    envs, batch = _build()
    reset = tf.function(batch.reset)
    reset(tf.constant([0, 1]))
    np.testing.assert_array_equal(batch.done.numpy(), [False, False])
    batch.done.assign([True, True])
    batch.observ.assign([[7, 7], [7, 7]])
    observ = reset(tf.constant([1]))
    np.testing.assert_array_equal(observ, [[1, 0]])
    np.testing.assert_array_equal(batch.observ.numpy(), [[7, 7], [1, 0]])
    np.testing.assert_array_equal(batch.done.numpy(), [True, False])
    self.assertEqual([len(env.steps) for env in envs], [1, 2])

  def test_simulate_assigns_the_results_of_the_step(self):
    _, batch = _build()
    batch.reset()
    step = tf.function(batch.simulate)
    step(tf.constant([[0.5], [-0.5]]))
    observ, reward, terminated, truncated = step(tf.constant([[0.25], [0.0]]))
    np.testing.assert_array_equal(batch.observ.numpy(), [[0, 2], [0, 2]])
    np.testing.assert_array_equal(observ, [[0, 2], [0, 2]])
    np.testing.assert_array_equal(batch.action.numpy(), [[0.25], [0.0]])
    np.testing.assert_array_equal(reward, [1.0, 1.0])
    np.testing.assert_array_equal(terminated, [True, False])
    np.testing.assert_array_equal(batch.done.numpy(), [True, False])
    np.testing.assert_array_equal(truncated, [False, False])

  def test_named_infos_are_exposed_with_their_masks(self):
    _, batch = _build(info_specs={'episode_step': ((), tf.int32)})
    self.assertEqual(set(batch.infos), {'episode_step', '_episode_step'})
    batch.reset()
    batch.simulate(tf.zeros([2, 1]))
    batch.simulate(tf.zeros([2, 1]))
    np.testing.assert_array_equal(batch.infos['episode_step'].numpy(), [2, 2])
    np.testing.assert_array_equal(batch.infos['_episode_step'].numpy(), [True, True])
    batch.reset([0])
    np.testing.assert_array_equal(batch.infos['episode_step'].numpy(), [0, 2])

  def test_missing_named_info_is_zero_with_a_false_mask(self):
    _, batch = _build(info_specs=dict(mock_environment.INFO_SPECS,
                                      distance=tf.TensorSpec([3], tf.float32)))
    batch.reset()
    batch.simulate(tf.zeros([2, 1]))
    np.testing.assert_array_equal(batch.infos['distance'].numpy(), np.zeros([2, 3]))
    np.testing.assert_array_equal(batch.infos['_distance'].numpy(), [False, False])

  def test_unnamed_infos_are_dropped_with_one_warning_per_key_and_process(self):
    _, batch = _build(info_specs={})
    with mock.patch.object(space_spec, '_REPORTED', set()):
      with self.assertLogs(space_spec.__name__, 'WARNING') as logs:
        batch.reset()
        batch.simulate(tf.zeros([2, 1]))
      self.assertEqual(len(logs.records), 1)
      self.assertIn("'episode_step'", logs.output[0])
      # Another environment of the process drops the same key without a second line.
      _, other = _build(info_specs={})
      with self.assertNoLogs(space_spec.__name__, 'WARNING'):
        other.reset()
        other.simulate(tf.zeros([2, 1]))

  def test_action_of_the_wrong_shape_names_the_expected_shape(self):
    _, batch = _build()
    with self.assertRaisesRegex(ValueError, r'expected shape \(2, 1\)'):
      batch.simulate(tf.zeros([3, 1]))

  def test_action_of_the_wrong_kind_is_a_type_error(self):
    _, batch = _build()
    with self.assertRaisesRegex(TypeError, 'int32'):
      batch.simulate(tf.zeros([2, 1], tf.int32))

  def test_integer_actions_are_cast_to_a_discrete_space_dtype(self):
    envs, batch = _build(action_space=gymnasium.spaces.Discrete(3))
    batch.reset()
    batch.simulate(tf.constant([2, 1], tf.int32))
    self.assertEqual(batch.action.dtype, tf.int64)
    np.testing.assert_array_equal(batch.action.numpy(), [2, 1])
    self.assertEqual([int(env.actions[0]) for env in envs], [2, 1])

  def test_spaces_without_an_array_form_are_rejected(self):
    env = mock_environment.MockEnvironment([2])
    env.observation_space = gymnasium.spaces.Dict({'a': gymnasium.spaces.Discrete(2)})
    with self.assertRaisesRegex(TypeError, 'observation space.*FlattenObservation'):
      in_graph_batch_env.InGraphBatchEnv(batch_env_lib.BatchEnv([env]))

  def test_info_keys_with_mask_prefix_are_rejected(self):
    with self.assertRaisesRegex(TypeError, "'_x'"):
      _build(info_specs={'_x': ((), tf.int32)})

  def test_seed_applies_to_the_first_reset_of_each_environment_only(self):
    envs, batch = _build(seed=10)
    batch.reset()
    batch.reset([1])
    self.assertEqual(envs[0].seeds, [10])
    self.assertEqual(envs[1].seeds, [11, None])

  def test_wrong_observation_shape_from_the_batch_names_the_space(self):
    _, batch = _build()
    batch.batch_env.reset = lambda indices, seeds: (np.zeros([len(indices), 3]), {})
    with self.assertRaisesRegex(tf.errors.OpError, r'shape \(2, 3\).*needs \(2, 2\)'):
      tf.function(batch.reset)()


if __name__ == '__main__':
  unittest.main()
