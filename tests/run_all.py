"""Runs the whole unittest suite and ends with a plain `N passed, N failed` line.

`python -m unittest discover` reports counts only as `Ran N tests`; CI and
people both want the plain tally, so this wraps the same discovery.

    python -m tests.run_all [-k PATTERN]
"""

import argparse
import os
import sys
import unittest


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('-k', dest='patterns', action='append', default=None,
                      help='Only run tests whose name contains this substring.')
  parser.add_argument('-v', '--verbose', action='store_true')
  args = parser.parse_args(argv)
  top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  loader = unittest.TestLoader()
  if args.patterns:
    loader.testNamePatterns = [f'*{p}*' for p in args.patterns]
  suite = loader.discover(top, top_level_dir=top)
  runner = unittest.TextTestRunner(verbosity=2 if args.verbose else 1)
  result = runner.run(suite)
  failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
  skipped = len(result.skipped)
  passed = result.testsRun - failed - skipped
  line = f'{passed} passed, {failed} failed'
  if skipped:
    line += f', {skipped} skipped'
  print(line)
  return 0 if failed == 0 else 1


if __name__ == '__main__':
  sys.exit(main())
