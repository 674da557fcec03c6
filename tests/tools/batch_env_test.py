"""Tests of agents/tools/batch_env.py: the batch contract, parallel stepping, faults, cleanup."""

import functools
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from unittest import mock

import gymnasium
import numpy as np

from agents.tools import errors, worker_pool
from agents.tools import slab as slab_lib
from agents.tools.batch_env import BatchEnv
from agents.tools.transport import wire
from tests.helpers import fake_envs
from tests.helpers.processes import ROOT, pid_exists


def wait_until_gone(pids, seconds=10.0):
  """Returns the pids still running after waiting up to `seconds` for all to end."""
  deadline = time.monotonic() + seconds
  while time.monotonic() < deadline:
    alive = [pid for pid in pids if pid_exists(pid)]
    if not alive:
      return []
    time.sleep(0.05)
  return alive


def run_episodes(batch, num_steps, seed):
  """Steps a batch with seeded random actions, resetting finished environments."""
  rng = np.random.default_rng(seed)
  outputs = []
  observ, _ = batch.reset(seeds=list(range(100, 100 + len(batch))))
  outputs.append(observ)
  for step in range(num_steps):
    actions = rng.integers(0, 3, len(batch))
    observ, reward, terminated, truncated, _ = batch.step(actions)
    outputs.extend([observ, reward, terminated, truncated])
    done = np.flatnonzero(terminated | truncated)
    if len(done):
      observ, _ = batch.reset(done, seeds=[1000 * step + int(i) for i in done])
      outputs.append(observ)
  return outputs


class BatchEnvContractTest(unittest.TestCase):

  def test_in_process_contract(self):
    batch = BatchEnv([fake_envs.CountingEnv(length=3) for _ in range(4)])
    self.assertEqual(len(batch), 4)
    self.assertEqual(batch.observation_space.shape, (3,))
    observ, infos = batch.reset(seeds=[1, 2, 3, 4])
    self.assertEqual(observ.shape, (4, 3))
    self.assertEqual(infos, {})
    observ, reward, terminated, truncated, _ = batch.step(np.array([0, 1, 2, 0]))
    self.assertEqual(observ.shape, (4, 3))
    self.assertEqual(reward.dtype, np.float32)
    self.assertEqual(terminated.dtype, bool)
    self.assertEqual(truncated.dtype, bool)
    batch.close()
    batch.close()

  def test_reset_subset_keeps_requested_order_and_seeds(self):
    for processes in [False, True]:
      with BatchEnv.from_constructors(fake_envs.CountingEnv, 4, processes=processes,
                                      envs_per_process=2) as batch:
        batch.reset(seeds=[0, 0, 0, 0])
        observ, _ = batch.reset([3, 0], seeds=[11, 12])
        np.testing.assert_array_equal(observ[0], fake_envs.CountingEnv().reset(seed=11)[0])
        np.testing.assert_array_equal(observ[1], fake_envs.CountingEnv().reset(seed=12)[0])
        self.assertEqual(batch.reset([])[0].shape, (0, 3))
        with self.assertRaises(IndexError):
          batch.reset([4])
        with self.assertRaises(IndexError):
          batch.reset([1, 1])
        with self.assertRaises(ValueError):
          batch.reset([1, 2], seeds=[1])

  def test_infos_are_in_vector_format(self):
    envs = [fake_envs.CountingEnv(info=True), fake_envs.CountingEnv(info=False),
            fake_envs.CountingEnv(info=True)]
    batch = BatchEnv(envs)
    batch.reset(seeds=[0, 1, 2])
    batch.step(np.zeros(3, np.int64))
    _, _, _, _, infos = batch.step(np.zeros(3, np.int64))
    np.testing.assert_array_equal(infos['steps'], [2, 0, 2])
    np.testing.assert_array_equal(infos['_steps'], [True, False, True])

  def test_spaces_must_agree(self):
    with self.assertRaises(errors.SpaceMismatchError) as context:
      BatchEnv([fake_envs.CountingEnv(), gymnasium.make('CartPole-v1')])
    self.assertIn('Environment 1', str(context.exception))

  def test_closed_batch_refuses_requests(self):
    batch = BatchEnv([fake_envs.CountingEnv()])
    batch.close()
    with self.assertRaises(errors.ClosedError):
      batch.step(np.zeros(1, np.int64))


