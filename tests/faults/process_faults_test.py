"""Fault injection into the environment transport (issue 10, items 1, 6, 7, 8 and 9).

- A parent killed (SIGKILL, SIGTERM) while a worker is busy inside `env.step`
  leaves no process (worker, forkserver, resource tracker) and no /dev/shm block.
- NaN and infinity from an environment raise `NonFiniteError` naming the
  environment and the field, unless `check_finite=False`.
- Box actions outside the bounds raise `ActionError` naming the environment, the
  component and the bound.
- The balloon slab example of docs/parallel.md builds in workers as written, and ids the
  parent registered resolve in workers.
- A worker that dies while a process it forked holds its pipe is noticed at once.
"""

import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import unittest

import gymnasium
import numpy as np

from agents.tools import errors, wrappers
from agents.tools.batch_env import BatchEnv
from tests.helpers import fake_envs
from tests.helpers.processes import ROOT, pid_exists

# The parent process: builds a batch whose second worker misbehaves in its first step,
# reports its processes and shared-memory blocks, then steps (and so blocks forever).
_PARENT = textwrap.dedent('''
    import functools, glob, json, os, sys
    import numpy as np
    from agents.tools.batch_env import BatchEnv
    from tests.helpers import fake_envs
    batch = BatchEnv.from_constructors(
        [fake_envs.CountingEnv, functools.partial(fake_envs.FaultyEnv, sys.argv[1], 1)], 2)
    batch.reset(seeds=[0, 1])
    children = []
    for task in glob.glob(f'/proc/{os.getpid()}/task/*/children'):
      with open(task) as file:
        children += [int(pid) for pid in file.read().split()]
    with open(f'/proc/{os.getpid()}/maps') as file:
      blocks = sorted({line.split()[-1] for line in file if '/dev/shm/' in line})
    print(json.dumps({'workers': [worker.pid for worker in batch.workers],
                      'helpers': children, 'blocks': blocks}), flush=True)
    batch.step(np.zeros(2, np.int64))
''')


def _wait_until_gone(pids, paths, seconds):
  """Returns the pids and paths still there after waiting up to `seconds`."""
  deadline = time.monotonic() + seconds
  while True:
    alive = [pid for pid in pids if pid_exists(pid) and not _is_zombie(pid)]
    left = [path for path in paths if os.path.exists(path)]
    if not (alive or left) or time.monotonic() > deadline:
      return alive, left
    time.sleep(0.05)


def _is_zombie(pid):
  try:
    with open(f'/proc/{pid}/stat') as stat:
      return stat.read().rsplit(')', 1)[1].split()[0] == 'Z'
  except OSError:
    return False


class KilledParentTest(unittest.TestCase):
  """Issue 10, item 1: no orphans and no leaked shared memory, in any worker state."""

  def test_nothing_outlives_a_parent_killed_while_a_worker_is_busy(self):
    for fault in ['hang', 'spin']:
      for parent_signal in [signal.SIGKILL, signal.SIGTERM]:
        with self.subTest(fault=fault, signal=parent_signal.name):
          self._kill_parent_while_busy(fault, parent_signal)

  def _kill_parent_while_busy(self, fault, parent_signal):
    parent = subprocess.Popen([sys.executable, '-c', _PARENT, fault], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=ROOT))
    pids, paths = [], []
    try:
      line = parent.stdout.readline()
      self.assertTrue(line, parent.stderr.read() if not line else '')
      report = json.loads(line)
      pids = report['workers'] + report['helpers']
      paths = report['blocks']
      self.assertEqual(len(report['workers']), 2)
      self.assertGreaterEqual(len(report['helpers']), 2)  # Forkserver, resource tracker.
      self.assertTrue(paths)
      time.sleep(0.3)  # The second worker is inside its step now.
      parent.send_signal(parent_signal)
      parent.wait(timeout=30)
      alive, left = _wait_until_gone(pids, paths, seconds=10.0)
      self.assertEqual(alive, [], f'processes outlived the parent ({fault})')
      self.assertEqual(left, [], f'shared memory outlived the parent ({fault})')
    finally:
      if parent.poll() is None:
        parent.kill()
        parent.wait()
      for pid in pids:  # Never leave orphans behind, even when the test fails.
        if pid_exists(pid):
          os.kill(pid, signal.SIGKILL)
      for path in paths:
        if os.path.exists(path):
          os.unlink(path)
      parent.stdout.close()
      parent.stderr.close()


