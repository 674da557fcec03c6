"""Training runs whose environments step in Ray actors on one local two-node cluster.

One `ray.cluster_utils.Cluster` serves the whole module: a head and a second node of one
CPU each, so the two slabs of a run (one CPU per actor, spread) land one on each node. Its
last test kills the head under a running learner, so it must run last: `load_tests` puts
it at the end of the module's suite, its name sorts last in the class, and every other
test fails at once, saying why, if it ever runs after the head is gone.
"""

import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import unittest.mock

import numpy as np
import tensorflow as tf

from agents.run import checkpoints, run_manifest
from agents.training import trainer
from tests.helpers import processes, ray_instance, tiny_experiment, tiny_run

try:
  import ray
except ImportError:
  ray = None

_CLUSTER = None  # The module's cluster, which its driver (this process) joins.
# The test that kills the cluster's head: `load_tests` runs it after every other test.
_HEAD_LOSS_TEST = 'test_the_head_lost_last_ends_the_run_with_a_checkpoint_and_one_line'


def _ray_overrides(**overrides):
  return {'environment.processes': 'ray', 'environment.ray_address': _CLUSTER.address,
          'environment.envs_per_process': 1, **overrides}


def _alive_slab_actors():
  from ray._private import state
  return [actor for actor in state.actors().values()
          if actor['ActorClassName'] == 'SlabHost' and actor['State'] != 'DEAD']


def _nodes_of_sessions(run_dir):
  return [session['environments']['nodes']
          for session in run_manifest.read(run_dir)['sessions']]


def _rows(run_dir):
  path = os.path.join(run_dir, 'metrics.jsonl')
  if not os.path.exists(path):
    return []
  rows = []
  with open(path, encoding='utf-8') as file:
    for line in file:
      try:
        rows.append(json.loads(line))
      except json.JSONDecodeError:
        break  # The row being written.
  return rows


def load_tests(loader, tests, pattern):  # pylint: disable=unused-argument
  """The module's tests in their usual order, but with the head-loss test last."""
  flat, stack = [], [tests]
  while stack:
    item = stack.pop(0)
    if isinstance(item, unittest.TestSuite):
      stack[:0] = list(item)
    else:
      flat.append(item)
  last = [test for test in flat if getattr(test, '_testMethodName', '') == _HEAD_LOSS_TEST]
  return unittest.TestSuite([test for test in flat if test not in last] + last)


