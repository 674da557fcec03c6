"""QR-DQN through the public surface: the train CLI, resume, export, evaluation, refusals."""

import json
import os
import shutil
import tempfile
import unittest

import numpy as np
import tensorflow as tf

from agents import configs
from agents.evaluation import play
from agents.scripts import export
from agents.scripts import train as train_script
from agents.training import builders, trainer
from tests.helpers import commands, tiny_run


def _train_cli(test, logdir, *flags):
  """`agents.scripts.train` on QR-DQN's CartPole config, in this process: (code, stderr)."""
  return commands.run_main(test, train_script.main, [
      '--config=cartpole_qrdqn', f'--logdir={logdir}', '--timestamp=t', '--quiet', *flags])


class RunTest(unittest.TestCase):

  def test_ctrl_c_saves_the_replay_memory_the_resumed_run_goes_on_and_exports_greedily(self):
    # One run checks three facts in turn: Ctrl-C saves a checkpoint with the replay memory;
    # the interrupted run resumes with it; the finished run exports the greedy policy.
    run_dir = tempfile.mkdtemp(prefix='qrdqn-run-')
    self.addCleanup(shutil.rmtree, run_dir)
    # Ctrl-C saves a checkpoint with the replay memory.
    with tiny_run.ctrl_c_at_row(2):
      interrupted = trainer.train(tiny_run.tiny_qrdqn_config(steps=10_000), run_dir,
                                  quiet=True)
    self.assertTrue(interrupted['interrupted'])
    self.assertLess(interrupted['step'], 128)
    _, first, _, _ = builders.restore_algorithm(run_dir)
    self.assertEqual(int(first.env_steps.numpy()), interrupted['step'])
    self.assertGreater(int(first.num_updates.numpy()), 0)
    # The run resumes with its replay memory (exported below by the export command).
    result = trainer.train(tiny_run.tiny_qrdqn_config(), run_dir, quiet=True, export_policy=False)
    self.assertFalse(result['interrupted'])
    self.assertEqual(result['step'], 128)
    _, algorithm, _, _ = builders.restore_algorithm(run_dir)
    # The memory came back with the checkpoint: the cursors count every transition.
    self.assertEqual(int(algorithm.env_steps.numpy()), 128)
    self.assertGreaterEqual(int(np.sum(algorithm.memory.cursor.numpy())), 128)
    with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
      rows = [json.loads(line) for line in file]
    update = [row for row in rows if row['phase'] == 'update'][-1]
    for key in ('loss', 'q_mean', 'epsilon', 'replay_size'):
      self.assertIn(key, update)

    # The finished run exports the greedy policy.
    outdir = os.path.join(tempfile.mkdtemp(), 'policy')
    self.addCleanup(shutil.rmtree, os.path.dirname(outdir))
    self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir]), 0)
    loaded = tf.saved_model.load(outdir)
    observ = np.random.default_rng(0).normal(size=(2, 4)).astype(np.float32)
    greedy = np.argmax(algorithm.q_values(observ).numpy(), axis=1)
    np.testing.assert_array_equal(loaded.action(observ).numpy(), greedy)
    policy = play.DeterministicPolicy(run_dir)
    policy.begin_episode([0, 1])
    np.testing.assert_array_equal(policy(observ), greedy)
    env = builders.make_env(policy.config)
    steps = list(play.play_episode(env, policy, seed=0))
    env.close()
    self.assertGreater(len(steps), 0)

  def test_bad_inputs_exit_2_with_one_line_and_write_nothing(self):
    cases = {
        'algorithm.replay_capacity=8': 'algorithm.replay_capacity',
        'algorithm.epsilon_start=1.5': 'algorithm.epsilon_start',
        'algorithm.epsilon_end=-0.1': 'algorithm.epsilon_end',
        'algorithm.segment_length=16': 'algorithm.segment_length',
    }
    for override, culprit in cases.items():
      with self.subTest(override):
        logdir = tempfile.mkdtemp(prefix='qrdqn-bad-')
        self.addCleanup(shutil.rmtree, logdir)
        code, stderr = _train_cli(self, logdir, '--set', override)
        self.assertEqual(code, 2, stderr[-2000:])
        self.assertIn(culprit, stderr)
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        self.assertEqual(os.listdir(logdir), [])

  def test_continuous_action_space_is_refused_at_build_time(self):
    logdir = tempfile.mkdtemp(prefix='qrdqn-box-')
    self.addCleanup(shutil.rmtree, logdir)
    code, stderr = _train_cli(self, logdir, '--set', 'environment.id=Pendulum-v1')
    self.assertEqual(code, 2, stderr[-2000:])
    self.assertIn('QR-DQN needs a discrete action space', stderr)
    self.assertEqual(os.listdir(logdir), [])


class ExperimentTest(unittest.TestCase):

  def test_the_declared_space_is_valid_for_the_config(self):
    from agents.experiment import search_distributions, search_spaces
    space = search_distributions.check(search_spaces.for_config('cartpole_qrdqn'),
                                       configs.resolve('cartpole_qrdqn'))
    self.assertIn('algorithm.n_step', space)

  def test_the_manager_fits_and_searches_its_declared_space(self):
    from agents.experiment import ConfigExperiment
    output_dir = tempfile.mkdtemp(prefix='qrdqn-experiment-')
    self.addCleanup(shutil.rmtree, output_dir)
    overrides = {key: value for key, value in tiny_run.TINY_QRDQN_OVERRIDES.items()
                 if key != 'loop.steps'}
    experiment = ConfigExperiment('cartpole_qrdqn', n_fit=1, fit_budget=64,
                                  output_dir=output_dir, seed=0, overrides=overrides,
                                  parallelization='inline', quiet=True)
    experiment.fit()
    frame = experiment.get_writer_data()
    self.assertIn('loss', set(frame['tag']))
    # One trial draws from QR-DQN's declared space and fits it; the search over several
    # trials is the manager's own (tests/experiment/search_test.py).
    best = experiment.optimize_hyperparams(n_trials=1, n_fit=1, fit_fraction=1.0)
    self.assertIn('algorithm.n_step', best)


if __name__ == '__main__':
  unittest.main()
