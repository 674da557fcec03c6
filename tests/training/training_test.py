"""Tests of agents/training/trainer.py: the run directory, resume, Ctrl-C."""

import json
import os
import shutil
import signal
import tempfile
import unittest
from unittest import mock

from agents import configs, plugins
from agents.run import export, run_manifest
from agents.tools import episode_collectors
from agents.training import builders, trainer
from tests.helpers import tiny_experiment, tiny_run


def _rows(run_dir):
  with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
    return [json.loads(line) for line in file]


def _copy_of_tiny_run():
  """A fresh copy of the shared tiny run (finished at step 128, checkpoints at 64 and 128)."""
  run_dir = os.path.join(tempfile.mkdtemp(), 'run')
  shutil.copytree(tiny_run.tiny_run()[0], run_dir)
  return run_dir


class TrainTest(unittest.TestCase):

  def test_run_directory_contents(self):
    run_dir, result = tiny_run.tiny_run()
    self.assertEqual(result['step'], 128)
    self.assertFalse(result['interrupted'])
    for name in ('config.yaml', 'metrics.jsonl', 'checkpoints', 'train', 'policy'):
      self.assertTrue(os.path.exists(os.path.join(run_dir, name)), name)
    self.assertTrue(any(name.startswith('events.out.tfevents')
                        for name in os.listdir(os.path.join(run_dir, 'train'))))
    rows = _rows(run_dir)
    train_rows = [row for row in rows if row['phase'] == 'train']
    update_rows = [row for row in rows if row['phase'] == 'update']
    self.assertEqual([row['step'] for row in train_rows], [64, 128])
    # 128 steps / (2 agents * 16 steps) = 4 updates.
    self.assertEqual(update_rows[-1]['updates'], 4)
    for key in ('policy_loss', 'value_loss', 'kl', 'kl_penalty', 'entropy', 'clip_fraction',
                'explained_variance', 'gradient_norm', 'observ_mean', 'observ_std'):
      self.assertIn(key, update_rows[-1])
    self.assertEqual(configs.load_yaml(os.path.join(run_dir, 'config.yaml')),
                     tiny_run.tiny_config())
    # run.yaml says where the environments stepped.
    session = run_manifest.read(run_dir)['sessions'][-1]
    processes = tiny_run.tiny_config()['environment']['processes']
    self.assertEqual(session['environments']['processes'], processes is True)
    self.assertEqual(session['environments']['rule'],
                     'auto' if processes == 'auto' else 'config')

  def test_a_finished_run_extended_continues_until_ctrl_c_saves_a_checkpoint(self):
    # One run checks two facts: a finished run extended by more steps (and another log
    # cadence) continues from its checkpoint; Ctrl-C saves a checkpoint and stops.
    self.assertEqual(tiny_run.tiny_run()[1]['step'], 128)
    run_dir = _copy_of_tiny_run()
    handler_before = signal.getsignal(signal.SIGINT)  # SIG_IGN when run in the background
    longer = tiny_run.tiny_config(steps=10_000, log_every=32)
    ctrl_c = tiny_run.ctrl_c_at_row(2)
    calls = ctrl_c.steps
    with ctrl_c:
      result = trainer.train(longer, run_dir, quiet=True)
    # The finished run continued from its checkpoint at 128, with the new cadence.
    self.assertEqual(calls, [160, 192])
    self.assertEqual(configs.load_yaml(os.path.join(run_dir, 'config.yaml')), longer)
    steps = [row['step'] for row in _rows(run_dir) if row['phase'] == 'train']
    self.assertEqual(steps, [64, 128, 160, 192])
    _, algorithm, _, _ = builders.restore_algorithm(run_dir)
    self.assertEqual(int(algorithm.num_updates.numpy()), 6)  # 192 / (2 agents * 16 steps)
    # Ctrl-C saved a checkpoint at the step it stopped, and put the handler back.
    self.assertTrue(result['interrupted'])
    self.assertEqual(result['step'], calls[-1])
    checkpoints = os.listdir(os.path.join(run_dir, 'checkpoints'))
    self.assertIn(f"ckpt-{result['step']}.index", checkpoints)
    self.assertIs(signal.getsignal(signal.SIGINT), handler_before)  # restored

  def test_resume_refuses_other_changes_before_writing(self):
    run_dir = _copy_of_tiny_run()
    path = os.path.join(run_dir, 'config.yaml')
    with open(path, encoding='utf-8') as file:
      before = file.read()
    with self.assertRaisesRegex(configs.ConfigError, 'algorithm.learning_rate'):
      trainer.train(tiny_run.tiny_config(steps=192, learning_rate=1e-2), run_dir, quiet=True)
    with open(path, encoding='utf-8') as file:
      self.assertEqual(file.read(), before)


class _EpisodeCounter(episode_collectors.EpisodeCollector):
  """A collector registered for CartPole-v1 by the test: counts finished episodes."""

  def __init__(self, batch_size):
    del batch_size
    self.finished = 0

  def step(self, reward, terminated, truncated, infos):
    self.finished += int((terminated | truncated).sum())

  def totals(self):
    return {'episodes_seen': (self.finished, float(self.finished))}


class _CountingPlugin(plugins.EnvironmentPlugin):
  """CartPole-v1's plug-in in the test: its episodes counted in every training row."""

  def episode_collectors(self, environment, batch_size):
    del environment
    return [_EpisodeCounter(batch_size)]