class NonFiniteTest(unittest.TestCase):
  """Issue 10, item 6: NaN and inf are refused at the batch boundary."""

  def test_nan_observation_and_infinite_reward_name_environment_and_field(self):
    for fault, field in [('nan', 'observation'), ('inf_reward', 'reward')]:
      for processes, per_process in [(False, 1), (True, 1), (True, 2)]:
        with self.subTest(fault=fault, processes=processes, envs_per_process=per_process):
          constructors = [fake_envs.CountingEnv] * 2 + [
              functools.partial(fake_envs.FaultyEnv, fault, 2), fake_envs.CountingEnv]
          with BatchEnv.from_constructors(constructors, 4, processes=processes,
                                          envs_per_process=per_process) as batch:
            batch.reset(seeds=[0, 1, 2, 3])
            batch.step(np.zeros(4, np.int64))
            with self.assertRaises(errors.NonFiniteError) as context:
              batch.step(np.zeros(4, np.int64))
            self.assertEqual(context.exception.field, field)
            self.assertEqual(context.exception.index, 2)
            self.assertIn(f'Non-finite {field} from environment 2', str(context.exception))
            # The batch stays usable: reset the environment and go on.
            batch.reset([2], seeds=[5])
            self.assertEqual(batch.step(np.zeros(4, np.int64))[0].shape, (4, 3))

  def test_check_can_be_turned_off(self):
    constructors = [fake_envs.CountingEnv, functools.partial(fake_envs.FaultyEnv, 'nan', 1)]
    with BatchEnv.from_constructors(constructors, 2, check_finite=False) as batch:
      batch.reset(seeds=[0, 1])
      observ = batch.step(np.zeros(2, np.int64))[0]
    self.assertTrue(np.isnan(observ[1, 1]))

  def test_nan_in_a_reset_observation_is_refused(self):
    with BatchEnv.from_constructors(NanResetEnv, 2) as batch:
      with self.assertRaises(errors.NonFiniteError) as context:
        batch.reset(seeds=[0, 1])
    self.assertEqual(context.exception.index, 0)
    self.assertEqual(context.exception.field, 'observation')


class NanResetEnv(fake_envs.CountingEnv):
  """CountingEnv whose reset returns NaN in its last observation component."""

  def reset(self, *, seed=None, options=None):
    observ, info = super().reset(seed=seed, options=options)
    observ[2] = np.nan
    return observ, info


class BoxBoundsTest(unittest.TestCase):
  """Issue 10, item 7: Box actions beyond the bounds raise ActionError."""

  def test_pendulum_action_beyond_bounds_names_environment_component_and_bound(self):
    with BatchEnv.from_constructors(lambda: gymnasium.make('Pendulum-v1'), 2) as batch:
      batch.reset(seeds=[0, 1])
      with self.assertRaises(errors.ActionError) as context:
        batch.step([[5.], [0.]])
      self.assertEqual(context.exception.index, 0)
      message = str(context.exception)
      self.assertIn('environment 0', message)
      self.assertIn('component 0', message)
      self.assertIn('upper bound 2.0', message)
      with self.assertRaises(errors.ActionError) as context:
        batch.step(np.array([[0.], [-2.5]], np.float32))
      self.assertEqual(context.exception.index, 1)
      self.assertIn('lower bound -2.0', str(context.exception))
      # The bounds themselves, and float64 actions within them, are accepted.
      batch.step(np.array([[2.], [-2.]], np.float32))
      batch.step([[1.5], [-0.25]])

  def test_actions_clipped_in_float32_pass_a_float64_space(self):
    # PPO clips in float32; float32(0.1) is above float64 0.1, but is the bound itself.
    space = gymnasium.spaces.Box(-0.1, 0.1, (2,), np.float64)
    batch = BatchEnv([fake_envs.SpaceEnv(space) for _ in range(2)])
    batch.reset()
    clipped = np.clip(np.array([[5., -5.], [0.05, 9.]], np.float32), np.float32(-0.1),
                      np.float32(0.1))
    batch.step(clipped)
    with self.assertRaises(errors.ActionError):
      batch.step(np.array([[0.1, 0.], [0., 0.1000001]]))

  def test_multi_dimensional_box_names_the_component(self):
    space = gymnasium.spaces.Box(low=np.array([[-1, 0], [-np.inf, 0]]),
                                 high=np.array([[1, 1], [np.inf, 3]]), dtype=np.float64)
    batch = BatchEnv([fake_envs.SpaceEnv(space) for _ in range(2)])
    batch.reset()
    batch.step(np.array([[[0, 0], [-1e9, 3]], [[1, 1], [1e9, 0]]]))  # Unbounded: any value.
    with self.assertRaises(errors.ActionError) as context:
      batch.step(np.array([[[0, 0], [0, 0]], [[0, 0], [0, 3.5]]]))
    self.assertEqual(context.exception.index, 1)
    self.assertIn('component (1, 1)', str(context.exception))
    self.assertIn('upper bound 3.0', str(context.exception))


