"""Tests of agents/tools/batch_member.py: the in-process group of plain environments."""

import unittest

import gymnasium
import numpy as np

from agents.tools import batch_member, errors
from agents.tools.batch_env import BatchEnv
from tests.helpers import fake_envs


class InProcessGroupTest(unittest.TestCase):

  def test_plain_environments_become_one_member_with_the_results_of_each(self):
    batch = BatchEnv([fake_envs.CountingEnv(info=True) for _ in range(3)])
    reference = [fake_envs.CountingEnv(info=True) for _ in range(3)]
    self.assertEqual(len(batch._members), 1)
    batch.reset(seeds=[0, 1, 2])
    for seed, env in enumerate(reference):
      env.reset(seed=seed)
    for actions in ([0, 1, 2], [2, 2, 0]):
      observ, reward, terminated, truncated, infos = batch.step(np.array(actions))
      want = [env.step(action) for env, action in zip(reference, actions)]
      np.testing.assert_array_equal(observ, [step[0] for step in want])
      np.testing.assert_array_equal(reward, np.float32([step[1] for step in want]))
      np.testing.assert_array_equal(terminated, [step[2] for step in want])
      np.testing.assert_array_equal(truncated, [step[3] for step in want])
      self.assertEqual((observ.dtype, reward.dtype), (np.float32, np.float32))
      np.testing.assert_array_equal(infos['steps'], [step[4]['steps'] for step in want])
      np.testing.assert_array_equal(infos['_steps'], [True] * 3)
    observ, infos = batch.reset([2, 0], seeds=[5, 6])
    np.testing.assert_array_equal(observ, [reference[2].reset(seed=5)[0],
                                           reference[0].reset(seed=6)[0]])
    np.testing.assert_array_equal(infos['steps'], [0, 0])
    batch.close()

  def test_an_error_names_the_one_environment_that_raised(self):
    envs = [fake_envs.CountingEnv(), fake_envs.CountingEnv(),
            fake_envs.FaultyEnv('raise', at_step=1)]
    batch = BatchEnv(envs)
    batch.reset()
    with self.assertRaises(Exception) as caught:
      batch.step(np.zeros(3, np.int64))
    self.assertEqual(getattr(caught.exception, '__notes__', []),
                     ['Raised by environment 2 of the batch.'])
    batch.close()

  def test_a_space_mismatch_names_the_odd_environment(self):
    envs = [fake_envs.SpaceEnv(gymnasium.spaces.Discrete(2)),
            fake_envs.SpaceEnv(gymnasium.spaces.Discrete(3))]
    with self.assertRaisesRegex(errors.SpaceMismatchError, 'Environment 1 has action space'):
      BatchEnv(envs)

  def test_groups_form_between_other_members(self):
    members = batch_member.as_members([
        fake_envs.CountingEnv(), fake_envs.CountingEnv(),
        gymnasium.vector.SyncVectorEnv([fake_envs.CountingEnv] * 2,
                                       autoreset_mode=gymnasium.vector.AutoresetMode.DISABLED),
        fake_envs.CountingEnv()])
    self.assertEqual([type(member).__name__ for member in members],
                     ['InProcessGroup', 'InProcessSlab', 'InProcessSlab'])
    self.assertEqual([member.index for member in members], [0, 2, 4])


if __name__ == '__main__':
  unittest.main()