@unittest.skipIf(ray is None, "Ray is not installed (pip install -e '.[ray]')")
class RayTrainingTest(unittest.TestCase):

  head_lost = False  # Set by the head-loss test, which must be the last.

  @classmethod
  def setUpClass(cls):
    global _CLUSTER
    from agents.tools import ray_cluster
    if ray_cluster.sessions_started:
      # Seen with Ray 2.x: after a local Ray session in this process, actors on this test's
      # multi-node cluster die as they start. tests.run_all runs this module in a process
      # of its own; a single-process run (unittest discover) skips it, saying why.
      raise unittest.SkipTest('Ray already ran in this process; run this module alone '
                              '(python -m unittest tests.training.ray_training_test).')
    # The driver's session passes PYTHONPATH and the thread limits on to its workers too.
    environ = unittest.mock.patch.dict(os.environ, ray_instance.cluster_environ())
    environ.start()
    cls.addClassCleanup(environ.stop)
    _CLUSTER = ray_instance.start_cluster(num_nodes=2)
    # Without their GCS (after the head-loss test), the nodes' agents outlive a shutdown:
    # killed last, if they are still the same processes.
    agents = _process_keys(
        pid for node in _CLUSTER.list_all_nodes()
        for pid in _descendants(node.all_processes['raylet'][0].process.pid))
    cls.addClassCleanup(_kill_all, agents)
    cls.addClassCleanup(_CLUSTER.shutdown)
    ray_instance.join(_CLUSTER.address)
    cls.addClassCleanup(ray.shutdown)

  def setUp(self):
    if type(self).head_lost:
      self.fail(f'{self.id()} ran after {_HEAD_LOSS_TEST}, which killed the cluster\'s head; '
                'run the module (its load_tests puts that test last), not single classes '
                'in another order')

  def _train(self, config, run_dir=None):
    run_dir = run_dir or tempfile.mkdtemp(prefix='ray-run-')
    return run_dir, trainer.train(config, run_dir, quiet=True, export_policy=False)

  def _check_resumes_on_both_nodes(self, config, more_steps, compare_with=None, marker=None):
    """Trains `config`, then resumes it for `more_steps`: both sessions spread their actors
    over both nodes. With `compare_with`, the first session must be the same run as that
    config's. With `marker` (a CrashOnceCartPole run's), the marker is removed before the
    second session, whose warnings are returned."""
    run_dir, result = self._train(config)
    self.assertEqual(result['step'], config['loop']['steps'])
    if compare_with is not None:
      self._check_same_run(self._train(compare_with)[0], run_dir)
    steps = config['loop']['steps'] + more_steps
    logs = None
    with contextlib.ExitStack() as stack:
      if marker is not None:
        os.remove(marker)
        logs = stack.enter_context(self.assertLogs('agents', logging.WARNING))
      _, resumed = self._train(dict(config, loop=dict(config['loop'], steps=steps)), run_dir)
    self.assertEqual(resumed['step'], steps)
    sessions = _nodes_of_sessions(run_dir)
    self.assertEqual(len(sessions), 2)
    for nodes in sessions:
      self.assertEqual(len(set(nodes)), 2, f'the actors were not spread: {nodes}')
    self.assertEqual(_alive_slab_actors(), [])
    return None if logs is None else '\n'.join(logs.output)

  def _check_same_run(self, *run_dirs):
    """The runs wrote the same rows (losses, scores, episodes) and the same checkpoint."""
    tensors, scores = [], []
    for run_dir in run_dirs:
      reader = tf.train.load_checkpoint(
          checkpoints.newest_readable(os.path.join(run_dir, 'checkpoints')))
      tensors.append({name: reader.get_tensor(name)
                      for name in reader.get_variable_to_shape_map()
                      if name != '_CHECKPOINTABLE_OBJECT_GRAPH'})
      scores.append([{key: value for key, value in row.items()
                      if key not in ('steps_per_second', 'wall_time')}
                     for row in _rows(run_dir)])
    self.assertEqual(scores[0], scores[1])
    self.assertTrue(any('mean_score' in row for row in scores[0]), scores[0])
    self.assertEqual(sorted(tensors[0]), sorted(tensors[1]))
    differing = [name for name in tensors[0]
                 if not np.array_equal(tensors[0][name], tensors[1][name])]
    self.assertEqual(differing, [])

  def test_cartpole_runs_as_in_processes_then_resumes_through_an_actor_restart(self):
    # One Ray run checks three facts: its first session is the same run as with worker
    # processes (same seed); it resumes with its actors spread over both nodes; and in the
    # second session an actor killed mid-run is restarted and the run finishes. Its
    # CartPole kills its process once (CrashOnceCartPole), when its marker file is missing:
    # the marker is there for the first session and the run in processes, not the second.
    marker = os.path.join(tempfile.mkdtemp(), 'crashed')
    with open(marker, 'w', encoding='utf-8'):
      pass
    crash_once = {'environment.id': 'CrashOnceCartPole-v0',
                  'environment.imports': ['tests.helpers.crash_once_env'],
                  'environment.kwargs': {'marker': marker, 'crash_at': 20},
                  'environment.max_restarts': 1, 'seed': 3,
                  'algorithm.name': tiny_experiment.LINEAR_SOFTMAX}
    config = tiny_run.tiny_config(**_ray_overrides(**crash_once))
    text = self._check_resumes_on_both_nodes(
        config, 64, marker=marker, compare_with=tiny_run.tiny_config(**crash_once, **{
            'environment.processes': True, 'environment.envs_per_process': 1}))
    # An actor killed mid-run is restarted and the run finishes (the resume reached its
    # steps, and no actor is left, as checked above).
    self.assertTrue(os.path.exists(marker), 'no actor crashed')
    self.assertRegex(text, r'environment \d on node \S+ died during a (step|reset): \S')
    self.assertRegex(text, r'environment \d restarted on node \S+')
    # The restart flag is the batch's own info key: the in-graph environment drops it quietly.
    self.assertNotIn('worker_restarted', text)

  def test_balloon_on_both_nodes_stopped_by_ctrl_c_leaves_no_actor_alive(self):
    # Resuming on both nodes is checked on CartPole above; here the session ends by Ctrl-C.
    config = tiny_run.tiny_config('balloon', wind='procedural', **_ray_overrides(**{
        'environment.num_agents': 4, 'environment.envs_per_process': 2,
        'environment.max_episode_steps': 8, 'loop.steps': 10_000, 'loop.log_every': 32,
        'loop.checkpoint_every': 10_000, 'algorithm.name': tiny_experiment.LINEAR_SOFTMAX,
        'loop.steps_per_call': 8, 'loop.eval_suite': None}))
    with tiny_run.ctrl_c_at_row(1):
      run_dir, result = self._train(config)
    self.assertTrue(result['interrupted'])
    self.assertEqual(result['step'], 32)
    self.assertEqual(checkpoints.newest_readable(os.path.join(run_dir, 'checkpoints')),
                     os.path.join(run_dir, 'checkpoints', 'ckpt-32'))
    [nodes] = _nodes_of_sessions(run_dir)
    self.assertEqual(len(set(nodes)), 2, f'the actors were not spread: {nodes}')
    self.assertEqual(_alive_slab_actors(), [])

  def test_python_agents_batch_on_ray_steps_as_in_processes(self):
    from agents.python_agents import train_lib
    observations = []
    for options in ({}, dict(processes='ray', ray_address=_CLUSTER.address)):
      batch = train_lib.make_batch_env('BalloonLearningEnvironment-v0', 4, 2, **options)
      try:
        observ, _ = batch.reset(seeds=[1, 2, 3, 4])
        run = [observ]
        for action in range(3):
          run.append(batch.step(np.full(4, action, np.int64))[0])
        observations.append(np.stack(run))
        if options:
          self.assertEqual(len(set(batch.placement.nodes)), 2, batch.placement)
      finally:
        batch.close()
    np.testing.assert_array_equal(observations[0], observations[1])
    self.assertEqual(_alive_slab_actors(), [])

  def test_a_driver_killed_leaves_no_actor_alive(self):
    # A driver that stepped a batch on the cluster dies by SIGKILL, with no chance to close
    # it: Ray ends the actors it owned. (A learner's Ctrl-C is checked on the balloon.)
    folder = tempfile.mkdtemp(prefix='ray-driver-')
    stepping = os.path.join(folder, 'stepping')
    with open(os.path.join(folder, 'stderr'), 'w+', encoding='utf-8') as stderr:
      driver = subprocess.Popen(
          [sys.executable, '-c', _STEPPING_DRIVER, _CLUSTER.address, stepping],
          cwd=processes.ROOT, env=dict(os.environ, PYTHONPATH=processes.ROOT),
          stdout=subprocess.DEVNULL, stderr=stderr)
      self.addCleanup(driver.wait)
      self.addCleanup(driver.kill)
      deadline = time.monotonic() + 180
      while not os.path.exists(stepping):
        if driver.poll() is not None or time.monotonic() > deadline:
          stderr.seek(0)
          self.fail(f'the driver did not step (exit code {driver.poll()}):\n{stderr.read()}')
        time.sleep(0.2)
    pids = [actor['Pid'] for actor in _alive_slab_actors()]
    self.assertEqual(len(pids), 1)
    driver.kill()
    driver.wait(timeout=60)
    deadline = time.monotonic() + 60
    while _alive_slab_actors() or any(processes.pid_exists(pid) for pid in pids):
      self.assertLess(time.monotonic(), deadline,
                      f'actors left alive: {_alive_slab_actors()}')
      time.sleep(0.5)

  def test_the_head_lost_last_ends_the_run_with_a_checkpoint_and_one_line(self):
    # The module's last test (load_tests): it kills the head of the shared cluster under a
    # running learner. This process leaves the cluster first, as Ray ends a driver whose
    # head stays away.
    type(self).head_lost = True
    ray.shutdown()
    logdir = tempfile.mkdtemp(prefix='ray-head-loss-')
    run_dir = os.path.join(logdir, 't-cartpole')
    child = _learner(logdir, _CLUSTER.address, '--set', 'environment.envs_per_process=1')
    self.addCleanup(child.wait)
    self.addCleanup(child.kill)
    deadline = time.monotonic() + 180
    while not _rows(run_dir):
      self.assertLess(time.monotonic(), deadline, 'the learner did not start training')
      self.assertIsNone(child.poll(), child.stderr.read() if child.poll() else '')
      time.sleep(0.5)
    # The head machine goes: its raylet, GCS and the agents the raylet started.
    head = _CLUSTER.head_node
    descendants = _process_keys(_descendants(head.all_processes['raylet'][0].process.pid))
    head.kill_all_processes(check_alive=False, allow_graceful=False)
    _kill_all(descendants)
    _, stderr = child.communicate(timeout=120)
    self.assertEqual(child.returncode, 1, stderr[-3000:])
    lines = [line for line in stderr.splitlines() if 'train: error:' in line]
    self.assertEqual(len(lines), 1, stderr[-3000:])
    self.assertRegex(lines[0], r"the Ray cluster's head at \S+ was lost; the run stopped at "
                     r'step \d+ with checkpoint \S+; resume it with --resume=')
    self.assertNotIn('Traceback', stderr)
    step = int(re.search(r'stopped at step (\d+)', lines[0]).group(1))
    saved = checkpoints.newest_readable(os.path.join(run_dir, 'checkpoints'))
    self.assertTrue(saved.endswith(f'-{step}'), (saved, step))


