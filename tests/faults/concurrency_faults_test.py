"""Two writers pointed at one directory: the second refuses in one line and touches
nothing (issue 26, defect 13 and "Concurrency")."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest

from agents.scripts import experiment as experiment_script
from agents.scripts import train as train_script
from tests.helpers import commands, signal_self, tiny_run

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_TIMEOUT = 180
_ENDLESS_RUN = tiny_run.ENDLESS_RUN


def _environment():
  return dict(os.environ, PYTHONPATH=_REPOSITORY, TF_CPP_MIN_LOG_LEVEL='3',
              OPENBLAS_NUM_THREADS='1')


def _stamp(path):
  with open(path) as file:
    return os.stat(path).st_mtime_ns, file.read()


class TrainingRunConcurrencyTest(unittest.TestCase):

  def test_a_second_train_on_a_running_run_refuses_and_touches_nothing(self):
    # The first writer trains in this process (`main`, as `python -m` runs it); once it has
    # logged a row, a second `train` process on the same run refuses. SIGTERM then stops
    # the first.
    logdir = tempfile.mkdtemp()
    run_dir = os.path.join(logdir, 't-cartpole')
    metrics = os.path.join(run_dir, 'metrics.jsonl')
    config_path = os.path.join(run_dir, 'config.yaml')

    def second_writer():
      before = _stamp(config_path)
      result = subprocess.run(
          [sys.executable, '-m', 'agents.scripts.train', f'--logdir={logdir}'] + _ENDLESS_RUN,
          env=_environment(), capture_output=True, text=True, timeout=_TIMEOUT)
      return before, result, _stamp(config_path)

    code, stderr, (before, second, after) = signal_self.run_and_signal(
        self, train_script.main, [f'--logdir={logdir}'] + _ENDLESS_RUN,
        ready=lambda: os.path.exists(metrics) and os.path.getsize(metrics),
        meanwhile=second_writer)
    self.assertEqual(second.returncode, 2, second.stderr)
    lines = second.stderr.strip().splitlines()
    self.assertEqual(len(lines), 1, second.stderr)
    self.assertRegex(lines[0], rf'error: Training run {run_dir} is in use by another '
                               rf'process \(pid {os.getpid()}: ')
    self.assertEqual(after, before)
    # The first run was not disturbed: it trained on until SIGTERM, then stopped with a
    # checkpoint.
    self.assertEqual(code, 128 + signal.SIGTERM, stderr)
    with open(metrics) as file:
      steps = [json.loads(line)['step'] for line in file if '"train"' in line]
    self.assertEqual(steps, sorted(set(steps)))


class ExperimentConcurrencyTest(unittest.TestCase):

  def test_a_second_manager_of_one_experiment_refuses_in_one_line_and_touches_nothing(self):
    output_dir = tempfile.mkdtemp()
    experiment_dir = os.path.join(output_dir, 'cartpole')
    holder = subprocess.Popen(
        [sys.executable, '-c', 'import sys, time\nfrom agents.run import directory_lock\n'
         'with directory_lock.hold(sys.argv[1], "experiment"):\n'
         '  print("held", flush=True); time.sleep(60)', experiment_dir],
        stdout=subprocess.PIPE, text=True, env=_environment())
    self.addCleanup(holder.stdout.close)
    self.addCleanup(holder.wait)
    self.addCleanup(holder.kill)
    self.assertEqual(holder.stdout.readline().strip(), 'held')
    # The second manager runs in this process: it refuses before it fits anything.
    code, stderr = commands.run_main(self, experiment_script.main, [
        'fit', '--config=cartpole', f'--output_dir={output_dir}', '--budget=64', '--n_fit=1'])
    self.assertEqual(code, 2, stderr)
    self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
    self.assertIn(f'Experiment {experiment_dir} is in use by another process (pid '
                  f'{holder.pid}', stderr)
    self.assertEqual(os.listdir(experiment_dir), [])


if __name__ == '__main__':
  unittest.main()