class _RecordingEvaluator:
  """A `plugins.TRAINING_EVALUATORS['suite']` stand-in that records when it flies."""

  metric = 'value'
  steps = []

  @staticmethod
  def check(config, key='eval_suite'):
    if config['loop'][key] != 'recorded':
      raise ValueError(f"Config key 'loop.{key}' = {config['loop'][key]!r} is "
                       'not a recorded suite.')

  def __init__(self, config, algorithm, observation_space, run_dir, metrics,
               key='eval_suite'):
    del config, algorithm, observation_space, run_dir
    self._metrics = metrics
    self.key = key

  def __call__(self, step):
    _RecordingEvaluator.steps.append(step)
    row = dict(step=step, phase=self.key, value=1.0)
    self._metrics.write(row)
    return row


class BestPolicyTest(unittest.TestCase):
  """`loop.select_suite`'s keeper: only a strictly higher score replaces the weights."""

  def _keeper(self, run_dir, saves):
    def save(path, step, notes):
      os.makedirs(path, exist_ok=True)
      saves.append((step, notes))
    return export.BestPolicy(run_dir, save)

  def test_only_a_strictly_higher_score_replaces_and_a_resumed_run_goes_on_from_it(self):
    run_dir, saves = tempfile.mkdtemp(), []
    keeper = self._keeper(run_dir, saves)
    self.assertIsNone(keeper.best)
    offers = [(100, 0.30), (200, 0.35), (300, 0.35), (400, 0.31)]
    self.assertEqual([keeper.offer(step, 'val', 'twr50', value) for step, value in offers],
                     [True, True, False, False])
    self.assertEqual([step for step, _ in saves], [100, 200])
    self.assertIn('twr50 0.3500 on val', saves[-1][1])
    self.assertEqual(export.BestPolicy.read(run_dir),
                     dict(step=200, suite='val', metric='twr50', value=0.35))
    resumed = self._keeper(run_dir, saves)  # a new process on the same run
    self.assertEqual(resumed.best['step'], 200)
    self.assertFalse(resumed.offer(500, 'val', 'twr50', 0.34))
    self.assertTrue(resumed.offer(600, 'val', 'twr50', 0.36))
    self.assertEqual(export.BestPolicy.read(run_dir)['step'], 600)

  def test_the_trackers_get_the_best_policy_of_a_finished_run(self):
    from agents.run import tracking
    run_dir, saves = tempfile.mkdtemp(), []
    for name in ('config.yaml', 'policy'):
      os.makedirs(os.path.join(run_dir, name))
    self.assertNotIn(os.path.join(run_dir, 'best_policy'),
                     trainer._artifacts(run_dir, tracking.FINISHED))
    self._keeper(run_dir, saves).offer(100, 'val', 'twr50', 0.3)
    self.assertIn(os.path.join(run_dir, 'best_policy'),
                  trainer._artifacts(run_dir, tracking.FINISHED))
    self.assertEqual(trainer._artifacts(run_dir, tracking.INTERRUPTED),
                     [os.path.join(run_dir, 'config.yaml')])

  def test_a_save_that_fails_leaves_no_claim_about_the_weights(self):
    run_dir, saves = tempfile.mkdtemp(), []
    keeper = self._keeper(run_dir, saves)
    keeper.offer(100, 'val', 'twr50', 0.3)

    def failing_save(path, step, notes):
      raise OSError('disk full')

    keeper = export.BestPolicy(run_dir, failing_save)
    with self.assertRaisesRegex(OSError, 'disk full'):
      keeper.offer(200, 'val', 'twr50', 0.4)
    self.assertIsNone(export.BestPolicy.read(run_dir))


class PluggedInTest(unittest.TestCase):
  """Training takes the environment's collectors and the suite evaluator from the registries."""

  def test_collectors_join_every_row_and_the_suite_evaluator_flies_after_each_eval(self):
    # One run checks both registries: the collectors registered for the environment, and
    # the suite evaluator.
    plugins.ENVIRONMENTS.register('CartPole-v1', _CountingPlugin())
    self.addCleanup(plugins.ENVIRONMENTS.unregister, 'CartPole-v1')
    real_get = plugins.TRAINING_EVALUATORS.get

    def fake_get(name):
      return _RecordingEvaluator if name == 'suite' else real_get(name)

    _RecordingEvaluator.steps = []
    run_dir = os.path.join(tempfile.mkdtemp(), 'run')
    # The linear softmax policy: what is checked is the trainer's, whatever learns.
    suite = {'steps': 64, 'log_every': 32, 'eval_every': 32, 'eval_steps': 32,
             'algorithm.name': tiny_experiment.LINEAR_SOFTMAX}
    with mock.patch.object(plugins.TRAINING_EVALUATORS, 'get', side_effect=fake_get):
      with self.assertRaisesRegex(configs.ConfigError, "'loop.eval_suite' = 'other'"):
        trainer.train(tiny_run.tiny_config(eval_suite='other', **suite), run_dir, quiet=True)
      self.assertFalse(os.path.exists(run_dir))  # refused before anything is written
      trainer.train(tiny_run.tiny_config(eval_suite='recorded', **suite), run_dir,
                    quiet=True, export_policy=False)
    # The collectors registered for the environment join every row.
    rows = [row for row in _rows(run_dir) if row['phase'] == 'train']
    self.assertEqual(len(rows), 2)
    self.assertTrue(all('episodes_seen' in row for row in rows), rows)
    # The suite evaluator flies after each eval phase.
    suite_rows = [row for row in _rows(run_dir) if row['phase'] == 'eval_suite']
    eval_steps = [row['step'] for row in _rows(run_dir) if row['phase'] == 'eval']
    self.assertEqual(_RecordingEvaluator.steps, eval_steps)
    self.assertEqual([row['step'] for row in suite_rows], eval_steps)
    self.assertEqual(len(eval_steps), 2)


if __name__ == '__main__':
  unittest.main()
