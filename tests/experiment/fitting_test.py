"""Tests of agents/experiment/fitting.py: spawned workers, crashes, Ctrl-C and resume."""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from agents.experiment import ConfigExperiment, fitting, progress, threads
from tests.helpers import crashing_env, tiny_experiment

# Where the manager logs a failed fit.
_FIT_LOGGER = 'agents.experiment.experiment_base'


class ThreadsTest(unittest.TestCase):

  def test_threads_per_fit_share_the_cores(self):
    self.assertEqual(threads.threads_per_fit(4, cpus=2), 1)
    self.assertEqual(threads.threads_per_fit(2, cpus=8), 4)
    variables = threads.environment(2)
    for name in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'TF_NUM_INTRAOP_THREADS'):
      self.assertEqual(variables[name], '2')
    with self.assertRaises(ValueError):
      threads.environment(0)


class StopRequestTest(unittest.TestCase):

  def test_a_fit_started_with_sigint_ignored_still_stops_on_sigint(self):
    # An experiment started by `cmd &` in a script inherits SIGINT ignored, and so would
    # its fits: the parent's request to stop (a SIGINT) must still reach them.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    self.addCleanup(signal.signal, signal.SIGINT, previous)
    fitting.accept_stop_requests()
    self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)


class ProcessFitTest(unittest.TestCase):
  """Worker processes (spawn): one test, since each worker imports TensorFlow anew.

  It also checks SIGTERM to the experiment's process (here the test's own): the running
  fit saves a checkpoint and stops, as `ParentGoneTest` checks for SIGKILL.
  """

  def test_crash_interrupt_and_resume(self):
    output_dir = tempfile.mkdtemp()
    experiment = ConfigExperiment(
        'pendulum', n_fit=2, fit_budget=100_000, output_dir=output_dir, seed=0,
        overrides=tiny_experiment.RANDOM_OVERRIDES, max_workers=2, quiet=True,
        overrides_per_fit=[{}, crashing_env.CRASHING_OVERRIDES])
    run_dir = experiment.run_dir(0)
    sigterm_missed = []

    def stop_when_training():
      # Once fit 0 logged a row, SIGTERM to this process, the experiment's (as a scheduler
      # sends it): its handler, set while the fits run, stops them as a Ctrl-C. STOP (the
      # search's Ctrl-C) stands in should the handler be missing, never the default action.
      deadline = time.monotonic() + 300
      while time.monotonic() < deadline:
        if os.path.exists(os.path.join(run_dir, 'metrics.jsonl')):
          if signal.getsignal(signal.SIGTERM) is fitting._raise_keyboard_interrupt:
            os.kill(os.getpid(), signal.SIGTERM)
          else:
            sigterm_missed.append(True)
            fitting.STOP.set()
          return
        time.sleep(0.2)

    stopper = threading.Thread(target=stop_when_training)
    stopper.start()
    try:
      with self.assertRaises(KeyboardInterrupt), self.assertLogs(_FIT_LOGGER, 'ERROR') as logs:
        experiment.fit()
    finally:
      stopper.join()
      fitting.STOP.clear()
    states = [fit['status'] for fit in experiment.fits]
    # Fit 1 crashed, reported with its index; fit 0 saved a checkpoint and stopped.
    self.assertEqual(sigterm_missed, [])  # SIGTERM's handler was on while the fits ran.
    self.assertEqual(states, [fitting.INTERRUPTED, fitting.FAILED])
    self.assertIn(crashing_env.MESSAGE, experiment.fits[1]['error'])
    self.assertIn(crashing_env.MESSAGE, '\n'.join(logs.output))
    stopped_at = experiment.fits[0]['step']
    self.assertGreater(stopped_at, 0)
    self.assertLess(stopped_at, 100_000)
    log = _read(os.path.join(run_dir, fitting.LOG_NAME))
    self.assertIn('Interrupted at step', log)
    self.assertIn('saved checkpoint', log)
    # The saved state is on disk: a new manager resumes fit 0 from its checkpoint.
    resumed = ConfigExperiment.load(experiment.directory, quiet=True)
    self.assertEqual(resumed.fits[0]['status'], fitting.INTERRUPTED)
    self.assertEqual(resumed.parallelization, 'process')
    # The resumed fits run in this process: what is resumed is on disk, and two more
    # worker processes (TensorFlow imported in each) would check nothing more.
    resumed.parallelization = 'inline'
    with self.assertLogs(_FIT_LOGGER, 'ERROR'):  # Fit 1 crashes again.
      summary = resumed.fit(budget=stopped_at + 128)
    self.assertEqual(summary.loc[0, 'status'], fitting.FINISHED)
    self.assertEqual(summary.loc[0, 'step'], stopped_at + 128)
    self.assertEqual(summary.loc[1, 'status'], fitting.FAILED)
    steps = [row['step'] for row in progress._Tail(
        os.path.join(run_dir, 'metrics.jsonl')).new_rows() if row['phase'] == 'train']
    self.assertEqual(steps, sorted(set(steps)))  # No step logged twice.


