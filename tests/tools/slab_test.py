"""Tests of agents/tools/slab.py."""

import unittest

import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from agents.tools import slab as slab_lib
from tests.helpers import fake_envs


class SlabTest(unittest.TestCase):

  def test_plain_environment_is_a_slab_of_one(self):
    slab = slab_lib.Slab(fake_envs.CountingEnv(info=True))
    self.assertEqual(slab.num_envs, 1)
    observ, infos = slab.reset([0], [3])
    np.testing.assert_array_equal(observ[0], fake_envs.CountingEnv().reset(seed=3)[0])
    np.testing.assert_array_equal(infos['steps'], [0])
    observ, reward, terminated, truncated, info = slab.step(np.array([2]))
    self.assertEqual((observ.shape, reward.shape, terminated.shape), ((1, 3), (1,), (1,)))
    self.assertEqual(info, {'steps': 1})

  def test_vector_slab_resets_only_the_chosen_environments(self):
    slab = slab_lib.Slab(slab_lib.make_sync_slab([fake_envs.CountingEnv] * 3))
    before, _ = slab.reset(None, [1, 2, 3])
    slab.step(np.zeros(3, np.int64))
    observ, _ = slab.reset([2], [9])
    self.assertEqual(observ.shape, (1, 3))
    np.testing.assert_array_equal(observ[0], fake_envs.CountingEnv().reset(seed=9)[0])
    self.assertFalse(np.array_equal(before[2], observ[0]))

  def test_vector_slab_must_disable_autoreset(self):
    with self.assertRaises(ValueError):
      slab_lib.Slab(SyncVectorEnv([fake_envs.CountingEnv]))

  def test_concatenate_infos_fills_missing_keys(self):
    merged = slab_lib.concatenate_infos(
        [{'a': np.array([1, 2]), '_a': np.array([True, True])}, {},
         {'b': np.array([0.5]), '_b': np.array([True])}], [2, 1, 1])
    np.testing.assert_array_equal(merged['a'], [1, 2, 0, 0])
    np.testing.assert_array_equal(merged['_a'], [True, True, False, False])
    np.testing.assert_array_equal(merged['b'], [0, 0, 0, 0.5])
    np.testing.assert_array_equal(merged['_b'], [False, False, False, True])

  def test_vector_infos_of_a_plain_info_dict(self):
    infos = slab_lib.vector_infos({'x': 3, 'name': 'hi'}, 1, False)
    np.testing.assert_array_equal(infos['x'], [3])
    self.assertEqual(infos['name'][0], 'hi')
    self.assertTrue(infos['_name'][0])

  def test_vector_infos_match_what_gymnasium_vector_envs_build(self):
    # The infos of a plain environment must look exactly like those a SyncVectorEnv of
    # one builds from the same dict (Gymnasium's own conversion, through its public API).
    info = {'count': 3, 'ratio': 0.5, 'flag': True, 'small': np.float32(2.5),
            'cell': np.arange(4).reshape(2, 2), 'name': 'hi', 'items': [1, 2],
            'nested': {'depth': 7, 'label': None}, 'final_obs': np.ones(3)}
    vector = SyncVectorEnv([lambda: fake_envs.InfoEnv(info)],
                           autoreset_mode=AutoresetMode.DISABLED)
    vector.reset(seed=0)
    expected = vector.step(np.zeros(1, np.int64))[4]
    converted = slab_lib.vector_infos(info, 1, False)
    self.assertEqual(sorted(converted), sorted(expected))
    self.assertEqual(sorted(converted['nested']), sorted(expected['nested']))
    for key in expected:
      if key in ('nested', 'final_obs'):
        continue
      self.assertEqual(converted[key].dtype, expected[key].dtype, key)
      self.assertEqual(converted[key].shape, expected[key].shape, key)
      self.assertEqual(converted[key].tolist(), expected[key].tolist(), key)
    np.testing.assert_array_equal(converted['final_obs'][0], info['final_obs'])
    self.assertEqual(converted['final_obs'].dtype, expected['final_obs'].dtype)



class StackFlatInfosTest(unittest.TestCase):

  def _one_by_one(self, infos):
    return slab_lib.concatenate_infos(
        [slab_lib.vector_infos(info, 1, False) for info in infos], [1] * len(infos))

  def test_alike_infos_stack_into_the_arrays_one_by_one_gives(self):
    infos = [{'x': 0.5, 'n': 3, 'ok': True, 'v': np.float32(2)},
             {'x': -1.0, 'n': 4, 'ok': False, 'v': np.float32(1)}]
    stacked, expected = slab_lib.stack_flat_infos(infos), self._one_by_one(infos)
    self.assertEqual(stacked.keys(), expected.keys())
    for key, value in expected.items():
      np.testing.assert_array_equal(stacked[key], value)
      self.assertEqual(stacked[key].dtype, value.dtype, key)

  def test_other_infos_are_left_to_the_general_path(self):
    for infos in ([{'x': 1.0}, {'y': 1.0}], [{'x': 1.0}, {'x': 1}],
                  [{'x': np.zeros(2)}, {'x': np.zeros(2)}], [{'final_obs': 1.0}] * 2,
                  [{'d': {'a': 1}}] * 2):
      self.assertIsNone(slab_lib.stack_flat_infos(infos), infos)


if __name__ == '__main__':
  unittest.main()
