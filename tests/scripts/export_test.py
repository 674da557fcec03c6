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

from agents import builders, training
from agents.scripts import export
from tests.helpers import tiny_run


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
    path = training.save_policy(algorithm, env.observation_space,
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
    loaded = tf.saved_model.load(training.save_policy(
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
    with self.assertLogs('agents.tools.checkpoints', 'WARNING') as logs:
      self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir]), 0)
    self.assertIn(os.path.basename(newest), logs.output[0])
    self.assertTrue(os.path.exists(os.path.join(outdir, 'saved_model.pb')))


if __name__ == '__main__':
  unittest.main()
