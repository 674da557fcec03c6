"""Tests of agents/experiment/fitting.py: spawned workers, crashes, Ctrl-C and resume."""

import os
import tempfile
import threading
import time
import unittest

from agents.experiment import fitting, manager, progress, threads
from tests.experiment import crashing_env, tiny


class ThreadsTest(unittest.TestCase):

  def test_threads_per_fit_share_the_cores(self):
    self.assertEqual(threads.threads_per_fit(4, cpus=2), 1)
    self.assertEqual(threads.threads_per_fit(2, cpus=8), 4)
    variables = threads.environment(2)
    for name in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'TF_NUM_INTRAOP_THREADS'):
      self.assertEqual(variables[name], '2')
    with self.assertRaises(ValueError):
      threads.environment(0)


class ProcessFitTest(unittest.TestCase):
  """Worker processes (spawn): one test, since each worker imports TensorFlow anew."""

  def test_crash_interrupt_and_resume(self):
    output_dir = tempfile.mkdtemp()
    experiment = manager.ExperimentManager(
        'pendulum', n_fit=2, fit_budget=100_000, output_dir=output_dir, seed=0,
        overrides=tiny.TINY_OVERRIDES, max_workers=2, quiet=True,
        overrides_per_fit=[{}, crashing_env.CRASHING_OVERRIDES])
    run_dir = experiment.run_dir(0)

    def stop_when_training():
      # Ctrl-C as the search's handler does it, once fit 0 logged a row.
      deadline = time.monotonic() + 300
      while time.monotonic() < deadline:
        if os.path.exists(os.path.join(run_dir, 'metrics.jsonl')):
          fitting.STOP.set()
          return
        time.sleep(0.2)

    stopper = threading.Thread(target=stop_when_training)
    stopper.start()
    try:
      with self.assertRaises(KeyboardInterrupt):
        experiment.fit()
    finally:
      stopper.join()
      fitting.STOP.clear()
    states = [fit['status'] for fit in experiment.fits]
    # Fit 1 crashed, reported with its index; fit 0 saved a checkpoint and stopped.
    self.assertEqual(states, [fitting.INTERRUPTED, fitting.FAILED])
    self.assertIn(crashing_env.MESSAGE, experiment.fits[1]['error'])
    stopped_at = experiment.fits[0]['step']
    self.assertGreater(stopped_at, 0)
    self.assertLess(stopped_at, 100_000)
    self.assertTrue(os.path.exists(os.path.join(run_dir, fitting.LOG_NAME)))
    # The saved state is on disk: a new manager resumes fit 0 from its checkpoint.
    resumed = manager.ExperimentManager.load(experiment.directory, quiet=True)
    self.assertEqual(resumed.fits[0]['status'], fitting.INTERRUPTED)
    summary = resumed.fit(budget=stopped_at + 128)
    self.assertEqual(summary.loc[0, 'status'], fitting.FINISHED)
    self.assertEqual(summary.loc[0, 'step'], stopped_at + 128)
    self.assertEqual(summary.loc[1, 'status'], fitting.FAILED)
    steps = [row['step'] for row in progress._Tail(
        os.path.join(run_dir, 'metrics.jsonl')).new_rows() if row['phase'] == 'train']
    self.assertEqual(steps, sorted(set(steps)))  # No step logged twice.


class TailTest(unittest.TestCase):

  def test_reads_complete_lines_only_and_follows_truncation(self):
    path = os.path.join(tempfile.mkdtemp(), 'metrics.jsonl')
    tail = progress._Tail(path)
    self.assertEqual(tail.new_rows(), [])
    with open(path, 'w', encoding='utf-8') as file:
      file.write('{"step": 1, "phase": "train"}\n{"step": 2, "ph')
    self.assertEqual(tail.new_rows(), [{'step': 1, 'phase': 'train'}])
    with open(path, 'a', encoding='utf-8') as file:
      file.write('ase": "train"}\n')
    self.assertEqual(tail.new_rows(), [{'step': 2, 'phase': 'train'}])
    with open(path, 'w', encoding='utf-8') as file:
      file.write('{"step": 1, "phase": "train"}\n')
    self.assertEqual(tail.new_rows(), [{'step': 1, 'phase': 'train'}])

  def test_progress_counts_steps_per_fit(self):
    run_dir = tempfile.mkdtemp()
    with open(os.path.join(run_dir, 'metrics.jsonl'), 'w', encoding='utf-8') as file:
      file.write('{"step": 64, "phase": "train", "mean_score": -3.5}\n')
      file.write('{"step": 64, "phase": "update", "kl": 0.1}\n')
    bars = progress.FitProgress([(0, run_dir), (1, tempfile.mkdtemp())], budget=128, quiet=True)
    self.assertEqual(bars.steps, {0: 64, 1: 0})
    self.assertEqual(bars.scores[0], -3.5)
    bars.finish(1, 128)
    self.assertEqual(bars.steps, {0: 64, 1: 128})
    bars.close()


if __name__ == '__main__':
  unittest.main()
