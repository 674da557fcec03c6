"""Tests of agents/scripts/export.py: the SavedModel loads and acts without this package."""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np
import tensorflow as tf

from agents.run import export as export_lib
from agents.run import model_card, policy_record
from agents.scripts import export
from agents.training import builders
from tests.helpers import tiny_run
from tests.helpers.evaluate_cli import run_cli

SHORT_SUITE = 'custom:seeds=0-1,episode_length=20'


class ExportTest(unittest.TestCase):

  def test_gaussian_policy_matches_algorithm_with_normalisation_and_clipping(self):
    config = tiny_run.tiny_config('pendulum', init_std=0.5)
    env = builders.make_env(config)
    algorithm = builders.build_algorithm(config, env.observation_space, env.action_space)
    rng = np.random.default_rng(0)
    algorithm.observ_normalize.update(rng.normal(5.0, 3.0, size=(50, 3)).astype(np.float32))
    # Scale the output layer up so some actions leave [-2, 2] and get clipped.
    head = algorithm.network.policy_mlp.head
    head.kernel.assign(head.kernel * 1000.0)
    path = export_lib.save_policy(algorithm, env.observation_space,
                                os.path.join(tempfile.mkdtemp(), 'policy'))
    observ = rng.normal(5.0, 3.0, size=(16, 3)).astype(np.float32)
    loaded = tf.saved_model.load(path)
    actions = loaded.action(observ).numpy()
    params, _ = algorithm.network.policy(algorithm.normalize_observ(observ),
                                         algorithm.network.initial_state(16))
    expected = np.clip(params.numpy()[:, :1], -2.0, 2.0)
    np.testing.assert_allclose(actions, expected, rtol=1e-5)
    self.assertTrue(np.any(np.abs(actions) == 2.0))
    self.assertEqual(loaded.value(observ).shape, (16,))

  def test_recurrent_policy_carries_its_state(self):
    config = tiny_run.tiny_config(kind='recurrent', gru_units=4)
    env = builders.make_env(config)
    algorithm = builders.build_algorithm(config, env.observation_space, env.action_space)
    loaded = tf.saved_model.load(export_lib.save_policy(
        algorithm, env.observation_space, os.path.join(tempfile.mkdtemp(), 'policy')))
    state = loaded.initial_state(3)
    self.assertEqual(state.shape, (3, 4))
    observ = np.ones((3, 4), np.float32)
    output = loaded.action(observ, state)
    _, expected_state = algorithm.network.policy(algorithm.normalize_observ(observ),
                                                 tf.zeros([3, 4]))
    np.testing.assert_allclose(output['state'].numpy(), expected_state.numpy(), rtol=1e-5)
    self.assertEqual(output['action'].shape, (3,))

  def test_trained_policy_loads_without_the_package(self):
    run_dir, _ = tiny_run.tiny_run()
    observ = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32)
    _, algorithm, _, _ = builders.restore_algorithm(run_dir, is_training=False)
    expected = algorithm.perform(tf.range(2), observ[:2]).numpy()
    script = textwrap.dedent(f"""
        import sys
        sys.modules['agents'] = None  # Any import of this package now fails.
        import numpy as np, tensorflow as tf
        policy = tf.saved_model.load({os.path.join(run_dir, 'policy')!r})
        observ = np.array({observ.tolist()!r}, np.float32)
        print(policy.action(observ).numpy().tolist())
        """)
    output = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                            cwd=tempfile.gettempdir(), timeout=120,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3'))
    self.assertEqual(output.returncode, 0, output.stderr[-2000:])
    actions = eval(output.stdout.strip().splitlines()[-1])  # A plain list of ints.
    self.assertEqual(len(actions), 5)
    self.assertEqual(actions[:2], expected.tolist())

  def test_command_line_exports_the_latest_checkpoint(self):
    run_dir, _ = tiny_run.tiny_run()
    outdir = os.path.join(tempfile.mkdtemp(), 'exported')
    self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir]), 0)
    self.assertTrue(os.path.exists(os.path.join(outdir, 'saved_model.pb')))

  def test_a_damaged_newest_checkpoint_is_skipped(self):
    run_dir = os.path.join(tempfile.mkdtemp(), 'run')
    shutil.copytree(tiny_run.tiny_run()[0], run_dir)
    newest = tf.train.latest_checkpoint(os.path.join(run_dir, 'checkpoints'))
    for data in tf.io.gfile.glob(newest + '.data-*'):
      os.truncate(data, 100)
    outdir = os.path.join(tempfile.mkdtemp(), 'exported')
    with self.assertLogs('agents.run.checkpoints', 'WARNING') as logs:
      self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir]), 0)
    self.assertIn(os.path.basename(newest), logs.output[0])
    self.assertTrue(os.path.exists(os.path.join(outdir, 'saved_model.pb')))



