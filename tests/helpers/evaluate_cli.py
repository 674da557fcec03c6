"""The evaluate command line run in this process, for the tests of evaluate and of the
shipped model."""

import contextlib
import io

from agents.scripts import evaluate


def run_cli(*argv):
  """(exit code, stdout, stderr) of the evaluate command line, run in this process."""
  out, err = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = evaluate.main(list(argv))
  return code, out.getvalue(), err.getvalue()
