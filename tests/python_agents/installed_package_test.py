"""BLE's commands and gin files from an installed package, run outside the repository.

The package is laid out as a wheel installs it (setup.py's `build_py`: the packages and
their package data, nothing else of the checkout) in a temporary folder, and the
commands run from another temporary folder with only that one on PYTHONPATH.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Run from the scratch folder against the installed package: BLE's default gin files and
# `dqn` (BLE's default agent) are found there.
_CHECK = textwrap.dedent('''
    import json, os, gin
    import agents
    from agents.python_agents import agent_registry, run_helpers
    found = {'agents': os.path.dirname(agents.__file__)}
    for name in ('quantile', 'dqn', 'mlp'):
      run_helpers.bind_gin_variables(name)
      gin.clear_config()
    run_helpers.bind_gin_variables('dqn')
    found['dqn'] = type(run_helpers.create_agent('dqn', 3, (1099,))).__name__
    found['dqn_discount'] = gin.query_parameter('DQNAgent.discount')
    found['registry'] = sorted(agent_registry.REGISTRY)
    print(json.dumps(found))
''')


class InstalledPackageTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.site = tempfile.mkdtemp(prefix='site-')
    subprocess.run([sys.executable, 'setup.py', '-q', 'build_py', f'--build-lib={cls.site}'],
                   cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    cls.scratch = tempfile.mkdtemp(prefix='scratch-')
    cls.environment = dict(os.environ, PYTHONPATH=cls.site)

  def run_here(self, *arguments):
    result = subprocess.run([sys.executable, *arguments], cwd=self.scratch,
                            env=self.environment, capture_output=True, text=True,
                            timeout=300, check=False)
    self.assertEqual(result.returncode, 0, result.stderr[-2000:])
    return result.stdout

  def test_gin_files_and_dqn_are_in_the_installed_package(self):
    found = json.loads(self.run_here('-c', _CHECK).strip().splitlines()[-1])
    self.assertEqual(found['agents'], os.path.join(self.site, 'agents'))
    self.assertEqual((found['dqn'], found['dqn_discount']), ('DQNAgent', 0.993))
    self.assertLessEqual({'random', 'mlp', 'dqn', 'quantile', 'station_seeker'},
                         set(found['registry']))

  def test_train_then_eval_from_a_scratch_folder(self):
    self.run_here('-m', 'agents.python_agents.train', '--agent=mlp', '--base_dir=b',
                  '--num_iterations=1', '--max_episode_length=3', '--episodes_per_iteration=1',
                  '--collectors=jsonl')
    self.assertIn('mlp-0.npz', os.listdir(os.path.join(self.scratch, 'b', 'mlp', '1',
                                                       'checkpoints')))
    self.run_here('-m', 'agents.python_agents.eval', '--agent=mlp', '--suite=micro_eval',
                  '--output_dir=e', '--checkpoint_dir=b/mlp/1/checkpoints',
                  '--checkpoint_idx=0')
    with open(os.path.join(self.scratch, 'e', 'micro_eval', 'mlp_0.json')) as file:
      self.assertTrue(json.load(file))


if __name__ == '__main__':
  unittest.main()