class ExportRecordTest(unittest.TestCase):
  """The record (policy.yaml) and model card that export writes beside the SavedModel."""

  def test_writes_the_record_and_the_card_without_evaluations(self):
    run_dir, _ = tiny_run.tiny_run()
    outdir = os.path.join(tempfile.mkdtemp(), 'exported')
    self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir,
                                  '--name', 'cartpole_tiny']), 0)
    record = policy_record.load(outdir)
    self.assertEqual((record['name'], record['env_id'], record['observation_shape']),
                     ('cartpole_tiny', 'CartPole-v1', [4]))
    self.assertEqual((record['training']['steps'], record['training']['checkpoint']),
                     (128, 'ckpt-128'))
    self.assertEqual(record['evaluations'], [])
    self.assertEqual(record['weights_sha256'], policy_record.weights_digest(outdir))
    with open(model_card.path_in(outdir), encoding='utf-8') as file:
      self.assertIn('Not evaluated', file.read())

  def test_eval_suite_records_what_it_measured_on_the_export(self):
    run_dir, _ = tiny_run.tiny_run()
    outdir = os.path.join(tempfile.mkdtemp(), 'exported')
    argv = ['--logdir', run_dir, '--outdir', outdir, f'--eval_suite={SHORT_SUITE}',
            '--workers=0']
    self.assertEqual(export.main(argv), 0)
    [evaluation] = policy_record.load(outdir)['evaluations']
    self.assertEqual((evaluation['suite']['name'], evaluation['suite']['num_seeds'],
                      evaluation['metric']), (SHORT_SUITE, 2, 'cumulative_reward'))
    self.assertTrue(evaluation['command'].startswith('python -m agents.scripts.export --logdir'))
    # CartPole pays 1 per step: the tiny policy's return lies within the episode length.
    self.assertTrue(0 < evaluation['statistics']['cumulative_reward']['mean'] <= 20)

  def test_an_evaluation_of_the_exported_checkpoint_is_recorded_and_another_refused(self):
    run_dir, _ = tiny_run.tiny_run()
    evaluations = tempfile.mkdtemp()
    for name in ('ckpt-64', 'ckpt-128'):
      code, _, err = run_cli(f'--agent=run:{run_dir}', f'--checkpoint={name}',
                             f'--suite={SHORT_SUITE}', f'--output_dir={evaluations}/{name}',
                             '--workers=0', '--quiet', '--nogallery')
      self.assertEqual(code, 0, err)
    outdir = os.path.join(tempfile.mkdtemp(), 'exported')
    self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir,
                                  f'--evaluation={evaluations}/ckpt-64']), 2)
    self.assertFalse(os.path.exists(outdir))
    self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir,
                                  f'--evaluation={evaluations}/ckpt-128']), 0)
    [evaluation] = policy_record.load(outdir)['evaluations']
    self.assertIn('--checkpoint=ckpt-128', evaluation['command'])

  def test_an_unknown_suite_is_refused_before_anything_is_written(self):
    run_dir, _ = tiny_run.tiny_run()
    outdir = os.path.join(tempfile.mkdtemp(), 'exported')
    self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir,
                                  '--eval_suite=no_such_suite']), 2)
    self.assertFalse(os.path.exists(outdir))

  def test_exporting_again_replaces_the_record_of_the_old_weights(self):
    run_dir, _ = tiny_run.tiny_run()
    outdir = os.path.join(tempfile.mkdtemp(), 'exported')
    self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir,
                                  f'--eval_suite={SHORT_SUITE}', '--workers=0']), 0)
    self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir, '--checkpoint',
                                  os.path.join(run_dir, 'checkpoints', 'ckpt-64')]), 0)
    record = policy_record.load(outdir)
    self.assertEqual((record['training']['steps'], record['evaluations']), (64, []))


if __name__ == '__main__':
  unittest.main()