class RegistryInWorkersTest(unittest.TestCase):
  """Issue 10, item 8: ids resolve in workers as they do in the parent."""

  def test_readme_balloon_slab_example_runs_as_written(self):
    # A fresh interpreter that never imports agents.env, exactly as docs/parallel.md shows.
    script = textwrap.dedent('''
        import sys
        import gymnasium
        from agents.tools.batch_env import BatchEnv
        batch = BatchEnv.from_slab_constructors(
            [lambda: gymnasium.make_vec('BalloonLearningEnvironment-v0', num_envs=4)])
        print(len(batch), batch.observation_space.shape, 'agents.env' in sys.modules)
        batch.close()
    ''')
    output = subprocess.run([sys.executable, '-c', script], cwd=ROOT, capture_output=True,
                            text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    self.assertEqual(output.returncode, 0, output.stderr[-3000:])
    self.assertEqual(output.stdout.split(), ['4', '(1099,)', 'False'])

  def test_id_registered_by_the_parent_resolves_in_workers(self):
    env_id = 'ProcessFaultsCounting-v0'
    gymnasium.register(env_id, entry_point='tests.helpers.fake_envs:CountingEnv',
                       kwargs={'length': 7})
    self.addCleanup(gymnasium.registry.pop, env_id)
    with BatchEnv.from_constructors(lambda: gymnasium.make(env_id), 2) as batch:
      self.assertEqual(batch.workers[0].spec.id, env_id)
      observ, _ = batch.reset(seeds=[3, 4])
    np.testing.assert_array_equal(observ[0], fake_envs.CountingEnv().reset(seed=3)[0])


class DeadWorkerDetectionTest(unittest.TestCase):
  """Issue 10, item 9: a dead worker is found within docs/parallel.md's 0.1 s, pipe held or not."""

  def test_death_is_noticed_while_a_forked_child_holds_the_pipe(self):
    workers = [wrappers.ExternalProcess(fake_envs.CountingEnv),
               wrappers.ExternalProcess(
                   functools.partial(fake_envs.FaultyEnv, 'orphan', 1), index=1)]
    try:
      for worker in workers:
        worker.reset(seed=0)
      tokens = [worker.begin_fast_step() for worker in workers]
      start = time.monotonic()
      results = wrappers.wait_all(workers, tokens)
      elapsed = time.monotonic() - start
      self.assertEqual(results[0], (True, {}))
      self.assertIsInstance(results[1][1], errors.WorkerDiedError)
      self.assertEqual(results[1][1].exitcode, 3)
      # Before: a 100 ms liveness poll, twice (wait_all, then the worker alone): 201 ms.
      self.assertLess(elapsed, 0.1)
    finally:
      for worker in workers:
        worker.close()


if __name__ == '__main__':
  unittest.main()