_PARENT = """
import sys
from agents.experiment import ConfigExperiment
from tests.helpers import tiny_experiment
experiment = ConfigExperiment(
    'pendulum', n_fit=1, fit_budget=10_000_000, output_dir=sys.argv[1], seed=0,
    overrides=tiny_experiment.RANDOM_OVERRIDES, max_workers=1, quiet=True)
experiment.fit()
"""


class ParentGoneTest(unittest.TestCase):
  """A fit never outlives its experiment: SIGKILL of the parent stops it.

  (SIGTERM to the experiment's process is checked by `ProcessFitTest`, in this process.)
  """

  def _fit_stops_when_parent_gets(self, signum):
    output_dir = tempfile.mkdtemp()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parent = subprocess.Popen([sys.executable, '-c', _PARENT, output_dir], cwd=root,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    run_dir = os.path.join(output_dir, 'pendulum', 'fit00-pendulum')
    log = os.path.join(run_dir, fitting.LOG_NAME)
    try:
      deadline = time.monotonic() + 240
      while not os.path.exists(os.path.join(run_dir, 'metrics.jsonl')):
        self.assertIsNone(parent.poll(), 'the experiment ended before its fit trained')
        self.assertLess(time.monotonic(), deadline, 'the fit never started training')
        time.sleep(0.2)
      os.kill(parent.pid, signum)
      parent.wait(timeout=120)
      deadline = time.monotonic() + 120
      while 'Interrupted at step' not in _read(log):
        self.assertLess(time.monotonic(), deadline, f'the fit is still running: {_read(log)}')
        time.sleep(0.2)
    finally:
      if parent.poll() is None:
        parent.kill()
        parent.wait()
      _kill_session(parent.pid)  # Whatever is left, should the test fail.
    self.assertIn('saved checkpoint', _read(log))

  def test_sigkill_of_the_parent_stops_the_fit(self):
    self._fit_stops_when_parent_gets(signal.SIGKILL)


def _kill_session(session_id):
  """SIGKILLs every process of a session (the parent's, which its fits stay in)."""
  for entry in os.listdir('/proc'):
    if not entry.isdigit():
      continue
    try:
      with open(f'/proc/{entry}/stat', encoding='utf-8') as file:
        fields = file.read().rsplit(')', 1)[1].split()
      if int(fields[3]) == session_id:
        os.kill(int(entry), signal.SIGKILL)
    except (OSError, IndexError, ValueError):
      pass


def _read(path):
  try:
    with open(path, encoding='utf-8', errors='replace') as file:
      return file.read()
  except FileNotFoundError:
    return ''


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



class UnimportableMainTest(unittest.TestCase):

  def test_fits_from_a_script_on_standard_input_are_refused_with_the_cause(self):
    output_dir = tempfile.mkdtemp()
    script = (f'from agents.experiment import fitting\n'
              f'fitting.run_fits_locally([fitting.FitSpec(0, {output_dir!r}, {{}}, 1)], 1)\n')
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    result = subprocess.run([sys.executable, '-'], input=script, capture_output=True,
                            text=True, cwd=output_dir, timeout=120,
                            env=dict(os.environ, PYTHONPATH=root))
    self.assertEqual(result.returncode, 1)
    last_line = result.stderr.strip().splitlines()[-1]
    self.assertIn('UnimportableMainError', last_line)
    self.assertIn('read from standard input', last_line)
    self.assertIn("parallelization='inline'", last_line)
    self.assertEqual(os.listdir(output_dir), [])
    # A script in a file is fine.
    fitting.check_main_is_importable()

if __name__ == '__main__':
  unittest.main()
