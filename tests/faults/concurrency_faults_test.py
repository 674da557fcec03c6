"""Two writers pointed at one directory: the second refuses in one line and touches
nothing (issue 26, defect 13 and "Concurrency")."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from agents.scripts import train as train_script
from tests.helpers import commands, tiny_run

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
    logdir = tempfile.mkdtemp()
    run_dir = os.path.join(logdir, 't-cartpole')
    command = [sys.executable, '-m', 'agents.scripts.train', f'--logdir={logdir}']
    first = subprocess.Popen(command + _ENDLESS_RUN, env=_environment(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    self.addCleanup(first.wait)
    self.addCleanup(first.kill)
    metrics = os.path.join(run_dir, 'metrics.jsonl')
    deadline = time.monotonic() + _TIMEOUT
    while not (os.path.exists(metrics) and os.path.getsize(metrics)):
      self.assertLess(time.monotonic(), deadline, 'the first run never logged a row')
      self.assertIsNone(first.poll(), 'the first run ended early')
      time.sleep(0.2)
    config_path = os.path.join(run_dir, 'config.yaml')
    before = _stamp(config_path)

    # The second writer runs in this process: it refuses before it trains anything.
    code, stderr = commands.run_main(self, train_script.main,
                                     [f'--logdir={logdir}'] + _ENDLESS_RUN)
    self.assertEqual(code, 2, stderr)
    lines = stderr.strip().splitlines()
    self.assertEqual(len(lines), 1, stderr)
    self.assertRegex(lines[0], rf'error: Training run {run_dir} is in use by another '
                               rf'process \(pid {first.pid}: ')
    self.assertEqual(_stamp(config_path), before)
    self.assertIsNone(first.poll(), 'the first run was disturbed')
    first.send_signal(signal.SIGTERM)
    self.assertEqual(first.wait(_TIMEOUT), 128 + signal.SIGTERM)
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
    result = subprocess.run(
        [sys.executable, '-m', 'agents.scripts.experiment', 'fit', '--config=cartpole',
         f'--output_dir={output_dir}', '--budget=64', '--n_fit=1'],
        env=_environment(), capture_output=True, text=True, timeout=_TIMEOUT)
    self.assertEqual(result.returncode, 2, result.stderr)
    self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
    self.assertIn(f'Experiment {experiment_dir} is in use by another process (pid '
                  f'{holder.pid}', result.stderr)
    self.assertEqual(os.listdir(experiment_dir), [])


if __name__ == '__main__':
  unittest.main()