class BatchEnvActionTest(unittest.TestCase):

  def setUp(self):
    self.batch = BatchEnv([fake_envs.CountingEnv() for _ in range(3)])
    self.batch.reset(seeds=[0, 1, 2])

  def test_bad_action_shape_names_expected_shape(self):
    with self.assertRaises(errors.ActionError) as context:
      self.batch.step(np.zeros((3, 2), np.int64))
    self.assertIn('(3,)', str(context.exception))
    self.assertIn('(3, 2)', str(context.exception))
    with self.assertRaises(errors.ActionError):
      self.batch.step(np.zeros(2, np.int64))

  def test_out_of_bounds_discrete_action_names_environment(self):
    with self.assertRaises(errors.ActionError) as context:
      self.batch.step(np.array([0, 2, 3]))
    self.assertEqual(context.exception.index, 2)
    self.assertIn('environment 2', str(context.exception))

  def test_out_of_bounds_multi_discrete_action_names_environment(self):
    make = lambda: fake_envs.SpaceEnv(gymnasium.spaces.MultiDiscrete([2, 5], start=[1, -2]))
    batch = BatchEnv([make() for _ in range(3)])
    batch.reset()
    batch.step(np.array([[1, -2], [2, 2], [1, 0]]))
    for bad, index in [([[1, -2], [2, 3], [1, 0]], 1), ([[0, 0], [1, 0], [1, 0]], 0),
                       ([[1, 0], [1, 0], [3, 0]], 2)]:
      with self.assertRaises(errors.ActionError) as context:
        batch.step(np.array(bad))
      self.assertEqual(context.exception.index, index)

  def test_multi_binary_and_integer_box_actions(self):
    binary = BatchEnv([fake_envs.SpaceEnv(gymnasium.spaces.MultiBinary(3)) for _ in range(2)])
    binary.reset()
    binary.step(np.array([[0, 1, 1], [True, False, True]]))
    with self.assertRaises(errors.ActionError) as context:
      binary.step(np.array([[0, 1, 1], [0, 2, 0]]))
    self.assertEqual(context.exception.index, 1)
    box = BatchEnv([fake_envs.SpaceEnv(gymnasium.spaces.Box(-1, 1, (2,))) for _ in range(2)])
    box.reset()
    box.step(np.array([[0, 1], [-1, 0]]))  # Integers are finite and cast to the dtype.
    with self.assertRaises(errors.ActionError) as context:
      box.step(np.array([[0.0, 1.0], [-np.inf, 0.0]]))
    self.assertEqual(context.exception.index, 1)

  def test_float_action_for_discrete_space_is_rejected(self):
    with self.assertRaises(errors.ActionError):
      self.batch.step(np.array([0.0, 1.0, 2.0]))

  def test_non_finite_box_action_names_environment(self):
    batch = BatchEnv([fake_envs.DictObservationEnv() for _ in range(2)])
    batch.reset()
    with self.assertRaises(errors.ActionError) as context:
      batch.step(np.array([[0.0, 0.0], [np.nan, 0.0]], np.float32))
    self.assertEqual(context.exception.index, 1)


