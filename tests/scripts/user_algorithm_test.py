"""A user's algorithm in its own package trains, resumes, exports and evaluates via the CLI.

The algorithm is the worked example of docs/usage.md, `examples/linear_softmax.py`,
copied into a temporary package outside this project, which the test puts on
`sys.path`. The commands run their `main` in this process, as the shell would run
them with that package on PYTHONPATH.
"""

import io
import json
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np
import tensorflow as tf

from agents.evaluation import play
from agents.scripts import export
from agents.scripts import train as train_script
from tests.helpers import commands

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = 'user_algorithms_for_test'


def _flags(logdir, *flags):
  return ['--config=cartpole', f'--logdir={logdir}', '--timestamp=t', '--quiet',
          f'--algorithm={PACKAGE}.linear_softmax:LinearSoftmax', '--num_agents=2',
          '--set', 'loop.steps_per_call=16', '--set', 'loop.log_every=64',
          '--set', 'algorithm.learning_rate=0.05', *flags]


def _train(test, logdir, *flags):
  """`agents.scripts.train` in this process; returns its exit code, stdout and stderr."""
  stdout = io.StringIO()
  code, stderr = commands.run_main(test, train_script.main, _flags(logdir, *flags), stdout)
  return code, stdout.getvalue(), stderr


class UserAlgorithmTest(unittest.TestCase):

  def setUp(self):
    self.package_dir = tempfile.mkdtemp(prefix='user-package-')
    self.addCleanup(shutil.rmtree, self.package_dir)
    package = os.path.join(self.package_dir, PACKAGE)
    os.makedirs(package)
    open(os.path.join(package, '__init__.py'), 'w', encoding='utf-8').close()
    shutil.copy(os.path.join(ROOT, 'examples', 'linear_softmax.py'), package)
    sys.path.insert(0, self.package_dir)
    self.addCleanup(sys.path.remove, self.package_dir)
    for name in (PACKAGE, f'{PACKAGE}.linear_softmax'):
      self.addCleanup(sys.modules.pop, name, None)

  def test_trains_resumes_exports_and_evaluates_through_the_cli(self):
    logdir = tempfile.mkdtemp(prefix='user-runs-')
    self.addCleanup(shutil.rmtree, logdir)
    code, stdout, stderr = _train(self, logdir, '--set', 'loop.steps=128')
    self.assertEqual(code, 0, stderr[-3000:])
    run_dir = os.path.join(logdir, 't-cartpole')
    self.assertIn('Run finished at step 128', stdout)
    # A finished run gets more steps; a change of its hyperparameters is refused.
    code, _, stderr = _train(self, logdir, '--set', 'loop.steps=256',
                             '--set', 'algorithm.learning_rate=0.5')
    self.assertEqual(code, 2, stderr)
    self.assertIn('algorithm.learning_rate', stderr)
    code, stdout, stderr = _train(self, logdir, '--set', 'loop.steps=256')
    self.assertEqual(code, 0, stderr[-3000:])
    self.assertIn('Run finished at step 256', stdout)
    with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
      steps = [json.loads(line)['step'] for line in file]
    self.assertEqual(steps, [64, 128, 192, 256])

    outdir = os.path.join(tempfile.mkdtemp(), 'policy')
    self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir]), 0)
    observ = np.random.default_rng(0).normal(size=(2, 4)).astype(np.float32)
    loaded = tf.saved_model.load(outdir)  # Kept: its functions reference its variables.
    actions = loaded.action(observ).numpy()
    policy = play.DeterministicPolicy(run_dir)
    policy.begin_episode([0, 1])
    # The exported policy and the restored one act alike: greedily, from the same weights.
    np.testing.assert_array_equal(actions, policy(observ))
    self.assertEqual(policy.config['algorithm'],
                     {'name': f'{PACKAGE}.linear_softmax:LinearSoftmax',
                      'learning_rate': 0.05, 'baseline_decay': 0.99})


if __name__ == '__main__':
  unittest.main()
