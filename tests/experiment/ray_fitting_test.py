"""Tests of agents/experiment/ray_fitting.py: short fits on a local Ray instance of this
machine's CPUs."""

import os
import tempfile
import unittest
from unittest import mock

from agents.experiment import ConfigExperiment, experiment_base, fitting, ray_fitting
from agents.experiment import threads as threads_lib
from agents.experiment.search_distributions import LogUniform
from tests.helpers import ray_instance, tiny_experiment

# One logged row per fit of the linear softmax policy is enough here: Ray's part is to run
# the fits, not to train.
_BUDGET = 64

try:
  import ray
except ImportError:  # Ray is an optional extra.
  ray = None


class MissingRayTest(unittest.TestCase):

  def test_clear_error_without_ray(self):
    with mock.patch.dict('sys.modules', {'ray': None}):
      with self.assertRaisesRegex(ray_fitting.RayMissingError, r"batchppo-agents\[ray\]"):
        ray_fitting.import_ray()


@unittest.skipIf(ray is None, 'Ray is not installed (pip install batchppo-agents[ray]).')
class RayFitTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    # A fit declares its threads as CPUs, its part of this machine's cores: here as many
    # CPUs as one fit declares, so the fits run one after another in one worker process,
    # which imports TensorFlow once for the module (tasks of the same thread count share a
    # runtime environment, so the second test's fits reuse the first's worker).
    ray_instance.start(num_cpus=threads_lib.threads_per_fit(2))

  @classmethod
  def tearDownClass(cls):
    ray.shutdown()

  def test_two_fits_as_ray_tasks(self):
    experiment = ConfigExperiment(
        'cartpole', n_fit=2, fit_budget=_BUDGET,
        output_dir=tempfile.mkdtemp(), seed=0, overrides=tiny_experiment.LINEAR_OVERRIDES,
        parallelization='ray', quiet=True)
    summary = experiment.fit()
    self.assertEqual(list(summary['status']), [fitting.FINISHED] * 2)
    self.assertEqual(list(summary['step']), [_BUDGET] * 2)
    self.assertEqual(list(summary['seed']), experiment_base.fit_seeds(0, 2))
    frame = experiment.get_writer_data()
    self.assertEqual(set(frame['fit']), {0, 1})
    loaded = ConfigExperiment.load(experiment.directory, quiet=True)
    self.assertEqual([fit['status'] for fit in loaded.fits], [fitting.FINISHED] * 2)

  def test_search_spreads_trials_over_ray(self):
    experiment = ConfigExperiment(
        'cartpole', n_fit=1, fit_budget=_BUDGET,
        output_dir=tempfile.mkdtemp(), seed=0, overrides=tiny_experiment.LINEAR_OVERRIDES,
        parallelization='ray', quiet=True)
    # Two trials at once (threads), each fit a Ray task declaring its trial's half of the
    # cores.
    with mock.patch.object(ray_fitting, 'run_fits_on_ray',
                           wraps=ray_fitting.run_fits_on_ray) as run_fits:
      experiment.optimize_hyperparams(
          n_trials=2, n_fit=1, sampler='random', pruner='none', fit_fraction=1.0,
          n_workers=2, search_space={'algorithm.learning_rate': LogUniform(1e-3, 1e-1)})
    threads = [spec.threads for call in run_fits.call_args_list for spec in call.args[0]]
    self.assertEqual(threads, [threads_lib.threads_per_fit(2)] * 2)
    self.assertEqual(experiment.study['complete'], 2)
    self.assertEqual(len(os.listdir(os.path.join(experiment.directory, 'trials'))), 2)


if __name__ == '__main__':
  unittest.main()
