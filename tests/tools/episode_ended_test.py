"""Stepping an environment past its episode's end says so, the same in every placement."""

import functools
import unittest

import numpy as np

from agents.tools import batch_env as batch_env_lib
from agents.tools import errors, mock_environment

_MESSAGE = 'stepped after its episode ended .terminated or truncated. without a reset'


def _two_step_env():
  return mock_environment.MockEnvironment([2])


class EpisodeEndedTest(unittest.TestCase):

  def _check(self, batch, error_type):
    self.addCleanup(batch.close)
    batch.reset()
    actions = np.zeros((len(batch), 1), np.float32)
    batch.step(actions)
    _, _, terminated, _, _ = batch.step(actions)
    self.assertTrue(terminated.all())
    with self.assertRaisesRegex(error_type, _MESSAGE) as caught:
      batch.step(actions)
    batch.reset()  # After a reset the environments step again.
    batch.step(actions)
    return caught.exception

  def test_plain_environments_in_this_process(self):
    error = self._check(batch_env_lib.BatchEnv([_two_step_env(), _two_step_env()]),
                        errors.EpisodeEndedError)
    self.assertIn('Raised by environment 0 of the batch.', error.__notes__)

  def test_a_vector_slab_in_this_process(self):
    batch = batch_env_lib.BatchEnv.from_constructors(_two_step_env, 2, processes=False,
                                                     envs_per_process=2)
    self.assertEqual(self._check(batch, errors.EpisodeEndedError).positions, [0, 1])

  def test_a_worker_with_one_environment_and_a_worker_with_a_slab(self):
    for envs_per_process in (1, 2):
      with self.subTest(envs_per_process=envs_per_process):
        batch = batch_env_lib.BatchEnv.from_constructors(
            functools.partial(_two_step_env), 2, processes=True,
            envs_per_process=envs_per_process)
        error = self._check(batch, errors.WorkerError)
        self.assertEqual(error.remote_type, 'EpisodeEndedError')

  def test_environments_that_step_finished_episodes_are_left_alone(self):
    env = _two_step_env()
    env.steps_finished_episodes = True
    env.step = functools.partial(_step_on, env)
    batch = batch_env_lib.BatchEnv([env])
    self.addCleanup(batch.close)
    batch.reset()
    for _ in range(4):
      batch.step(np.zeros((1, 1), np.float32))


def _step_on(env, action):
  """A step that never refuses (as the balloon's, which stays put)."""
  del action
  return env.observation_space.sample() * 0, 0.0, True, False, {}


if __name__ == '__main__':
  unittest.main()
