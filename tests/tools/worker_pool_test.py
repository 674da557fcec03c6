"""Tests of agents/tools/worker_pool.py: workers stepped as one member through one block."""

import functools
import unittest

import numpy as np

from agents.tools import batch_member, worker_pool
from agents.tools.batch_env import BatchEnv
from agents.tools.wrappers import ExternalProcess
from tests.helpers import fake_envs


def _kinds(batch):
  return [type(member).__name__ for member in batch.members]


class WorkerPoolTest(unittest.TestCase):

  def test_runs_of_workers_form_pools_between_other_members_and_step_as_in_process(self):
    make = functools.partial(fake_envs.CountingEnv, length=10, info=True)
    envs = [make(), ExternalProcess(make), ExternalProcess(make),
            ExternalProcess(make, use_shared_memory=False), ExternalProcess(make)]
    with BatchEnv(envs) as batch, BatchEnv([make() for _ in range(5)]) as reference:
      self.assertEqual(_kinds(batch),
                       ['InProcessSlab', 'WorkerPool', 'ExternalProcess', 'WorkerPool'])
      self.assertEqual([member.index for member in batch.members], [0, 1, 3, 4])
      self.assertEqual([worker.index for worker in batch.workers], [1, 2, 3, 4])
      for indices, seeds in [(None, [0, 1, 2, 3, 4]), ([4, 1, 0], [7, 8, 9])]:
        observ, infos = batch.reset(indices, seeds)
        expected_observ, expected_infos = reference.reset(indices, seeds)
        np.testing.assert_array_equal(observ, expected_observ)
        np.testing.assert_array_equal(infos['steps'], expected_infos['steps'])
        for step in range(4):
          actions = np.full(5, step % 3)
          for value, expected in zip(batch.step(actions), reference.step(actions)):
            if isinstance(expected, dict):
              np.testing.assert_array_equal(value['steps'], expected['steps'])
            else:
              np.testing.assert_array_equal(value, expected)

  def test_a_worker_dying_in_a_pool_is_restarted_there_and_its_episode_truncated(self):
    envs = [fake_envs.CountingEnv(length=100), ExternalProcess(fake_envs.CountingEnv),
            ExternalProcess(functools.partial(fake_envs.FaultyEnv, 'sigkill', 2))]
    with BatchEnv(envs, max_restarts=1) as batch:
      batch.reset(seeds=[0, 1, 2])
      last_observ, *_ = batch.step(np.zeros(3, np.int64))
      victim = batch.workers[1].pid
      observ, reward, terminated, truncated, infos = batch.step(np.ones(3, np.int64))
      np.testing.assert_array_equal(truncated, [False, False, True])
      np.testing.assert_array_equal(infos['worker_restarted'], [False, False, True])
      np.testing.assert_array_equal(observ[2], last_observ[2])
      self.assertEqual(reward[2], 0.0)
      self.assertEqual(batch.num_restarts, 1)
      self.assertNotEqual(batch.workers[1].pid, victim)
      self.assertIsInstance(batch.members[1], worker_pool.WorkerPool)
      # The fresh worker steps through the pool's block again.
      batch.reset([2], seeds=[5])
      self.assertFalse(batch.step(np.ones(3, np.int64))[3].any())

  def test_a_pool_is_a_batch_member_by_itself(self):
    workers = [ExternalProcess(fake_envs.CountingEnv) for _ in range(2)]
    pool = worker_pool.WorkerPool(workers, index=3)
    try:
      self.assertIsInstance(pool, batch_member.BatchMember)
      self.assertEqual(([worker.index for worker in workers], pool.num_envs), ([3, 4], 2))
      observ, _ = pool.reset_batch([1, 0], [4, 5])
      np.testing.assert_array_equal(observ[0], fake_envs.CountingEnv().reset(seed=4)[0])
      promise = pool.step_batch(np.array([1, 2]), blocking=False)
      self.assertEqual(promise()[0].shape, (2, 3))
    finally:
      pool.close()
    self.assertFalse(any(worker.is_alive() for worker in workers))


if __name__ == '__main__':
  unittest.main()
