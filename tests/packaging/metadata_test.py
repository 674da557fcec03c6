"""The distribution's metadata: one version, and the Pythons and platforms it declares.

The wheel itself is built, installed in a fresh venv and run by `wheel_check.py`, which
CI runs before the suite (it takes minutes: pip installs TensorFlow).
"""

import os
import platform
import subprocess
import sys
import unittest

import agents
from agents.experiment import manifest
from tests.packaging import wheel_check


def _setup(*options):
  """The lines `python setup.py <options>` prints (setuptools' metadata queries)."""
  result = subprocess.run([sys.executable, 'setup.py', *options], cwd=wheel_check.ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
  return result.stdout.strip().splitlines()


class MetadataTest(unittest.TestCase):

  def test_the_version_is_written_once_in_agents_init(self):
    self.assertRegex(agents.__version__, r'^\d+\.\d+\.\d+')
    self.assertEqual(_setup('--version')[-1], agents.__version__)
    self.assertEqual(wheel_check.source_version(), agents.__version__)
    self.assertEqual(manifest.project_version(), agents.__version__)

  def test_the_python_and_platform_this_machine_tests_are_declared(self):
    classifiers = _setup('--classifiers')
    python = '.'.join(platform.python_version_tuple()[:2])
    self.assertIn(f'Programming Language :: Python :: {python}', classifiers)
    if sys.platform.startswith('linux'):
      self.assertIn('Operating System :: POSIX :: Linux', classifiers)

  def test_the_data_read_at_run_time_is_found_and_the_model_is_shipped_beside(self):
    files = wheel_check.package_data_files()
    self.assertTrue(any(path.endswith('/strata.json') for path in files), files)
    self.assertTrue(all(os.path.exists(os.path.join(wheel_check.ROOT, path))
                        for path in files))
    self.assertTrue(os.path.exists(os.path.join(wheel_check.MODEL, 'saved_model.pb')))


if __name__ == '__main__':
  unittest.main()
