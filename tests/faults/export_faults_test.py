"""Bad input to `python -m agents.scripts.export`: one line, exit 2, nothing written."""

import contextlib
import io
import os
import shutil
import tempfile
import unittest

from agents.scripts import export
from tests.helpers import tiny_run


def _export(*argv):
  stderr = io.StringIO()
  with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
    code = export.main(list(argv))
  return code, stderr.getvalue()


class ExportFaultsTest(unittest.TestCase):

  def test_each_bad_input_is_one_line_and_writes_nothing(self):
    run_dir, _ = tiny_run.tiny_run()
    scratch = tempfile.mkdtemp()
    no_checkpoint = os.path.join(scratch, 'no-checkpoint')
    os.makedirs(no_checkpoint)
    shutil.copy(os.path.join(run_dir, 'config.yaml'), no_checkpoint)
    a_file = os.path.join(scratch, 'a-file')
    with open(a_file, 'w') as file:
      file.write('keep me')
    cases = [
        (['--logdir', os.path.join(scratch, 'missing'), '--outdir', f'{scratch}/o1'],
         'does not exist'),
        (['--logdir', scratch, '--outdir', f'{scratch}/o2'], 'has no config.yaml'),
        (['--logdir', no_checkpoint, '--outdir', f'{scratch}/o3'], 'checkpoint'),
        (['--logdir', run_dir, '--outdir', a_file], 'is a file, not a directory'),
        (['--logdir', run_dir, '--checkpoint', 'ckpt-999', '--outdir', f'{scratch}/o4'],
         'ckpt-999'),
        (['--outdir', f'{scratch}/o5'], 'required: --logdir'),
        (['--logdir', run_dir, '--outdir', f'{scratch}/o6', '--eval_suite=huge_eval'],
         "unknown suite 'huge_eval'"),
        (['--logdir', run_dir, '--outdir', f'{scratch}/o7', '--evaluation',
          f'{scratch}/no-evaluation'], '--evaluation'),
        (['--logdir', run_dir, '--outdir', f'{scratch}/o8', '--average_last', '5'],
         'keeps 2 checkpoint(s)'),
    ]
    for argv, fragment in cases:
      with self.subTest(argv=argv):
        with self.assertRaises(SystemExit) if '--logdir' not in argv else \
            contextlib.nullcontext():
          code, stderr = _export(*argv)
          self.assertEqual(code, 2, stderr)
          self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
          self.assertIn(fragment, stderr)
    self.assertEqual(sorted(os.listdir(scratch)), ['a-file', 'no-checkpoint'])
    with open(a_file) as file:
      self.assertEqual(file.read(), 'keep me')


if __name__ == '__main__':
  unittest.main()
