"""Two training runs with the same seed end with the same weights, bit for bit.

End to end through `trainer.train`: environments in worker processes, episodes that end
and reset many times within the run, updates, a mid-run checkpoint. Each algorithm
trains twice with one seed and once with another; the saved checkpoints must agree
exactly, and differ for the other seed (so the comparison can fail).
"""

import os
import shutil
import tempfile
import unittest

import numpy as np
import tensorflow as tf

from agents.run import checkpoints
from agents.training import trainer
from tests.helpers import tiny_run

# Enough steps that CartPole episodes (some 10-40 steps with an untrained policy) end
# and reset several times in each of the two environments.
_STEPS = 256


def _ppo(seed):
  return tiny_run.tiny_config(**{'seed': seed, 'loop.steps': _STEPS,
                                 'environment.processes': True})


def _qrdqn(seed):
  return tiny_run.tiny_qrdqn_config(**{
      'seed': seed, 'environment.processes': True, 'loop.steps': _STEPS,
      'loop.log_every': 128, 'loop.checkpoint_every': 128})


class SameSeedTrainingTest(unittest.TestCase):

  def _trained_tensors(self, config):
    """Every tensor of the newest checkpoint of a fresh run of `config`, by name."""
    run_dir = tempfile.mkdtemp(prefix='determinism-')
    self.addCleanup(shutil.rmtree, run_dir)
    result = trainer.train(config, run_dir, quiet=True, export_policy=False)
    self.assertEqual(result['step'], _STEPS)
    reader = tf.train.load_checkpoint(
        checkpoints.newest_readable(os.path.join(run_dir, 'checkpoints')))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if name != '_CHECKPOINTABLE_OBJECT_GRAPH'}

  def _check(self, make_config):
    first = self._trained_tensors(make_config(seed=5))
    again = self._trained_tensors(make_config(seed=5))
    other = self._trained_tensors(make_config(seed=6))
    self.assertEqual(sorted(first), sorted(again))
    differing = [name for name in first if not np.array_equal(first[name], again[name])]
    self.assertEqual(differing, [], 'the same seed trained different tensors')
    self.assertTrue(any(not np.array_equal(first[name], other[name]) for name in first),
                    'another seed trained the same weights')

  def test_ppo_in_worker_processes(self):
    self._check(_ppo)

  def test_qrdqn_in_worker_processes(self):
    self._check(_qrdqn)


if __name__ == '__main__':
  unittest.main()
