"""Fault injection into training runs: damaged checkpoints, killed saves, SIGTERM, Ctrl-C twice.

Each test injects one fault of issue 10 (items 2, 3 and 9) and checks what the
user gets: a resume from the newest checkpoint that reads, with a line naming
the skipped one; no leftovers of a killed save; a checkpoint and a clean exit
on SIGTERM; one line and no traceback when Ctrl-C is pressed twice at
start-up. The signal tests drive `python -m agents.scripts.train` in a
subprocess (a resumed run signalled alone runs its `main` in this process,
signalled by a thread) and wait for what it writes (a line, a metrics row, its
signal mask), never for a fixed time.
"""

import contextlib
import io
import json
import logging
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from agents.run import checkpoints
from agents.scripts import train as train_script
from agents.training import trainer
from tests.helpers import ballast_agent, loop_child, signal_self, tiny_run

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Generous: the machine is shared, and start-up (TensorFlow, tracing) takes seconds.
_TIMEOUT = 180

_ENDLESS_RUN = tiny_run.ENDLESS_RUN


class _Child:
  """`python -m agents.scripts.train ...` in a subprocess, its stderr read by a thread."""

  def __init__(self, argv, new_session=False):
    # TF_CPP_MIN_LOG_LEVEL unset, as in a user's shell: the command chooses it.
    env = {key: value for key, value in os.environ.items() if key != 'TF_CPP_MIN_LOG_LEVEL'}
    env.update(PYTHONPATH=_REPOSITORY, OPENBLAS_NUM_THREADS='1', PYTHONUNBUFFERED='1')
    self.process = subprocess.Popen(
        [sys.executable, '-m', 'agents.scripts.train'] + argv, cwd=_REPOSITORY, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=new_session)
    self.stderr_lines = []
    self._lines = queue.Queue()
    self._reader = threading.Thread(target=self._read, daemon=True)
    self._reader.start()

  def _read(self):
    for line in self.process.stderr:
      self.stderr_lines.append(line)
      self._lines.put(line)
    self._lines.put(None)

  def wait_for_line(self, pattern):
    """Waits for a stderr line matching `pattern`; returns the match."""
    deadline = time.monotonic() + _TIMEOUT
    while time.monotonic() < deadline:
      try:
        line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
      except queue.Empty:
        break
      if line is None:
        break
      match = re.search(pattern, line)
      if match:
        return match
    raise AssertionError(f'No stderr line matched {pattern!r}; stderr so far:\n'
                         + ''.join(self.stderr_lines))

  def wait_until(self, condition, what):
    """Polls `condition()` until it returns something true; returns that."""
    deadline = time.monotonic() + _TIMEOUT
    while time.monotonic() < deadline:
      value = condition()
      if value:
        return value
      if self.process.poll() is not None:
        break
      time.sleep(0.02)
    raise AssertionError(f'Gave up waiting for {what}; exit code {self.process.poll()}, '
                         'stderr:\n' + ''.join(self.stderr_lines))

  def finish(self):
    """Waits for the exit; returns (exit code, stdout, stderr)."""
    try:
      stdout = self.process.stdout.read()
      code = self.process.wait(timeout=_TIMEOUT)
    finally:
      if self.process.poll() is None:
        self.process.kill()
        self.process.wait()
    self._reader.join(timeout=_TIMEOUT)
    self.process.stdout.close()
    self.process.stderr.close()
    return code, stdout, ''.join(self.stderr_lines)


def _handles_sigterm(pid):
  """Whether the process has a handler for SIGTERM (Linux: the SigCgt mask)."""
  try:
    with open(f'/proc/{pid}/status', encoding='ascii') as file:
      status = file.read()
  except FileNotFoundError:
    return False
  caught = int(re.search(r'^SigCgt:\s*([0-9a-f]+)$', status, re.MULTILINE).group(1), 16)
  return bool(caught & (1 << (signal.SIGTERM - 1)))


def _rows(run_dir, phase='train'):
  path = os.path.join(run_dir, 'metrics.jsonl')
  if not os.path.exists(path):
    return []
  with open(path, encoding='utf-8') as file:
    lines = file.read().splitlines()
  rows = []
  for line in lines:
    try:
      rows.append(json.loads(line))
    except json.JSONDecodeError:
      break  # the row being written
  return [row for row in rows if row['phase'] == phase]


