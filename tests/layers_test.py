"""The package's architecture, checked: no import cycles, and the layer contracts of
pyproject.toml ([tool.importlinter], also run by `make lint`)."""

import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class LayersTest(unittest.TestCase):

  def test_no_module_of_the_package_imports_one_that_imports_it_back(self):
    import grimp
    graph = grimp.build_graph('agents')
    cycles = sorted({tuple(sorted((module, imported)))
                     for module in graph.modules
                     for imported in graph.find_modules_directly_imported_by(module)
                     if graph.chain_exists(importer=imported, imported=module)})
    self.assertEqual(cycles, [])

  def test_the_layer_contracts_hold(self):
    lint_imports = os.path.join(os.path.dirname(sys.executable), 'lint-imports')
    result = subprocess.run([lint_imports, '--no-cache'], cwd=ROOT, capture_output=True,
                            text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=300)
    self.assertEqual(result.returncode, 0, result.stdout[-3000:])
    self.assertIn('0 broken', result.stdout)


if __name__ == '__main__':
  unittest.main()
