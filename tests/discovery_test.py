"""BatchPPO's test command, `python3 -m unittest discover -p "*"`, and the plain
`python -m unittest discover`, run from the repository root, load the suite that
`python -m tests.run_all` runs (see the `load_tests` hooks of `tests` and `agents`)."""

import json
import subprocess
import sys
import unittest

from tests.helpers.processes import ROOT

# In a fresh process at the repository root (as the commands run): the test ids that each
# discovery loads, the ids of run_all's modules, and one test run by the command's own
# code path (`python -m unittest` is `unittest.main(module=None)`), filtered by -k.
_SCRIPT = """
import json, sys, unittest
from tests import run_all

def ids(suite):
  if isinstance(suite, unittest.TestSuite):
    return [name for item in suite for name in ids(item)]
  return [suite.id()]

star = ids(unittest.TestLoader().discover('.', pattern='*'))
default = ids(unittest.TestLoader().discover('.'))
modules = ids(unittest.TestSuite(unittest.TestLoader().loadTestsFromName(name)
                                 for name in run_all.test_modules()))
program = unittest.main(module=None, exit=False, verbosity=0, argv=[
    'python -m unittest', 'discover', '-p', '*', '-k', 'test_finds_test_files_in_packages_only'])
json.dump({'star': star, 'default': default, 'modules': modules,
           'ran': program.result.testsRun, 'ok': program.result.wasSuccessful()}, sys.stdout)
"""


class DiscoveryTest(unittest.TestCase):

  def test_unittest_discover_loads_the_suite_from_the_repository_root(self):
    process = subprocess.run([sys.executable, '-c', _SCRIPT], cwd=ROOT, capture_output=True,
                             text=True, timeout=300, check=False)
    self.assertEqual(process.returncode, 0, process.stderr)
    found = json.loads(process.stdout.strip().splitlines()[-1])
    self.assertFalse([name for name in found['star'] if 'FailedTest' in name],
                     'modules that did not load')
    self.assertEqual(sorted(found['star']), sorted(found['modules']))
    self.assertEqual(sorted(found['default']), sorted(found['modules']))
    self.assertEqual((found['ran'], found['ok']), (1, True), process.stderr)


if __name__ == '__main__':
  unittest.main()