def _checkpoint_steps(run_dir):
  folder = os.path.join(run_dir, 'checkpoints')
  names = os.listdir(folder) if os.path.isdir(folder) else []
  return sorted(int(match.group(1)) for match in map(re.compile(r'^ckpt-(\d+)\.index$').match,
                                                     names) if match)


@unittest.skipUnless(sys.platform.startswith('linux'), 'reads /proc and sends POSIX signals')
class SignalFaultsTest(unittest.TestCase):

  def test_sigterm_saves_a_checkpoint_and_the_run_resumes_from_it(self):
    # One run signalled both ways: first its whole process group (a terminal's or a job
    # scheduler's SIGTERM, which reaches the environment workers too; a subprocess), then,
    # resumed, its main process alone; each time it saves a checkpoint and exits (returns)
    # 128 + SIGTERM.
    logdir = tempfile.mkdtemp()
    run_dir = os.path.join(logdir, 't-cartpole')
    child = _Child(['--logdir', logdir, '--env_processes'] + _ENDLESS_RUN, new_session=True)
    child.wait_until(lambda: _rows(run_dir), 'a first metrics row')
    os.killpg(child.process.pid, signal.SIGTERM)
    code, stdout, stderr = child.finish()
    self.assertEqual(code, 128 + signal.SIGTERM, stderr)
    self.assertNotIn('Traceback', stderr)
    # Nor TensorFlow's start-up notices, nor oneDNN's line about a boolean transpose.
    self.assertNotIn('oneDNN', stderr)
    self.assertNotIn('absl::InitializeLog', stderr)
    self.assertIn('SIGTERM: stopping at the next report with a checkpoint', stderr)
    step = int(re.search(r'Run interrupted\D* at step (\d+)', stdout).group(1))
    self.assertGreaterEqual(step, _rows(run_dir)[0]['step'])
    self.assertEqual(_checkpoint_steps(run_dir)[-1], step)
    self.assertFalse(os.path.exists(os.path.join(run_dir, 'policy')))

    # Resume, in this process (`main` as `python -m` runs it): it restores that checkpoint,
    # trains on from it, and stops again on SIGTERM sent to this (its main) process alone.
    stdout = io.StringIO()
    with self.assertLogs('agents', 'INFO') as logs:
      code, stderr, _ = signal_self.run_and_signal(
          self, train_script.main, ['--logdir', logdir, '--timestamp=t', '--config=cartpole',
                                    '--quiet', '--env_processes'],
          ready=lambda: [row for row in _rows(run_dir) if row['step'] > step],
          signum=signal.SIGTERM, stdout=stdout)
    self.assertIn(f"INFO:agents.tools.loop:Restored {os.path.join(run_dir, 'checkpoints')}"
                  f'/ckpt-{step} at global step {step}.', logs.output)
    self.assertEqual(code, 128 + signal.SIGTERM, stderr)
    self.assertNotIn('Traceback', stderr + '\n'.join(logs.output))
    self.assertIn('SIGTERM: stopping at the next report with a checkpoint', stderr)
    resumed = int(re.search(r'Run interrupted\D* at step (\d+)', stdout.getvalue()).group(1))
    self.assertGreater(resumed, step)
    self.assertEqual(_checkpoint_steps(run_dir)[-2:], [step, resumed])
    steps = [row['step'] for row in _rows(run_dir)]
    self.assertEqual(steps, sorted(set(steps)), 'rows repeat or go back after the resume')

  def test_ctrl_c_twice_at_start_up_is_one_line_without_traceback(self):
    logdir = tempfile.mkdtemp()
    child = _Child(['--logdir', logdir, '--env_processes'] + _ENDLESS_RUN)
    # Start-up: the stop handlers are installed, training has not begun.
    run_dir = os.path.join(logdir, 't-cartpole')
    child.wait_until(lambda: _handles_sigterm(child.process.pid) or _rows(run_dir),
                     'the stop handlers')
    self.assertTrue(_handles_sigterm(child.process.pid), 'training began without them')
    child.process.send_signal(signal.SIGINT)
    child.wait_for_line(r'SIGINT: stopping at the next report')
    child.process.send_signal(signal.SIGINT)
    code, stdout, stderr = child.finish()
    self.assertEqual(code, 128 + signal.SIGINT, stderr)
    self.assertNotIn('Traceback', stderr)
    self.assertNotIn('KeyboardInterrupt', stderr)
    self.assertEqual(stderr.strip().splitlines()[-1],
                     'agents.scripts.train: SIGINT received twice; aborted without saving.')
    self.assertEqual(stdout, '')
    self.assertEqual(_checkpoint_steps(run_dir), [])