def _descendants(pid):
  """The pids of every process under `pid` (read from /proc)."""
  children = {}
  for entry in os.listdir('/proc'):
    if entry.isdigit():
      try:
        with open(f'/proc/{entry}/stat', encoding='utf-8') as file:
          parent = int(file.read().rsplit(')', 1)[1].split()[1])
      except (OSError, ValueError, IndexError):
        continue
      children.setdefault(parent, []).append(int(entry))
  found, queue = [], [pid]
  while queue:
    for child in children.get(queue.pop(), []):
      found.append(child)
      queue.append(child)
  return found


def _start_time(pid):
  """The start time of process `pid` (clock ticks after boot), or None if it is gone."""
  try:
    with open(f'/proc/{pid}/stat', encoding='utf-8') as file:
      return int(file.read().rsplit(')', 1)[1].split()[19])
  except (OSError, ValueError, IndexError):
    return None


def _process_keys(pids):
  """(pid, start time) of each process: what `_kill_all` checks before it kills."""
  return [(pid, _start_time(pid)) for pid in pids]


def _kill_all(keys):
  """SIGKILLs the processes of `_process_keys` still running (not a later one that took a
  recycled pid)."""
  for pid, started in keys:
    if started is not None and _start_time(pid) == started:
      with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


# A driver without TensorFlow that steps CartPole in one actor on the cluster at argv[1]
# until it is killed, creating the file argv[2] once it has stepped.
_STEPPING_DRIVER = """
import sys
import numpy as np
from agents.python_agents import train_lib
batch = train_lib.make_batch_env('CartPole-v1', 2, 1, processes='ray', ray_address=sys.argv[1])
batch.reset(seeds=[0, 1])
batch.step(np.zeros(2, np.int64))
open(sys.argv[2], 'w').close()
while True:
  batch.step(np.zeros(2, np.int64))
"""


def _learner(logdir, address, *extra):
  """`python -m agents.scripts.train` of an endless CartPole run on Ray, in a subprocess.

  Its Ray driver does not wait to flush task events to a head that is gone (Ray waits 5 s
  by default as the process exits): the test reads the learner's last line, not them."""
  environ = dict(os.environ, PYTHONPATH=processes.ROOT, RAY_ADDRESS=address,
                 TF_CPP_MIN_LOG_LEVEL='3', PYTHONUNBUFFERED='1',
                 RAY_task_events_shutdown_flush_timeout_ms='0')
  command = [sys.executable, '-m', 'agents.scripts.train', f'--logdir={logdir}',
             *tiny_run.ENDLESS_RUN, '--set', 'environment.processes=ray', *extra]
  return subprocess.Popen(command, cwd=processes.ROOT, env=environ,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)




if __name__ == '__main__':
  unittest.main()
