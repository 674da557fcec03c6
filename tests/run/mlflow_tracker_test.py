"""Tests of agents/run/mlflow_tracker.py against MLflow's file store (no server, no network).

A tiny QR-DQN CartPole run with `loop.track: [mlflow]`, trained in two sessions (64 steps, then
resumed to 128), is read back with `MlflowClient`: its params, its metrics (the rows of
metrics.jsonl), its artifacts, and the one MLflow run both sessions logged to. A tracker
that cannot start: tracker_failures_test.
"""

import os
import tempfile
import unittest
from unittest import mock

from agents.run import metrics_writer, run_manifest, session, tracking
from agents.training import trainer
from tests.helpers import tiny_run

try:
  from mlflow.tracking import MlflowClient
except ImportError:  # The `mlflow` extra is not installed.
  MlflowClient = None


def _train(run_dir, uri, steps=128, **kwargs):
  # MLflow 3 refuses a file store unless asked: the test wants one that needs no server.
  environment = {'MLFLOW_TRACKING_URI': uri, 'MLFLOW_ALLOW_FILE_STORE': 'true'}
  with mock.patch.dict(os.environ, environment):
    return trainer.train(tiny_run.tiny_qrdqn_config(steps=steps, track=['mlflow']), run_dir,
                          quiet=True, **kwargs)


@unittest.skipIf(MlflowClient is None, "needs the 'mlflow' extra")
class MLflowTrackerTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.store = tempfile.mkdtemp(prefix='mlruns-')
    cls.uri = f'file:{cls.store}'
    cls.run_dir = os.path.join(tempfile.mkdtemp(), 'run')
    _train(cls.run_dir, cls.uri, steps=64, run_name='tiny-fit00', run_group='tiny')
    cls.first_run_id = run_manifest.read(cls.run_dir)['trackers']['mlflow']['run_id']
    _train(cls.run_dir, cls.uri, steps=128, run_name='tiny-fit00', run_group='tiny')  # resumed
    cls.client = MlflowClient(cls.uri)
    cls.run_id = run_manifest.read(cls.run_dir)['trackers']['mlflow']['run_id']

  def test_the_run_is_named_and_filed_under_its_group(self):
    run = self.client.get_run(self.run_id)
    self.assertEqual(run.info.run_name, 'tiny-fit00')
    self.assertEqual(self.client.get_experiment(run.info.experiment_id).name, 'tiny')
    self.assertEqual(run.info.status, 'FINISHED')
    self.assertEqual(run.data.tags['agents.run_dir'], os.path.abspath(self.run_dir))

  def test_the_resolved_config_is_the_params(self):
    params = self.client.get_run(self.run_id).data.params
    config = tiny_run.tiny_qrdqn_config(steps=128, track=['mlflow'])
    self.assertEqual(params['algorithm.learning_rate'],
                     str(config['algorithm']['learning_rate']))
    self.assertEqual(params['environment.id'], 'CartPole-v1')
    self.assertEqual(params['loop.track'], "['mlflow']")

  def test_every_row_of_metrics_jsonl_is_a_metric_at_its_step(self):
    rows = metrics_writer.read_metrics(os.path.join(self.run_dir, 'metrics.jsonl'))
    for phase, name in (('train', 'mean_score'), ('update', 'loss')):
      expected = [(row['step'], row[name]) for row in rows
                  if row['phase'] == phase and row.get(name) is not None]
      history = self.client.get_metric_history(self.run_id, f'{phase}/{name}')
      self.assertEqual(sorted((metric.step, metric.value) for metric in history),
                       sorted(expected))
      self.assertTrue(expected)

  def test_the_policy_and_config_yaml_are_artifacts(self):
    top = {item.path for item in self.client.list_artifacts(self.run_id)}
    self.assertEqual(top, {'config.yaml', 'policy'})
    policy = {item.path for item in self.client.list_artifacts(self.run_id, 'policy')}
    self.assertIn('policy/saved_model.pb', policy)
    # The policy's record and card travel with it (agents.run.policy_record).
    self.assertLessEqual({'policy/policy.yaml', 'policy/MODEL_CARD.md'}, policy)

  def test_a_resumed_run_reopens_its_mlflow_run(self):
    manifest = run_manifest.read(self.run_dir)
    self.assertEqual(manifest['trackers']['mlflow']['run_id'], self.first_run_id)
    self.assertEqual(len(manifest['sessions']), 2)
    run = self.client.get_run(self.first_run_id)
    self.assertEqual(run.info.status, 'FINISHED')
    steps = {metric.step
             for metric in self.client.get_metric_history(self.first_run_id, 'train/episodes')}
    self.assertEqual(steps, {64, 128})

  def test_an_unnamed_run_is_named_after_its_directory_in_the_default_experiment(self):
    # The trackers as training starts them, without the training.
    run_dir = os.path.join(tempfile.mkdtemp(), 'run')
    os.makedirs(run_dir)
    environment = {'MLFLOW_TRACKING_URI': self.uri, 'MLFLOW_ALLOW_FILE_STORE': 'true'}
    with mock.patch.dict(os.environ, environment):
      trackers = session.start_trackers(tiny_run.tiny_config(track=['mlflow']), run_dir,
                                        None, None)
      for tracker in trackers:
        tracker.finish(tracking.FINISHED)
    run = self.client.get_run(run_manifest.read(run_dir)['trackers']['mlflow']['run_id'])
    self.assertEqual(run.info.run_name, 'run')  # The run directory's name.
    self.assertEqual(self.client.get_experiment(run.info.experiment_id).name, 'Default')
    self.assertEqual(run.info.status, 'FINISHED')


if __name__ == '__main__':
  unittest.main()
