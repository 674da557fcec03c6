"""Tests of agents/evaluation/__init__.py: public names imported on first use."""

import subprocess
import sys
import unittest

import agents.evaluation as evaluation


class PackageTest(unittest.TestCase):

  def test_every_public_name_resolves_and_all_lists_them(self):
    self.assertEqual(sorted(evaluation.__all__), sorted(evaluation._NAMES))
    for name in evaluation.__all__:
      self.assertIsNotNone(getattr(evaluation, name), name)
    self.assertIs(evaluation.runner, sys.modules['agents.evaluation.runner'])
    with self.assertRaisesRegex(AttributeError, 'no attribute .nonexistent'):
      evaluation.nonexistent  # noqa: B018

  def test_loading_the_plugins_does_not_import_the_statistics(self):
    code = ('import sys; from agents.tools.transport import worker; worker.load_plugins(); '
            'print("scipy.stats" in sys.modules, "agents.evaluation.statistics" in sys.modules)')
    output = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            check=True).stdout.split()
    self.assertEqual(output, ['False', 'False'])


if __name__ == '__main__':
  unittest.main()
