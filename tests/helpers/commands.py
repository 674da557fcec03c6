"""Runs a command's `main(argv)` in the test's own process, as a user's shell would run it."""

import contextlib
import io
import logging


def run_main(test, main, argv, stdout=None):
  """`main(argv)` with stdout and stderr captured; returns (exit code, stderr).

  A `SystemExit` (argparse's refusals) gives its code. What the command prints goes to
  `stdout` (a `StringIO`, say), if given, else nowhere. The commands configure the root
  logger (to the captured stderr): `test` restores it when it ends.
  """
  root = logging.getLogger()
  test.addCleanup(setattr, root, 'handlers', root.handlers[:])
  test.addCleanup(root.setLevel, root.level)
  stderr = io.StringIO()
  with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout or io.StringIO()):
    try:
      code = main(argv)
    except SystemExit as exit_:
      code = exit_.code
  return code, stderr.getvalue()
