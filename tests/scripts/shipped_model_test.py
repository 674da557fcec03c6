"""The balloon policy shipped in models/: evaluate and visualize fly it with no training."""

import json
import os
import tempfile
import unittest

import numpy as np

from agents.scripts import visualize
from tests.helpers.evaluate_cli import run_cli

MODEL_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'models', 'balloon_ppo')


class ShippedModelTest(unittest.TestCase):

  def test_model_and_its_record_are_shipped(self):
    self.assertTrue(os.path.exists(os.path.join(MODEL_DIR, 'saved_model.pb')), MODEL_DIR)
    with open(os.path.join(MODEL_DIR, 'README.md'), encoding='utf-8') as file:
      record = file.read()
    self.assertIn('python -m agents.scripts.experiment fit', record)
    self.assertIn('small_eval', record)

  def test_evaluate_flies_it(self):
    outdir = tempfile.mkdtemp()
    code, out, err = run_cli(f'--agent=savedmodel:{MODEL_DIR}',
                             '--suite=custom:seeds=0-1,episode_length=24',
                             f'--output_dir={outdir}', '--workers=0', '--quiet', '--nogallery')
    self.assertEqual(code, 0, err)
    with open(os.path.join(outdir, 'summary.json'), encoding='utf-8') as file:
      summary = json.load(file)
    self.assertEqual(summary['num_seeds'], 2)
    self.assertEqual(summary['agent_info']['kind'], 'savedmodel')

  def test_visualize_flies_it(self):
    outdir = tempfile.mkdtemp()
    code = visualize.main(['--savedmodel', MODEL_DIR, '--outdir', outdir, '--num_episodes',
                           '1', '--max_steps', '6', '--format', 'gif'])
    self.assertEqual(code, 0)
    with open(os.path.join(outdir, 'episodes.json'), encoding='utf-8') as file:
      episode = json.load(file)['episodes'][0]
    self.assertEqual(episode['length'], 6)
    self.assertTrue(0.0 <= episode['twr50'] <= 1.0)

  def test_actions_are_the_balloons(self):
    import tensorflow as tf
    model = tf.saved_model.load(MODEL_DIR)
    observations = np.random.default_rng(0).uniform(0, 1, (8, 1099)).astype(np.float32)
    actions = model.action(observations).numpy()
    self.assertEqual(actions.shape, (8,))
    self.assertTrue(set(actions.tolist()) <= {0, 1, 2})


if __name__ == '__main__':
  unittest.main()
