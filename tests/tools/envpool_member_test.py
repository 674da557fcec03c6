"""`environment.backend: envpool`: EnvPool behind the BatchEnv interface."""

import unittest
from unittest import mock

import numpy as np

from agents import configs
from agents.tools import batch_env, envpool_member, errors
from agents.training import builders

try:
  import envpool  # noqa: F401  pylint: disable=unused-import
  HAVE_ENVPOOL = True
except ImportError:
  HAVE_ENVPOOL = False


@unittest.skipUnless(HAVE_ENVPOOL, "needs the envpool extra: pip install 'agents[envpool]'")
class EnvPoolMemberTest(unittest.TestCase):

  def _batch(self, num_envs=3, **kwargs):
    batch = batch_env.BatchEnv([envpool_member.EnvPoolMember(
        'HalfCheetah-v5', num_envs, seed=7, num_threads=1, **kwargs)])
    self.addCleanup(batch.close)
    return batch

  def test_steps_and_resets_as_a_batch_in_the_callers_order(self):
    batch = self._batch()
    observ, _ = batch.reset(seeds=[7, 8, 9])  # EnvPool's own seeds: accepted.
    self.assertEqual(observ.shape, (3, 17))
    actions = np.zeros((3, 6), np.float32)
    observ, reward, terminated, truncated, infos = batch.step(actions)
    self.assertEqual((observ.shape, reward.dtype, terminated.dtype), ((3, 17), np.float32,
                                                                      bool))
    self.assertFalse(truncated.any())
    self.assertEqual(infos['x_velocity'].shape, (3,))
    self.assertTrue(infos['_x_velocity'].all())
    self.assertNotIn('env_id', infos)
    first, _ = self._batch().reset()
    in_order, _ = self._batch().reset([2, 0])
    np.testing.assert_array_equal(in_order, first[[2, 0]])

  def test_same_seed_same_observations_as_gymnasium_seeds_each_env(self):
    first, _ = self._batch().reset()
    second, _ = self._batch().reset()
    np.testing.assert_array_equal(first, second)

  def test_stepping_an_ended_episode_raises_and_a_reset_clears_it(self):
    batch = self._batch(max_episode_steps=2)
    batch.reset()
    actions = np.zeros((3, 6), np.float32)
    batch.step(actions)
    _, _, _, truncated, _ = batch.step(actions)
    self.assertTrue(truncated.all())
    with self.assertRaises(errors.EpisodeEndedError):
      batch.step(actions)
    batch.reset([0, 1, 2])
    batch.step(actions)

  def test_a_seed_envpool_cannot_give_is_refused_by_name(self):
    batch = self._batch()
    with self.assertRaisesRegex(ValueError, 'Environment 1: EnvPool seeds .* with 99'):
      batch.reset([1], seeds=[99])

  def test_a_task_envpool_lacks_is_a_config_error_naming_it(self):
    config = configs.resolve('cheetah', {'environment.backend': 'envpool',
                                         'environment.id': 'HalfCheetah-v2'})
    with self.assertRaisesRegex(configs.ConfigError,
                                "no task 'HalfCheetah-v2'; it has .*HalfCheetah-v5"):
      builders.make_batch_env(config)

  def test_the_config_builds_a_batch_of_num_agents(self):
    config = configs.resolve('cartpole', {'environment.backend': 'envpool',
                                          'environment.id': 'Hopper-v5',
                                          'environment.num_agents': 2})
    batch = builders.make_batch_env(config)
    self.addCleanup(batch.close)
    self.assertEqual(len(batch), 2)
    self.assertEqual(batch.observation_space.shape, (11,))


class WithoutEnvPoolTest(unittest.TestCase):

  def test_names_the_task_and_the_install_command(self):
    with mock.patch.dict('sys.modules', {'envpool': None}):
      with self.assertRaisesRegex(ImportError, r"'Hopper-v5'.*pip install 'agents\[envpool\]'"):
        envpool_member.check_task('Hopper-v5')


if __name__ == '__main__':
  unittest.main()