def _ballast_config(steps):
  return tiny_run.tiny_config(**{'algorithm.name': ballast_agent.ALGORITHM, 'loop.steps': steps})


class CheckpointFaultsTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    # A tiny run with checkpoints at steps 64 and 128; each test damages a copy. Its agent is
    # the ballast agent: what is checked is the run's, and its checkpoint is large.
    cls._trained = tempfile.mkdtemp(prefix='checkpoint-faults-')
    trainer.train(_ballast_config(128), cls._trained, quiet=True, export_policy=False)

  def _copy(self):
    logdir = tempfile.mkdtemp()
    run_dir = os.path.join(logdir, 't-cartpole')
    shutil.copytree(self._trained, run_dir)
    self.assertEqual(_checkpoint_steps(run_dir), [64, 128])
    return logdir, run_dir

  def test_truncated_newest_checkpoint_resumes_from_the_previous_one(self):
    _, run_dir = self._copy()
    newest = os.path.join(run_dir, 'checkpoints', 'ckpt-128')
    os.truncate(f'{newest}.data-00000-of-00001', 1000)
    with self.assertLogs('agents', 'INFO') as logs:
      result = trainer.train(_ballast_config(192), run_dir, quiet=True, export_policy=False)
    self.assertEqual(result['step'], 192)
    self.assertIn(f'WARNING:agents.run.checkpoints:Skipped checkpoint {newest}: it does not '
                  'restore (IndexError: Read less bytes than requested).', logs.output)
    self.assertIn(f"INFO:agents.tools.loop:Restored {os.path.join(run_dir, 'checkpoints')}"
                  '/ckpt-64 at global step 64.', logs.output)
    # The rows after step 64 were trained again, once each; ckpt-128 was rewritten.
    self.assertEqual([row['step'] for row in _rows(run_dir)], [64, 128, 192])
    self.assertIsNone(checkpoints.find_damage(newest))

  def test_every_checkpoint_damaged_is_one_line_and_exit_2(self):
    logdir, run_dir = self._copy()
    for step in (64, 128):
      os.truncate(os.path.join(run_dir, 'checkpoints', f'ckpt-{step}.index'), 10)
    # main() configures the root logger (to the redirected stderr); undo it afterwards.
    root = logging.getLogger()
    self.addCleanup(setattr, root, 'handlers', root.handlers[:])
    self.addCleanup(root.setLevel, root.level)
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
      code = train_script.main(['--config=cartpole', f'--logdir={logdir}', '--timestamp=t',
                                f'--algorithm={ballast_agent.ALGORITHM}', '--quiet'])
    self.assertEqual(code, 2)
    lines = stderr.getvalue().strip().splitlines()
    self.assertEqual(len(lines), 1, lines)
    self.assertRegex(lines[0], r'^agents\.scripts\.train: error: No checkpoint in .*/checkpoints '
                               r'restores: ckpt-128 \(.*\); ckpt-64 \(.*\)\. Move that folder '
                               r'aside to start the run over\.$')

  def test_leftovers_of_a_killed_save_are_removed_on_resume(self):
    logdir = tempfile.mkdtemp()
    loop, _ = loop_child.build(logdir)
    loop.run(20)
    # What TensorFlow leaves when the process dies inside a save of step 30.
    temp = os.path.join(loop.checkpoint_dir, 'ckpt-30_temp')
    os.makedirs(temp)
    for suffix in ('index', 'data-00000-of-00001'):
      with open(os.path.join(temp, f'part-00000-of-00001.{suffix}'), 'wb') as file:
        file.write(b'\0' * 100)
    state_temp = os.path.join(loop.checkpoint_dir, 'checkpoint.tmp' + '0' * 32)
    with open(state_temp, 'w', encoding='utf-8') as file:
      file.write('model_checkpoint_path: "ckpt-')
    resumed, _ = loop_child.build(logdir)
    self.assertEqual(resumed.restore(), 20)
    self.assertFalse(os.path.exists(temp))
    self.assertFalse(os.path.exists(state_temp))
    self.assertEqual(resumed.run(40), 40)


if __name__ == '__main__':
  unittest.main()
