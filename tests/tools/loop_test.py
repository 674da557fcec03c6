"""Tests of the Loop: phases by global step, summaries, checkpoints, and resume after a kill."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np
import tensorflow as tf

from agents.run import metrics_writer
from agents.tools import batch_env as batch_env_lib
from agents.tools import in_graph_batch_env, mock_algorithm, mock_environment
from agents.tools import loop as loop_lib
from tests.helpers import events, loop_child

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _recording_loop(logdir):
  """Train 8 steps, eval 4 steps, on 2 environments whose episodes never end by themselves."""
  envs = [mock_environment.MockEnvironment([100]), mock_environment.MockEnvironment([100])]
  batch = in_graph_batch_env.InGraphBatchEnv(
      batch_env_lib.BatchEnv(envs), info_specs=mock_environment.INFO_SPECS)
  loop = loop_lib.Loop(logdir)
  agent = mock_algorithm.MockAlgorithm(batch, is_training=loop.is_training)
  loop.add_phase('train', batch, agent, steps=8, is_training=True, steps_per_call=2)
  loop.add_phase('eval', batch, agent, steps=4, is_training=False, steps_per_call=2)
  return loop, agent


def _is_training_per_step(agent):
  return [bool(data[1]) for data in agent.calls_of('perform')]


def _steps_with_begin(agent):
  """Batch steps (0-based, within this agent's life) at which all environments began."""
  steps, step = [], 0
  for name, data in agent.calls:
    if name == 'perform':
      step += 1
    elif name == 'begin' and data == [0, 1]:
      steps.append(step)
  return steps


def _all_values(learner):
  """Values of the learner's variables and optimizer slots, keyed by position."""
  values = {f'module/{v.name}': np.array(v.numpy()) for v in learner.variables}
  for index, variable in enumerate(learner.optimizer.variables):
    values[f'optimizer/{index}/{variable.name}'] = np.array(variable.numpy())
  return values


class LoopTest(unittest.TestCase):

  def setUp(self):
    self.logdir = tempfile.mkdtemp()
    self.addCleanup(shutil.rmtree, self.logdir, ignore_errors=True)

  def test_phases_follow_the_global_step_and_set_is_training(self):
    loop, agent = _recording_loop(self.logdir)
    self.assertEqual(loop.run(24), 24)
    # Batch steps of 2 environments: train 4, eval 2, train 4, eval 2.
    self.assertEqual(_is_training_per_step(agent), [True] * 4 + [False] * 2 + [True] * 4 +
                     [False] * 2)
    # Every phase starts by resetting all environments.
    self.assertEqual(_steps_with_begin(agent), [0, 4, 6, 10])

  def test_resumed_loop_continues_in_the_phase_of_its_step(self):
    loop, _ = _recording_loop(self.logdir)
    loop.run(10)  # Stops two steps into the first eval phase.
    loop, agent = _recording_loop(self.logdir)
    self.assertEqual(loop.restore(), 10)
    self.assertEqual(loop.run(16), 16)
    # One batch step finishes the eval phase, then training starts afresh.
    self.assertEqual(_is_training_per_step(agent), [False, True, True])
    self.assertEqual(_steps_with_begin(agent), [0, 1])

  def test_metrics_rows_and_events_per_phase_and_an_exact_restore(self):
    # One run of 60 steps checks two facts: it writes metrics rows and TensorBoard
    # events per phase; a restore brings back its step, weights and optimizer state
    # exactly.
    loop, learner = loop_child.build(self.logdir)
    loop.run(60)
    # Metrics rows and TensorBoard events per phase.
    rows = metrics_writer.read_metrics(os.path.join(self.logdir, 'metrics.jsonl'))
    self.assertEqual([(row['phase'], row['step']) for row in rows], [
        ('train', 10), ('train', 20), ('eval', 30), ('train', 40), ('train', 50), ('eval', 60)])
    for row in rows:
      self.assertGreater(row['episodes'], 0)
      self.assertGreater(row['mean_score'], 0)
      self.assertGreaterEqual(row['mean_length'], 2)
    tags = {}
    for phase in ('train', 'eval'):
      folder = os.path.join(self.logdir, phase)
      for name in os.listdir(folder):
        for event in events.events(os.path.join(folder, name)):
          for value in event.summary.value:
            tags.setdefault(phase, set()).add(value.tag)
    self.assertLessEqual({'mean_score', 'mean_length', 'episodes', 'loss'}, tags['train'])
    self.assertIn('mean_score', tags['eval'])

    # The restore brings back the step, the weights and the optimizer state exactly.
    expected = _all_values(learner)
    self.assertGreater(int(learner.optimizer.iterations.numpy()), 0)
    loop, learner = loop_child.build(self.logdir)
    self.assertEqual(loop.restore(), 60)
    self.assertEqual(int(loop.step.numpy()), 60)
    restored = _all_values(learner)
    self.assertEqual(set(restored), set(expected))
    for name, value in expected.items():
      np.testing.assert_array_equal(restored[name], value, err_msg=name)

  def test_what_a_kill_leaves_half_written_is_never_restored(self):
    # One run checks two facts of a process killed after its checkpoint at step 20:
    # a checkpoint it was still writing is never restored, and the metrics rows written
    # after the restored step (the last one cut off) are dropped.
    loop, _ = loop_child.build(self.logdir)
    loop.run(20)
    # What a process killed while saving step 30 leaves behind: data and index
    # files (maybe truncated) that the `checkpoint` state file does not name.
    folder = loop.checkpoint_dir
    for name in ('ckpt-30.index', 'ckpt-30.data-00000-of-00001'):
      with open(os.path.join(folder, name), 'wb') as file:
        file.write(b'\x00partial')
    # And rows past the checkpoint, the last one cut off by the kill.
    path = os.path.join(self.logdir, 'metrics.jsonl')
    metrics_writer.MetricsWriter(path).write({'step': 25, 'phase': 'eval'})
    with open(path, 'a') as file:
      file.write('{"step": 26, "pha')  # A line cut off by a kill.
    loop, _ = loop_child.build(self.logdir)
    # The partially written checkpoint is never restored.
    self.assertEqual(loop.restore(), 20)
    # The metrics after the restored step are dropped.
    self.assertEqual([row['step'] for row in metrics_writer.read_metrics(path)], [10, 20])

  def test_bad_phases_are_rejected_with_their_name(self):
    loop, agent = _recording_loop(self.logdir)
    batch = loop._phases[0].fused_step.batch_env
    with self.assertRaisesRegex(ValueError, "'train' is already used"):
      loop.add_phase('train', batch, agent, steps=8, is_training=True)
    with self.assertRaisesRegex(ValueError, "'other'.*log_every"):
      loop.add_phase('other', batch, agent, steps=8, is_training=True, log_every=0)
    with self.assertRaisesRegex(ValueError, "'small'.*smaller than the batch"):
      loop.add_phase('small', batch, agent, steps=1, is_training=True)
    loop.run(8)
    with self.assertRaisesRegex(RuntimeError, "'late'"):
      loop.add_phase('late', batch, agent, steps=8, is_training=True)

  def test_killed_run_resumes_from_its_last_checkpoint(self):
    log_path = os.path.join(self.logdir, 'child.log')
    with open(log_path, 'w') as log:
      child = subprocess.Popen(
          [sys.executable, '-m', 'tests.helpers.loop_child', self.logdir, str(10 ** 9)],
          cwd=_REPOSITORY, stdout=log, stderr=subprocess.STDOUT)
    self.addCleanup(child.wait)
    self.addCleanup(lambda: child.poll() is None and child.kill())
    checkpoint_dir = os.path.join(self.logdir, 'checkpoints')
    deadline = time.monotonic() + 120
    while True:
      latest = tf.train.latest_checkpoint(checkpoint_dir)
      if latest and int(latest.rsplit('-', 1)[1]) >= 60:
        break
      if child.poll() is not None or time.monotonic() > deadline:
        with open(log_path) as log:
          self.fail(f'Child run ended or stalled before its checkpoint:\n{log.read()[-3000:]}')
      time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()

    latest = tf.train.latest_checkpoint(checkpoint_dir)
    saved_step = int(latest.rsplit('-', 1)[1])
    reader = tf.train.load_checkpoint(latest)
    loop, learner = loop_child.build(self.logdir)
    self.assertEqual(loop.restore(), saved_step)
    prefix = 'algorithm/{}/.ATTRIBUTES/VARIABLE_VALUE'
    self.assertEqual(float(learner.weight.numpy()), reader.get_tensor(prefix.format('weight')))
    self.assertEqual(int(learner.updates.numpy()), reader.get_tensor(prefix.format('updates')))
    slots_compared = 0
    for index, variable in enumerate(learner.optimizer.variables):
      key = prefix.format(f'optimizer/_variables/{index}')
      if reader.has_tensor(key):  # Adam's moments; iterations are stored by name.
        np.testing.assert_array_equal(variable.numpy(), reader.get_tensor(key),
                                      err_msg=variable.path)
        slots_compared += 1
    self.assertEqual(slots_compared, 2)
    self.assertEqual(int(learner.optimizer.iterations.numpy()),
                     reader.get_tensor(prefix.format('optimizer/_iterations')))

    updates_before = int(learner.updates.numpy())
    self.assertEqual(loop.run(saved_step + 30), saved_step + 30)
    self.assertGreater(int(learner.updates.numpy()), updates_before)
    steps = [row['step'] for row in
             metrics_writer.read_metrics(os.path.join(self.logdir, 'metrics.jsonl'))]
    self.assertEqual(steps, sorted(set(steps)))  # No step logged twice.
    self.assertEqual(steps[-1], saved_step + 30)
    self.assertEqual(tf.train.latest_checkpoint(checkpoint_dir),
                     os.path.join(checkpoint_dir, f'ckpt-{saved_step + 30}'))


if __name__ == '__main__':
  unittest.main()
