"""The experiment manager names each fit's run in the trackers and groups them (MLflow)."""

import os
import tempfile
import unittest
from unittest import mock

from agents.experiment import ConfigExperiment
from tests.helpers.tiny_experiment import RANDOM_OVERRIDES

try:
  from mlflow.tracking import MlflowClient
except ImportError:  # The `mlflow` extra is not installed.
  MlflowClient = None


def _manager(output_dir, track):
  return ConfigExperiment(
      'pendulum', n_fit=2, fit_budget=64, output_dir=output_dir, parallelization='inline',
      seed=0, overrides=dict(RANDOM_OVERRIDES, **{'loop.track': track}), name='tracked',
      quiet=True)


@unittest.skipIf(MlflowClient is None, "needs the 'mlflow' extra")
class ManagerTrackingTest(unittest.TestCase):

  def test_each_fit_is_a_named_run_of_the_experiment(self):
    store, output_dir = tempfile.mkdtemp(prefix='mlruns-'), tempfile.mkdtemp()
    uri = f'file:{store}'
    with mock.patch.dict(os.environ, {'MLFLOW_TRACKING_URI': uri,
                                      'MLFLOW_ALLOW_FILE_STORE': 'true'}):
      _manager(output_dir, ['mlflow']).fit()
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name('tracked')
    runs = client.search_runs([experiment.experiment_id])
    self.assertEqual(sorted(run.info.run_name for run in runs),
                     ['tracked-fit00', 'tracked-fit01'])
    self.assertEqual({run.info.status for run in runs}, {'FINISHED'})
    self.assertEqual({run.data.params['seed'] for run in runs},
                     {str(fit['seed']) for fit in _manager(output_dir, []).fits})

  def test_the_trackers_may_change_when_an_experiment_resumes(self):
    output_dir = tempfile.mkdtemp()
    _manager(output_dir, []).save()
    resumed = _manager(output_dir, ['mlflow'])  # Not refused as another experiment.
    self.assertEqual(resumed.fit_config(0)['loop']['track'], ['mlflow'])


if __name__ == '__main__':
  unittest.main()
