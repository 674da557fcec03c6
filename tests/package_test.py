"""Tests of the package's entry points (agents/__init__.py, the tools and training packages)."""

import os
import subprocess
import sys
import unittest

import agents
from agents import tools, training

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class PackageTest(unittest.TestCase):

  def test_tools_and_training_export_the_framework_entry_points(self):
    for package, names in ((tools, ('BatchEnv', 'ExternalProcess', 'InGraphBatchEnv',
                                    'FusedStep', 'Loop', 'NonFiniteError')),
                           (training, ('FusedStep', 'Loop', 'train'))):
      for name in names:
        self.assertIn(name, package.__all__)
        self.assertEqual(getattr(package, name).__name__, name)
    self.assertEqual(agents.configs.__name__, 'agents.configs')
    self.assertEqual(agents.training.train.__module__, 'agents.training.trainer')
    self.assertIs(training.FusedStep, tools.FusedStep)

  def test_tools_reaches_its_modules_by_attribute_as_batchppo_users_write(self):
    self.assertEqual(tools.wrappers.ExternalProcess.__name__, 'ExternalProcess')
    self.assertEqual(tools.batch_env.BatchEnv.__name__, 'BatchEnv')
    with self.assertRaisesRegex(AttributeError, 'no attribute'):
      tools.no_such_module  # noqa: B018

  def test_every_layer_is_an_entry_point_and_every_command_line_a_console_script(self):
    self.assertEqual(agents.evaluation.__name__, 'agents.evaluation')
    self.assertEqual(agents.experiment.__name__, 'agents.experiment')
    self.assertEqual(agents.plugins.__name__, 'agents.plugins')
    import importlib.metadata
    scripts = {entry.value for entry in importlib.metadata.entry_points(
        group='console_scripts') if entry.value.startswith('agents.scripts.')}
    # configs.py and networks.py are BatchPPO's faces over the library, not commands.
    faces = {'__init__.py', 'configs.py', 'networks.py'}
    commands = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, 'agents', 'scripts'))
                      if name.endswith('.py') and name not in faces)
    self.assertEqual(sorted(scripts), [f'agents.scripts.{name}:main' for name in commands])

  def test_resolving_a_config_does_not_import_tensorflow(self):
    script = ('import sys; from agents import configs; configs.resolve("balloon"); '
              'print("tensorflow" in sys.modules)')
    output = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    self.assertEqual(output.stdout.strip(), 'False', output.stderr[-2000:])


if __name__ == '__main__':
  unittest.main()
