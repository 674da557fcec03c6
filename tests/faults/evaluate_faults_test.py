"""Bad input and faults of `python -m agents.scripts.evaluate`: one line, exit 2, and
nothing written or lost (issue 26, defects 3, 4 and 9, and "Concurrency")."""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest

from agents.scripts import evaluate

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _evaluate(*argv):
  """Runs the command line in this process; returns (exit code, stderr)."""
  stderr = io.StringIO()
  with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
    code = evaluate.main(['--agent=station_seeker', '--suite=micro_eval', '--quiet',
                          '--nogallery', '--workers=0', *argv])
  return code, stderr.getvalue()


class EvaluateFaultsTest(unittest.TestCase):

  def assert_one_line(self, code, stderr, fragment):
    self.assertEqual(code, 2, stderr)
    self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
    self.assertIn(fragment, stderr)

  def test_an_output_dir_that_is_a_file_is_refused_and_kept(self):
    with tempfile.NamedTemporaryFile('w', delete=False) as file:
      file.write('keep me')
    self.assert_one_line(*_evaluate(f'--output_dir={file.name}'), 'is a file, not a folder')
    with open(file.name) as kept:
      self.assertEqual(kept.read(), 'keep me')

  def test_a_slab_of_no_balloon_is_refused_before_a_folder_is_made(self):
    output_dir = os.path.join(tempfile.mkdtemp(), 'out')
    self.assert_one_line(*_evaluate(f'--output_dir={output_dir}', '--slab_size=0'),
                         '--slab_size must be an integer >= 1, got 0')
    self.assertFalse(os.path.exists(output_dir))

  def test_a_refused_agent_leaves_no_output_folder(self):
    output_dir = os.path.join(tempfile.mkdtemp(), 'out')
    self.assert_one_line(*_evaluate(f'--output_dir={output_dir}',
                                    '--agent=no_such_module_xyz:factory'),
                         "cannot import module 'no_such_module_xyz'")
    self.assertFalse(os.path.exists(output_dir))

  def test_a_second_evaluation_of_one_folder_is_refused_while_the_first_runs(self):
    output_dir = os.path.join(tempfile.mkdtemp(), 'out')
    holder = subprocess.Popen(
        [sys.executable, '-c', 'import sys, time\nfrom agents.run import directory_lock\n'
         'with directory_lock.hold(sys.argv[1], "evaluation output folder"):\n'
         '  print("held", flush=True); time.sleep(60)', output_dir],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=_REPOSITORY))
    self.addCleanup(holder.stdout.close)
    self.addCleanup(holder.wait)
    self.addCleanup(holder.kill)
    self.assertEqual(holder.stdout.readline().strip(), 'held')
    self.assert_one_line(*_evaluate(f'--output_dir={output_dir}'),
                         f'is in use by another process (pid {holder.pid}')
    self.assertEqual(os.listdir(output_dir), [])


if __name__ == '__main__':
  unittest.main()
