"""Bad input to `python -m agents.scripts.visualize`: one line, exit 2 (issue 26, defect 8)."""

import contextlib
import io
import os
import tempfile
import unittest

from agents.scripts import visualize
from tests.helpers import tiny_run


class VisualizeFaultsTest(unittest.TestCase):

  def test_a_savedmodel_of_another_environment_is_one_line(self):
    run_dir, _ = tiny_run.tiny_run()  # CartPole: observations of 4 floats
    outdir = os.path.join(tempfile.mkdtemp(), 'out')
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
      code = visualize.main(['--savedmodel', os.path.join(run_dir, 'policy'),
                             '--config=balloon', '--outdir', outdir])
    self.assertEqual(code, 2, stderr.getvalue())
    self.assertEqual(len(stderr.getvalue().strip().splitlines()), 1, stderr.getvalue())
    self.assertIn('takes observations of shape (None, 4), not [B, 1099] (the environment of '
                  "config 'balloon')", stderr.getvalue())
    self.assertFalse(os.path.exists(outdir))


if __name__ == '__main__':
  unittest.main()