class BatchEnvProcessTest(unittest.TestCase):

  def test_parallel_stepping_matches_sequential(self):
    make = functools.partial(fake_envs.CountingEnv, length=4)
    expected = run_episodes(BatchEnv([make() for _ in range(6)]), 12, seed=5)
    for envs_per_process in [1, 2, 4]:
      with BatchEnv.from_constructors(make, 6, envs_per_process=envs_per_process) as batch:
        self.assertEqual(len(batch.workers), -(-6 // envs_per_process))
        outputs = run_episodes(batch, 12, seed=5)
      self.assertEqual(len(outputs), len(expected))
      for output, reference in zip(outputs, expected):
        np.testing.assert_array_equal(output, reference)

  def test_parallel_cartpole_matches_sequential(self):
    def run(batch):
      observs = [batch.reset(seeds=[1, 2, 3])[0]]
      for step in range(40):
        observ, reward, terminated, truncated, _ = batch.step(np.array([step % 2] * 3))
        observs.append(observ)
        done = np.flatnonzero(terminated | truncated)
        if len(done):
          observs.append(batch.reset(done, seeds=[step] * len(done))[0])
      return np.concatenate(observs)
    make = lambda: gymnasium.make('CartPole-v1')
    expected = run(BatchEnv([make() for _ in range(3)]))
    with BatchEnv.from_constructors(make, 3) as batch:
      np.testing.assert_array_equal(run(batch), expected)

  def test_two_batches_in_flight_at_once_match_plain_calls(self):
    """The evaluation runner's pattern: send to one batch, then the other, then collect."""
    make = functools.partial(gymnasium.make, 'CartPole-v1')
    for processes in (False, True):
      with BatchEnv.from_constructors(make, 3, processes=processes) as reference, \
          BatchEnv.from_constructors(make, 3, processes=processes) as first, \
          BatchEnv.from_constructors(make, 3, processes=processes) as second:
        expected, _ = reference.reset(seeds=[1, 2, 3])
        first.reset_async(seeds=[1, 2, 3])
        second.reset_async(seeds=[1, 2, 3])
        np.testing.assert_array_equal(first.reset_wait()[0], expected)
        np.testing.assert_array_equal(second.reset_wait()[0], expected)
        for actions in ([0, 1, 1], [1, 1, 0], [0, 0, 1]):
          want = reference.step(np.array(actions))
          first.step_async(np.array(actions))
          second.step_async(np.array(actions))
          for got in (first.step_wait(), second.step_wait()):
            for want_part, got_part in zip(want[:4], got[:4]):
              np.testing.assert_array_equal(want_part, got_part)
        expected, _ = reference.reset([2, 0], seeds=[7, 8])
        first.reset_async([2, 0], seeds=[7, 8])
        np.testing.assert_array_equal(first.reset_wait()[0], expected)
        first.reset_async([])
        self.assertEqual(len(first.reset_wait()[0]), 0)

  def test_async_calls_refuse_a_second_request_in_flight(self):
    with BatchEnv.from_constructors(
        functools.partial(gymnasium.make, 'CartPole-v1'), 2, processes=True) as batch:
      with self.assertRaisesRegex(RuntimeError, 'no step in flight'):
        batch.step_wait()
      with self.assertRaisesRegex(RuntimeError, 'no reset in flight'):
        batch.reset_wait()
      batch.reset_async(seeds=[1, 2])
      with self.assertRaisesRegex(RuntimeError, 'reset is already in flight'):
        batch.step_async(np.array([0, 1]))
      batch.reset_wait()
      batch.step_async(np.array([0, 1]))
      with self.assertRaisesRegex(RuntimeError, 'already in flight'):
        batch.step_async(np.array([0, 1]))
      with self.assertRaisesRegex(RuntimeError, 'in flight'):
        batch.reset()
      batch.step_wait()
      batch.reset(seeds=[3, 4])  # The batch works on once the step is collected.

  def test_slab_constructors_of_different_sizes(self):
    make_slab = lambda count: slab_lib.make_sync_slab([fake_envs.CountingEnv] * count)
    slab_constructors = [functools.partial(make_slab, 2), fake_envs.CountingEnv,
                         functools.partial(make_slab, 3)]
    expected = run_episodes(BatchEnv([fake_envs.CountingEnv() for _ in range(6)]), 8, seed=1)
    with BatchEnv.from_slab_constructors(slab_constructors) as batch:
      self.assertEqual(len(batch), 6)
      self.assertEqual([worker.index for worker in batch.workers], [0, 2, 3])
      outputs = run_episodes(batch, 8, seed=1)
    for output, reference in zip(outputs, expected):
      np.testing.assert_array_equal(output, reference)

  def test_nested_observations_are_batched(self):
    with BatchEnv.from_constructors(fake_envs.DictObservationEnv, 3, envs_per_process=2) as batch:
      observ, _ = batch.reset(seeds=[0, 1, 2])
      self.assertEqual(observ['position'].shape, (3, 2))
      observ, *_ = batch.step(np.zeros((3, 2), np.float32))
      np.testing.assert_array_equal(observ['count'], [1, 1, 1])

  def test_worker_exception_names_environment_and_batch_recovers(self):
    constructors = [fake_envs.CountingEnv,
                    functools.partial(fake_envs.FaultyEnv, 'raise', 2),
                    fake_envs.CountingEnv]
    with BatchEnv.from_constructors(constructors, 3) as batch:
      batch.reset(seeds=[0, 1, 2])
      batch.step(np.zeros(3, np.int64))
      with self.assertRaises(errors.WorkerError) as context:
        batch.step(np.zeros(3, np.int64))
      self.assertEqual(context.exception.index, 1)
      self.assertIn('boom at step 2', context.exception.remote_traceback)
      # Every other worker's reply was read, so the batch stays usable.
      observ, _ = batch.reset(seeds=[0, 1, 2])
      self.assertEqual(batch.step(np.zeros(3, np.int64))[0].shape, (3, 3))

  def test_sigkilled_worker_is_restarted_and_episode_truncated(self):
    make = functools.partial(fake_envs.CountingEnv, length=100)
    with BatchEnv.from_constructors(make, 3, max_restarts=1) as batch:
      batch.reset(seeds=[0, 1, 2])
      last_observ, *_ = batch.step(np.zeros(3, np.int64))
      victim = batch.workers[1].pid
      os.kill(victim, signal.SIGKILL)
      observ, reward, terminated, truncated, infos = batch.step(np.ones(3, np.int64))
      np.testing.assert_array_equal(truncated, [False, True, False])
      np.testing.assert_array_equal(terminated, [False, False, False])
      self.assertEqual(reward[1], 0.0)
      np.testing.assert_array_equal(observ[1], last_observ[1])
      np.testing.assert_array_equal(infos['worker_restarted'], [False, True, False])
      self.assertEqual(batch.num_restarts, 1)
      self.assertNotEqual(batch.workers[1].pid, victim)
      self.assertEqual(wait_until_gone([victim]), [])
      # The caller resets the truncated environment and goes on.
      batch.reset([1], seeds=[1])
      self.assertEqual(batch.step(np.ones(3, np.int64))[0].shape, (3, 3))
      # The restart budget is spent: the next death is an error.
      os.kill(batch.workers[0].pid, signal.SIGKILL)
      with self.assertRaises(errors.WorkerDiedError) as context:
        batch.step(np.ones(3, np.int64))
      self.assertEqual(context.exception.index, 0)

  def test_worker_that_dies_or_hangs_without_closing_its_pipe_is_restarted(self):
    # An orphaned child keeps the pipe open, or the worker hangs: neither shows up as the
    # pipe closing, so the liveness check and the timeout must find them.
    for fault in ['orphan', 'hang']:
      with self.subTest(fault=fault):
        constructors = [fake_envs.CountingEnv,
                        functools.partial(fake_envs.FaultyEnv, fault, 2),
                        functools.partial(fake_envs.FaultyEnv, 'slow', 2)]
        with BatchEnv.from_constructors(constructors, 3, max_restarts=1,
                                        timeout=1.0) as batch:
          batch.reset(seeds=[0, 1, 2])
          batch.step(np.zeros(3, np.int64))
          start = time.monotonic()
          _, _, _, truncated, infos = batch.step(np.zeros(3, np.int64))
          self.assertLess(time.monotonic() - start, fake_envs.ORPHAN_SECONDS - 1)
          np.testing.assert_array_equal(truncated, [False, True, False])
          np.testing.assert_array_equal(infos['worker_restarted'], [False, True, False])
          self.assertEqual(batch.num_restarts, 1)

  def test_worker_dying_during_reset_is_restarted(self):
    with BatchEnv.from_constructors(fake_envs.CountingEnv, 2, max_restarts=1) as batch:
      os.kill(batch.workers[0].pid, signal.SIGKILL)
      observ, _ = batch.reset(seeds=[5, 6])
      np.testing.assert_array_equal(observ[0], fake_envs.CountingEnv().reset(seed=5)[0])

  def test_non_finite_observation_names_field_and_environment(self):
    make_nan = lambda: _RejectNonFinite(fake_envs.FaultyEnv('nan', at_step=2))
    make_ok = lambda: _RejectNonFinite(fake_envs.CountingEnv(length=10))
    in_process = BatchEnv([make_ok(), make_nan()])
    in_process.reset(seeds=[0, 1])
    in_process.step(np.zeros(2, np.int64))
    with self.assertRaises(errors.NonFiniteError) as context:
      in_process.step(np.zeros(2, np.int64))
    self.assertEqual(context.exception.field, 'observation')
    self.assertEqual(context.exception.index, 1)
    self.assertEqual(context.exception.step, 2)
    self.assertIn('environment 1', str(context.exception))
    with BatchEnv.from_constructors([make_ok, make_nan], 2) as batch:
      batch.reset(seeds=[0, 1])
      batch.step(np.zeros(2, np.int64))
      with self.assertRaises(errors.WorkerError) as context:
        batch.step(np.zeros(2, np.int64))
      self.assertEqual(context.exception.index, 1)
      self.assertIsInstance(context.exception.__cause__, errors.NonFiniteError)
      self.assertIn('Non-finite observation', str(context.exception))


class _RejectNonFinite(gymnasium.Wrapper):
  """Raises `NonFiniteError` for a NaN or infinite observation (stands in for BatchEnv's check)."""

  def __init__(self, env):
    super().__init__(env)
    self._step = 0

  def step(self, action):
    observ, reward, terminated, truncated, info = self.env.step(action)
    self._step += 1
    if not np.isfinite(observ).all():
      raise errors.NonFiniteError('observation', None, self._step, 'non-finite entries')
    return observ, reward, terminated, truncated, info


def assert_infos_equal(test, infos, expected):
  """Asserts that two vector-format info dicts hold the same keys and values."""
  test.assertEqual(sorted(infos), sorted(expected))
  for key in expected:
    np.testing.assert_array_equal(infos[key], expected[key], err_msg=key)


class BatchEnvFastResetTest(unittest.TestCase):
  """Resets through the shared block: indices and seeds go in, observations come back."""

  def _counted_resets(self):
    """Patches the pickled reset request to count its uses."""
    calls = []
    original = wire.encode_request

    def counted(command, *args):
      if command == 'reset_batch':
        calls.append(args)
      return original(command, *args)

    patcher = mock.patch.object(wire, 'encode_request', counted)
    patcher.start()
    self.addCleanup(patcher.stop)
    return calls

  def test_seeded_subset_resets_match_in_process_batch(self):
    constructors = [functools.partial(fake_envs.make_counting, info=index % 3 == 0)
                    for index in range(6)]
    resets = [(None, list(range(6))), ([4, 1], [7, 8]), ([5, 0, 3], [21, None, 23]),
              ([2], None), ([3, 5, 1, 0], [1, 2, 3, 4]), (None, None), ([1, 4], [2**62, 0])]
    expected = BatchEnv([make() for make in constructors])
    expected_results = []
    for indices, seeds in resets:
      expected_results.append(expected.reset(indices, seeds))
      expected_results.append(expected.step(np.ones(6, np.int64)))
    calls = self._counted_resets()
    for envs_per_process in [1, 2, 4]:
      with self.subTest(envs_per_process=envs_per_process):
        with BatchEnv.from_constructors(constructors, 6,
                                        envs_per_process=envs_per_process) as batch:
          self.assertIsInstance(batch.members[0], worker_pool.WorkerPool)
          results = []
          for indices, seeds in resets:
            results.append(batch.reset(indices, seeds))
            results.append(batch.step(np.ones(6, np.int64)))
        self.assertEqual(calls, [])  # Every reset took the shared-memory path.
        for result, reference in zip(results, expected_results):
          for value, expected_value in zip(result[:-1], reference[:-1]):
            np.testing.assert_array_equal(value, expected_value)
          assert_infos_equal(self, result[-1], reference[-1])

  def test_native_slab_with_reset_infos(self):
    make_slab = lambda: slab_lib.make_sync_slab(
        [functools.partial(fake_envs.make_counting, info=True)] * 3)
    expected = BatchEnv([make_slab(), make_slab()])
    with BatchEnv.from_slab_constructors([make_slab, make_slab]) as batch:
      for indices, seeds in [(None, [1, 2, 3, 4, 5, 6]), ([5, 2, 0], [9, None, 11]),
                             ([4], [3])]:
        observ, infos = batch.reset(indices, seeds)
        expected_observ, expected_infos = expected.reset(indices, seeds)
        np.testing.assert_array_equal(observ, expected_observ)
        assert_infos_equal(self, infos, expected_infos)
        self.assertIn('steps', infos)

  def test_seeds_beyond_int64_take_the_pickled_path(self):
    calls = self._counted_resets()
    with BatchEnv.from_constructors(fake_envs.CountingEnv, 2) as batch:
      observ, _ = batch.reset([1], seeds=[2**70])
    self.assertEqual(len(calls), 1)
    np.testing.assert_array_equal(observ[0], fake_envs.CountingEnv().reset(seed=2**70)[0])

  def test_exception_in_reset_names_environment_and_batch_recovers(self):
    make_faulty = functools.partial(fake_envs.ResetFaultyEnv, 'raise', seed=13)
    for envs_per_process in [1, 2]:
      with self.subTest(envs_per_process=envs_per_process):
        constructors = [fake_envs.CountingEnv] * 3 + [make_faulty]
        with BatchEnv.from_constructors(constructors, 4,
                                        envs_per_process=envs_per_process) as batch:
          batch.reset(seeds=[0, 1, 2, 3])
          with self.assertRaises(errors.WorkerError) as context:
            batch.reset([3, 0], seeds=[13, 5])
          self.assertEqual(context.exception.index, 3 if envs_per_process == 1 else 2)
          self.assertIn('boom in reset with seed 13', context.exception.remote_traceback)
          self.assertIn('Traceback', context.exception.remote_traceback)
          observ, _ = batch.reset([3, 0], seeds=[4, 5])
          np.testing.assert_array_equal(observ[0], fake_envs.CountingEnv().reset(seed=4)[0])
          np.testing.assert_array_equal(observ[1], fake_envs.CountingEnv().reset(seed=5)[0])
          self.assertEqual(batch.step(np.zeros(4, np.int64))[0].shape, (4, 3))

  def test_worker_dying_inside_reset_is_restarted(self):
    for envs_per_process, shared in itertools.product([1, 2], [True, False]):
      with self.subTest(envs_per_process=envs_per_process, shared_memory=shared):
        with tempfile.TemporaryDirectory() as directory:
          marker = os.path.join(directory, 'die')
          constructors = [fake_envs.CountingEnv, fake_envs.CountingEnv,
                          functools.partial(fake_envs.ResetFaultyEnv, 'exit', marker=marker),
                          fake_envs.CountingEnv]
          with BatchEnv.from_constructors(constructors, 4, max_restarts=1,
                                          envs_per_process=envs_per_process,
                                          use_shared_memory=shared) as batch:
            batch.reset(seeds=[0, 1, 2, 3])
            victim = batch.workers[2 // envs_per_process].pid
            open(marker, 'w').close()
            observ, _ = batch.reset([2, 0], seeds=[6, 7])
            self.assertFalse(os.path.exists(marker))
            self.assertEqual(batch.num_restarts, 1)
            self.assertNotEqual(batch.workers[2 // envs_per_process].pid, victim)
            for row, seed in enumerate([6, 7]):
              np.testing.assert_array_equal(
                  observ[row], fake_envs.CountingEnv().reset(seed=seed)[0])
            # With slabs of 2, environment 3 lost its episode with the worker: its next
            # step reports it as truncated; the environments reset by the caller go on.
            observ, _, terminated, truncated, infos = batch.step(np.zeros(4, np.int64))
            self.assertEqual(observ.shape, (4, 3))
            lost = [False, False, False, envs_per_process == 2]
            np.testing.assert_array_equal(truncated, lost)
            self.assertFalse(terminated.any())
            if envs_per_process == 2:
              np.testing.assert_array_equal(infos['worker_restarted'], lost)
            self.assertFalse(batch.step(np.zeros(4, np.int64))[3].any())
            # The budget is spent: the next death in a reset is an error naming the worker.
            open(marker, 'w').close()
            with self.assertRaises(errors.WorkerDiedError) as context:
              batch.reset([2], seeds=[1])
            self.assertEqual(context.exception.index, 2)

  def test_reset_observations_are_kept_for_an_interrupted_step(self):
    with BatchEnv.from_constructors(fake_envs.CountingEnv, 3, max_restarts=1) as batch:
      batch.reset(seeds=[0, 1, 2])
      batch.step(np.zeros(3, np.int64))
      reset_observ, _ = batch.reset([1], seeds=[9])
      os.kill(batch.workers[1].pid, signal.SIGKILL)
      observ, _, _, truncated, _ = batch.step(np.zeros(3, np.int64))
      np.testing.assert_array_equal(truncated, [False, True, False])
      np.testing.assert_array_equal(observ[1], reset_observ[0])


class BatchEnvCleanupTest(unittest.TestCase):

  def test_no_orphans_after_close(self):
    batch = BatchEnv.from_constructors(fake_envs.CountingEnv, 4, envs_per_process=2)
    pids = [worker.pid for worker in batch.workers]
    batch.close()
    batch.close()
    self.assertEqual(wait_until_gone(pids), [])

  def test_no_orphans_after_exception(self):
    pids = []
    with self.assertRaises(RuntimeError):
      with BatchEnv.from_constructors(fake_envs.CountingEnv, 2) as batch:
        pids = [worker.pid for worker in batch.workers]
        raise RuntimeError('training crashed')
    self.assertEqual(len(pids), 2)
    self.assertEqual(wait_until_gone(pids), [])

  def test_no_orphans_after_parent_is_interrupted_or_killed(self):
    # The child never closes the batch: cleanup must come from the signal itself.
    script = textwrap.dedent('''
        import signal, sys, time
        import numpy as np
        from agents.tools.batch_env import BatchEnv
        from tests.helpers import fake_envs
        # As in a terminal, even when the tests run in the background (SIGINT ignored).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        batch = BatchEnv.from_constructors(fake_envs.CountingEnv, 3, envs_per_process=1)
        batch.reset()
        print(' '.join(str(worker.pid) for worker in batch.workers), flush=True)
        while True:
          _, _, terminated, truncated, _ = batch.step(np.zeros(3, np.int64))
          done = np.flatnonzero(terminated | truncated)
          if len(done):
            batch.reset(done)
          time.sleep(0.001)
    ''')
    for parent_signal in [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]:
      with self.subTest(signal=parent_signal.name):
        child = subprocess.Popen([sys.executable, '-c', script], cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
          line = child.stdout.readline()
          pids = [int(pid) for pid in line.split()]
          self.assertEqual(len(pids), 3, child.stderr.read() if not line else line)
          self.assertTrue(all(pid_exists(pid) for pid in pids))
          child.send_signal(parent_signal)
          child.wait(timeout=30)
          self.assertEqual(wait_until_gone(pids), [])
        finally:
          if child.poll() is None:
            child.kill()
            child.wait()
          child.stdout.close()
          child.stderr.close()


if __name__ == '__main__':
  unittest.main()
