"""The balloon policies shipped in models/: evaluate and visualize fly them with no training."""

import functools
import json
import os
import tempfile
import unittest

import numpy as np

from agents import configs
from agents.run import model_card, policy_record
from agents.scripts import visualize
from tests.helpers.evaluate_cli import run_cli

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'models')


@functools.cache
def _loaded(model_dir):
  """The SavedModel, loaded once per model for the tests that call it directly."""
  import tensorflow as tf
  return tf.saved_model.load(model_dir)


class ShippedModelTest(unittest.TestCase):
  """`models/balloon_ppo`: the `balloon` config's best fit, on BLE's observation."""

  MODEL_DIR = os.path.join(MODELS, 'balloon_ppo')
  OBSERVATION_SIZE = 1099
  STEPS, SEED, TWR50 = 5_577_728, 1097713535, 0.341
  # The command its history (README.md) trains it with.
  TRAINING_COMMAND = 'python -m agents.scripts.experiment fit'
  NETWORK_KIND = 'column'
  # The wind it was trained and measured in: a record saved before the wind was named
  # reads as procedural.
  WIND = 'procedural'

  def test_model_and_its_record_are_shipped(self):
    self.assertTrue(os.path.exists(os.path.join(self.MODEL_DIR, 'saved_model.pb')),
                    self.MODEL_DIR)
    with open(os.path.join(self.MODEL_DIR, 'README.md'), encoding='utf-8') as file:
      history = file.read()
    self.assertIn(self.TRAINING_COMMAND, history)
    self.assertIn('small_eval', history)

  def test_its_policy_record_loads_and_describes_these_weights(self):
    record = policy_record.load(self.MODEL_DIR)
    self.assertIsNotNone(record, f'{self.MODEL_DIR} has no policy.yaml')
    self.assertEqual(record['weights_sha256'], policy_record.weights_digest(self.MODEL_DIR))
    self.assertEqual((record['env_id'], record['observation_shape'], record['training']['steps']),
                     ('BalloonLearningEnvironment-v0', [self.OBSERVATION_SIZE], self.STEPS))
    config = configs.from_saved(record['config'], 'policy.yaml: field config')
    self.assertEqual((config['network']['kind'], config['seed']), (self.NETWORK_KIND, self.SEED))
    self.assertEqual(config['environment']['kwargs']['wind'], self.WIND)
    [evaluation] = record['evaluations']
    self.assertEqual((evaluation['suite']['name'], evaluation['suite']['num_seeds'],
                      evaluation['metric']), ('small_eval', 100, 'twr50'))
    # The number docs/results.md and README.md quote for the shipped policy.
    self.assertAlmostEqual(evaluation['statistics']['twr50']['mean'], self.TWR50, places=3)
    self.assertEqual(evaluation['weights_sha256'], record['weights_sha256'])
    with open(model_card.path_in(self.MODEL_DIR), encoding='utf-8') as file:
      self.assertEqual(file.read(), model_card.render(record))

  def test_evaluate_flies_it(self):
    outdir = tempfile.mkdtemp()
    code, out, err = run_cli(f'--agent=savedmodel:{self.MODEL_DIR}',
                             '--suite=custom:seeds=0-1,episode_length=24',
                             f'--output_dir={outdir}', '--workers=0', '--quiet', '--nogallery')
    self.assertEqual(code, 0, err)
    with open(os.path.join(outdir, 'summary.json'), encoding='utf-8') as file:
      summary = json.load(file)
    self.assertEqual(summary['num_seeds'], 2)
    self.assertEqual(summary['agent_info']['kind'], 'savedmodel')

  def test_visualize_flies_it(self):
    outdir = tempfile.mkdtemp()
    # Two steps (three frames): each frame is a whole figure drawn.
    code = visualize.main(['--savedmodel', self.MODEL_DIR, '--outdir', outdir, '--num_episodes',
                           '1', '--max_steps', '2', '--format', 'gif'])
    self.assertEqual(code, 0)
    with open(os.path.join(outdir, 'episodes.json'), encoding='utf-8') as file:
      episode = json.load(file)['episodes'][0]
    self.assertEqual(episode['length'], 2)
    self.assertTrue(0.0 <= episode['twr50'] <= 1.0)

  def test_actions_are_the_balloons(self):
    model = _loaded(self.MODEL_DIR)
    observations = np.random.default_rng(0).uniform(
        0, 1, (8, self.OBSERVATION_SIZE)).astype(np.float32)
    actions = model.action(observations).numpy()
    self.assertEqual(actions.shape, (8,))
    self.assertTrue(set(actions.tolist()) <= {0, 1, 2})


class ShippedTwoStageModelTest(ShippedModelTest):
  """`models/balloon_two_stage`: round seven's best fit of `balloon_two_stage`. It reads
  the observation option `lookahead` with two-stage features, which evaluate and
  visualize take from its record."""

  MODEL_DIR = os.path.join(MODELS, 'balloon_two_stage')
  OBSERVATION_SIZE = 1099 + 10 * 361
  STEPS, SEED, TWR50 = 9_296_128, 595862038, 0.406
  TRAINING_COMMAND = 'python -m agents.scripts.train --config=balloon_two_stage'


class ShippedQRDQNModelTest(ShippedModelTest):
  """`models/balloon_qrdqn`: the best of three from-scratch fits of `balloon_qrdqn`,
  flying greedily on BLE's observation."""

  MODEL_DIR = os.path.join(MODELS, 'balloon_qrdqn')
  STEPS, SEED, TWR50 = 4_300_800, 1878776328, 0.330

  def test_it_is_the_qrdqn_greedy_policy(self):
    model = _loaded(self.MODEL_DIR)
    observations = np.random.default_rng(1).uniform(
        0, 1, (8, self.OBSERVATION_SIZE)).astype(np.float32)
    self.assertEqual(model.quantiles(observations).shape, (8, 3, 51))
    q_values = model.q_values(observations).numpy()
    self.assertEqual(model.action(observations).numpy().tolist(),
                     q_values.argmax(axis=1).tolist())


class ShippedBLEWindModelTest(ShippedQRDQNModelTest):
  """`models/balloon_ble_wind`: Perciatelli44 fine-tuned (QR-DQN, its 7 x 600 MLP) in BLE's
  generative wind, the wind its record names, flying greedily on BLE's observation."""

  MODEL_DIR = os.path.join(MODELS, 'balloon_ble_wind')
  STEPS, SEED, TWR50 = 921_600, 0, 0.356
  TRAINING_COMMAND = 'python -m agents.scripts.train --config=balloon_finetune_perciatelli'
  NETWORK_KIND = 'mlp'
  WIND = 'generative'


if __name__ == '__main__':
  unittest.main()
