"""Tests of agents/tools/wrappers.py: forwarding, promises, faults, cleanup."""

import functools
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

from agents.tools import errors, wrappers
from agents.tools import slab as slab_lib
from agents.tools.transport import waiter
from agents.tools.wrappers import ExternalProcess
from tests.helpers import fake_envs
from tests.helpers.processes import ROOT, pid_exists


class ExternalProcessTest(unittest.TestCase):

  def setUp(self):
    self._processes = []

  def tearDown(self):
    for process in self._processes:
      process.close()

  def start(self, constructor, **kwargs):
    process = ExternalProcess(constructor, **kwargs)
    self._processes.append(process)
    return process

  def test_step_and_reset_match_an_in_process_environment(self):
    remote = self.start(lambda: gymnasium.make('CartPole-v1'))
    local = gymnasium.make('CartPole-v1')
    remote_observ, _ = remote.reset(seed=7)
    local_observ, _ = local.reset(seed=7)
    np.testing.assert_array_equal(remote_observ, local_observ)
    for action in [0, 1, 1, 0, 1]:
      remote_result = remote.step(action)
      local_result = local.step(action)
      np.testing.assert_array_equal(remote_result[0], local_result[0])
      self.assertEqual(remote_result[1:4], local_result[1:4])

  def test_promises_resolved_out_of_order_get_their_own_replies(self):
    remote = self.start(fake_envs.CountingEnv)
    local = fake_envs.CountingEnv()
    reset_promise = remote.reset(seed=3, blocking=False)
    promises = [remote.step(action, blocking=False) for action in [0, 1, 2, 1]]
    expected_reset = local.reset(seed=3)[0]
    expected = [local.step(action) for action in [0, 1, 2, 1]]
    for position in [3, 0, 2, 1]:
      observ, reward, terminated, _, _ = promises[position]()
      np.testing.assert_array_equal(observ, expected[position][0])
      self.assertAlmostEqual(reward, expected[position][1], places=5)
      self.assertEqual(terminated, expected[position][2])
    np.testing.assert_array_equal(reset_promise()[0], expected_reset)
    with self.assertRaises(ValueError):
      promises[0]()  # Resolved already.

  def test_exception_of_a_reply_read_out_of_order_reaches_its_own_promise(self):
    # Converting the first reply fails while the second promise is being resolved:
    # the second must get its result, the first its exception.
    remote = self.start(functools.partial(
        slab_lib.make_sync_slab, [functools.partial(fake_envs.make_counting, info=True)] * 2))
    remote.reset_batch(None, [1, 2])
    first = remote.step_batch(np.array([0, 1]), blocking=False)
    second = remote.step_batch(np.array([1, 1]), blocking=False)
    original = slab_lib.vector_infos
    calls = []

    def failing_once(*args):
      calls.append(args)
      if len(calls) == 1:
        raise KeyError('broken info of the first step')
      return original(*args)

    with mock.patch.object(slab_lib, 'vector_infos', failing_once):
      observ, _, _, _, infos = second()
      self.assertEqual(observ.shape, (2, 3))
      np.testing.assert_array_equal(infos['steps'], [2, 2])
      with self.assertRaises(KeyError) as context:
        first()
    self.assertIn('broken info of the first step', str(context.exception))

  def test_closure_constructor_and_attribute_access(self):
    length = 17
    remote = self.start(lambda: fake_envs.CountingEnv(length=length))
    self.assertEqual(remote.length, 17)
    self.assertEqual(remote.call('double', 21), 42)
    remote.set_attribute('length', 4)
    self.assertEqual(remote.length, 4)
    self.assertEqual(remote.observation_space, fake_envs.CountingEnv().observation_space)
    with self.assertRaises(AttributeError):
      remote.no_such_attribute  # noqa: B018 - the access itself is the test.
    self.assertFalse(hasattr(remote, 'no_such_attribute'))

  def test_a_misspelt_attribute_is_refused_here_without_asking_the_worker(self):
    remote = self.start(fake_envs.CountingEnv)
    with mock.patch.object(remote, '_request', wraps=remote._request) as request:
      with self.assertRaisesRegex(AttributeError, r"environment 0 has no attribute 'lenght'"):
        remote.lenght  # noqa: B018 - the access itself is the test.
      request.assert_not_called()
      self.assertEqual(remote.length, fake_envs.CountingEnv().length)
      request.assert_called_once()
    remote.set_attribute('added_later', 3)
    self.assertEqual(remote.added_later, 3)

  def test_exception_carries_traceback_and_index(self):
    remote = self.start(functools.partial(fake_envs.FaultyEnv, 'raise', 2), index=5)
    remote.reset(seed=0)
    remote.step(0)
    with self.assertRaises(errors.WorkerError) as context:
      remote.step(0)
    error = context.exception
    self.assertEqual(error.index, 5)
    self.assertEqual(error.remote_type, 'ValueError')
    self.assertIn('boom at step 2', error.remote_traceback)
    self.assertIn('fake_envs.py', error.remote_traceback)
    self.assertIn('Environment 5', str(error))
    self.assertIsInstance(error.__cause__, ValueError)
    # The worker survives its environment's exception and keeps serving.
    self.assertTrue(remote.is_alive())
    self.assertEqual(remote.call('double', 1), 2)

  def test_traceback_of_code_shipped_by_value_shows_the_users_file_and_line(self):
    # A class defined in a function is shipped by value, as a user's script's classes are.
    class RaisingEnv(fake_envs.CountingEnv):
      def step(self, action):
        raise ValueError('raised by the user code')  # the line the traceback must show
    remote = self.start(RaisingEnv)
    remote.reset(seed=0)
    with self.assertRaises(errors.WorkerError) as context:
      remote.step(0)
    traceback_text = context.exception.remote_traceback
    self.assertIn(f'File "{os.path.abspath(__file__)}"', traceback_text)
    self.assertIn("raise ValueError('raised by the user code')", traceback_text)
    self.assertNotIn('<dynamic-code>', traceback_text)

  def test_constructor_exception_is_reported_and_leaves_no_process(self):
    def constructor():
      raise RuntimeError('cannot build')
    with self.assertRaises(errors.WorkerError) as context:
      ExternalProcess(constructor, index=2)
    self.assertIn('cannot build', context.exception.remote_traceback)
    self.assertEqual(context.exception.index, 2)

  def test_sigkilled_worker_is_reported_with_index(self):
    remote = self.start(fake_envs.CountingEnv, index=3)
    remote.reset(seed=0)
    pid = remote.pid
    os.kill(pid, signal.SIGKILL)
    with self.assertRaises(errors.WorkerDiedError) as context:
      remote.step(1)
    self.assertEqual(context.exception.index, 3)
    self.assertEqual(context.exception.exitcode, -signal.SIGKILL)
    # Later requests fail the same way instead of waiting.
    with self.assertRaises(errors.WorkerDiedError):
      remote.reset()
    remote.restart()
    self.assertNotEqual(remote.pid, pid)
    remote.reset(seed=0)
    self.assertEqual(remote.step(1)[0].shape, (3,))

  def test_worker_dying_inside_step_is_reported(self):
    for fault, exitcode in [('sigkill', -signal.SIGKILL), ('exit', 3)]:
      remote = self.start(functools.partial(fake_envs.FaultyEnv, fault, 1), index=1)
      remote.reset(seed=0)
      with self.assertRaises(errors.WorkerDiedError) as context:
        remote.step(0)
      self.assertEqual(context.exception.exitcode, exitcode)
      self.assertIn('Environment 1', str(context.exception))

  def test_hung_worker_times_out_and_is_killed(self):
    remote = self.start(functools.partial(fake_envs.FaultyEnv, 'hang', 1), timeout=0.5)
    remote.reset(seed=0)
    with self.assertRaises(errors.WorkerTimeoutError):
      remote.step(0)
    self.assertFalse(remote.is_alive())

  def test_messages_larger_than_the_pipe_buffer(self):
    remote = self.start(fake_envs.CountingEnv)
    values = np.arange(1_000_000, dtype=np.float64)  # 8 MB each way.
    np.testing.assert_array_equal(remote.call('double', values), 2 * values)
    # Two large requests in flight, then their replies in the opposite order.
    promises = [remote.reset(options={'ignored': values}, blocking=False) for _ in range(2)]
    self.assertEqual(promises[1]()[0].shape, (3,))
    self.assertEqual(promises[0]()[0].shape, (3,))

  def test_wait_all_reads_every_reply_and_reports_each_fault(self):
    faults = ['slow', None, 'raise', 'sigkill', 'orphan']
    workers = [self.start(functools.partial(fake_envs.FaultyEnv, fault, 1), index=index)
               for index, fault in enumerate(faults)]
    for worker in workers:
      worker.reset(seed=0)
    # A request queued before the fast step keeps its own reply.
    pending = workers[1].reset(seed=4, blocking=False)
    tokens = [worker.begin_fast_step() for worker in workers]
    start = time.monotonic()
    results = wrappers.wait_all(workers, tokens)
    self.assertLess(time.monotonic() - start, fake_envs.ORPHAN_SECONDS - 1)
    self.assertEqual([ok for ok, _ in results], [True, True, False, False, False])
    self.assertEqual(results[0][1], {})
    error = results[2][1]
    self.assertNotIsInstance(error, errors.WorkerDiedError)
    self.assertIsInstance(error, errors.WorkerError)
    self.assertEqual(error.index, 2)
    self.assertIn('boom at step 1', error.remote_traceback)
    for index, exitcode in [(3, -signal.SIGKILL), (4, 3)]:
      self.assertIsInstance(results[index][1], errors.WorkerDiedError)
      self.assertEqual(results[index][1].index, index)
      self.assertEqual(results[index][1].exitcode, exitcode)
    np.testing.assert_array_equal(
        pending()[0], fake_envs.CountingEnv().reset(seed=4)[0])
    # The surviving workers go on serving.
    for worker in workers[:3]:
      self.assertEqual(worker.connection.resolve(worker.begin_fast_step()), {})

  def test_reply_waiter_serves_again_after_a_death_a_restart_and_a_queued_reply(self):
    workers = [self.start(fake_envs.CountingEnv),
               self.start(functools.partial(fake_envs.FaultyEnv, 'sigkill', 2), index=1),
               self.start(functools.partial(fake_envs.FaultyEnv, 'slow', 3), index=2)]
    for worker in workers:
      worker.reset(seed=0)
    reply_waiter = waiter.ReplyWaiter()

    def step_all():
      return reply_waiter.wait([worker.connection for worker in workers],
                               [worker.begin_fast_step() for worker in workers])

    self.assertEqual(step_all(), [(True, {})] * 3)
    results = step_all()  # Step 2: worker 1 dies.
    self.assertEqual([ok for ok, _ in results], [True, False, True])
    self.assertIsInstance(results[1][1], errors.WorkerDiedError)
    workers[1].restart()
    workers[1].reset(seed=0)
    # A reply queued ahead of the step's is read without polling; its promise keeps it.
    pending = workers[0].reset(seed=4, blocking=False)
    self.assertEqual(step_all(), [(True, {})] * 3)  # Step 3: worker 2 is slow.
    np.testing.assert_array_equal(pending()[0], fake_envs.CountingEnv().reset(seed=4)[0])
    # The restarted worker dies at its own second step; the rebuilt poll set sees that.
    self.assertEqual([ok for ok, _ in step_all()], [True, False, True])

  def test_wait_all_times_out_a_hung_worker(self):
    workers = [self.start(fake_envs.CountingEnv),
               self.start(functools.partial(fake_envs.FaultyEnv, 'hang', 1), index=1,
                          timeout=0.5)]
    for worker in workers:
      worker.reset(seed=0)
    tokens = [worker.begin_fast_step() for worker in workers]
    start = time.monotonic()
    results = wrappers.wait_all(workers, tokens)
    self.assertLess(time.monotonic() - start, 5.0)
    self.assertEqual(results[0], (True, {}))
    self.assertIsInstance(results[1][1], errors.WorkerTimeoutError)
    self.assertFalse(workers[1].is_alive())

  def test_close_is_idempotent_and_ends_the_process(self):
    remote = self.start(fake_envs.CountingEnv)
    pid = remote.pid
    remote.close()
    remote.close()
    self.assertFalse(pid_exists(pid))
    with self.assertRaises(errors.ClosedError):
      remote.step(0)

  def test_slab_of_several_environments(self):
    constructors = [fake_envs.CountingEnv] * 3
    remote = self.start(functools.partial(slab_lib.make_sync_slab, constructors))
    self.assertEqual(remote.num_envs, 3)
    self.assertTrue(remote.is_vector)
    local = slab_lib.make_sync_slab(constructors)
    np.testing.assert_array_equal(remote.reset(seed=[1, 2, 3])[0], local.reset(seed=[1, 2, 3])[0])
    actions = np.array([0, 1, 2])
    remote_result = remote.step_batch(actions)
    local_result = local.step(actions)
    for remote_value, local_value in zip(remote_result[:4], local_result[:4]):
      np.testing.assert_allclose(remote_value, local_value, rtol=1e-6)

  def test_reset_batch_through_shared_memory_matches_in_process_slab(self):
    make_env = functools.partial(fake_envs.make_counting, info=True)
    make = functools.partial(slab_lib.make_sync_slab, [make_env] * 4)
    remotes = [self.start(make), self.start(make, use_shared_memory=False)]
    self.assertTrue(remotes[0].supports_fast_step)
    self.assertFalse(remotes[1].supports_fast_step)
    local = slab_lib.Slab(make())
    for indices, seeds in [(None, [1, 2, 3, 4]), ([3, 1], [5, None]), ([2], None),
                           ([0, 3, 2], [2**40, 7, 0])]:
      expected_observ, expected_infos = local.reset(indices, seeds)
      for remote in remotes:
        promise = remote.reset_batch(indices, seeds, blocking=False)
        observ, infos = promise()
        np.testing.assert_array_equal(observ, expected_observ)
        self.assertEqual(sorted(infos), sorted(expected_infos))
        for key in expected_infos:
          np.testing.assert_array_equal(infos[key], expected_infos[key])
      # Steps after a reset still go through shared memory and agree.
      actions = np.array([0, 1, 2, 1])
      expected_step = local.step(actions)
      for remote in remotes:
        np.testing.assert_array_equal(remote.step_batch(actions)[0], expected_step[0])
    with self.assertRaises(errors.WorkerError) as context:
      remotes[0].reset_batch([4])
    self.assertIn('IndexError', context.exception.remote_traceback)

  def test_reset_batch_of_single_environment_reports_errors_with_traceback(self):
    remote = self.start(functools.partial(fake_envs.ResetFaultyEnv, 'raise', seed=13), index=5)
    self.assertTrue(remote.supports_fast_step)
    observ, infos = remote.reset_batch([0], [3])
    np.testing.assert_array_equal(observ, fake_envs.CountingEnv().reset(seed=3)[0][None])
    self.assertEqual(infos, {})
    with self.assertRaises(errors.WorkerError) as context:
      remote.reset_batch([0], [13])
    self.assertEqual(context.exception.index, 5)
    self.assertIn('boom in reset with seed 13', context.exception.remote_traceback)
    with self.assertRaises(errors.WorkerError):
      remote.reset_batch([1])
    np.testing.assert_array_equal(
        remote.reset_batch(None, [4])[0], fake_envs.CountingEnv().reset(seed=4)[0][None])

  def test_nested_observations_travel_without_shared_memory(self):
    remote = self.start(fake_envs.DictObservationEnv)
    local = fake_envs.DictObservationEnv()
    np.testing.assert_array_equal(
        remote.reset(seed=4)[0]['position'], local.reset(seed=4)[0]['position'])
    action = np.array([0.5, -0.25], np.float32)
    observ = remote.step(action)[0]
    expected = local.step(action)[0]
    np.testing.assert_array_equal(observ['position'], expected['position'])
    self.assertEqual(observ['count'], 1)

  def test_shared_memory_can_be_disabled(self):
    remote = self.start(fake_envs.CountingEnv, use_shared_memory=False)
    local = fake_envs.CountingEnv()
    np.testing.assert_array_equal(remote.reset(seed=1)[0], local.reset(seed=1)[0])
    np.testing.assert_array_equal(remote.step(2)[0], local.step(2)[0])

  def test_requests_before_wait_ready_wait_for_the_environment(self):
    remote = self.start(fake_envs.CountingEnv, wait=False)
    observ, _ = remote.reset(seed=2)
    np.testing.assert_array_equal(observ, fake_envs.CountingEnv().reset(seed=2)[0])

  def test_workers_do_not_rerun_the_parent_main_script(self):
    # A script without a main guard, defining its environment itself: the worker must
    # build it (cloudpickle ships it by value) without executing the script again.
    with tempfile.TemporaryDirectory() as directory:
      marker = os.path.join(directory, 'runs.txt')
      script = os.path.join(directory, 'script.py')
      with open(script, 'w') as file:
        file.write(textwrap.dedent(f'''
            import gymnasium
            from agents.tools.wrappers import ExternalProcess
            with open({marker!r}, 'a') as marker:
              marker.write('ran\\n')
            class LocalEnv(gymnasium.Env):
              observation_space = gymnasium.spaces.Discrete(2)
              action_space = gymnasium.spaces.Discrete(2)
              def reset(self, *, seed=None, options=None):
                return 1, {{}}
            with ExternalProcess(LocalEnv) as remote:
              print(remote.reset()[0])
        '''))
      environment = dict(os.environ, PYTHONPATH=ROOT)
      output = subprocess.run([sys.executable, script], capture_output=True, text=True,
                              timeout=120, env=environment)
      self.assertEqual(output.returncode, 0, output.stderr)
      self.assertEqual(output.stdout.strip(), '1')
      with open(marker) as file:
        self.assertEqual(file.read().split(), ['ran'])

  def test_fork_is_refused(self):
    with self.assertRaises(ValueError):
      ExternalProcess(fake_envs.CountingEnv, context='fork')


if __name__ == '__main__':
  unittest.main()
