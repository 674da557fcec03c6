"""Tests of agents/experiment/manager.py: seeds, run directories, resume, manifest, bad input."""

import contextlib
import io
import os
import tempfile
import unittest
import warnings

import numpy as np

from agents import configs
from agents.experiment import ConfigExperiment, ExperimentError, experiment_base, fitting, manifest
from tests.helpers import crashing_env, tiny_experiment

# Two logged rows per fit (every 64 steps): what the tests of rows and of extension read.
_BUDGET = 128


def _tiny_manager(output_dir, base=tiny_experiment.RANDOM_OVERRIDES, **kwargs):
  """Tiny Pendulum fits by the random agent; `base` is the overrides they start from."""
  kwargs.setdefault('n_fit', 2)
  kwargs.setdefault('seed', 0)
  kwargs.setdefault('fit_budget', _BUDGET)
  kwargs.setdefault('parallelization', 'inline')
  overrides = dict(base, **kwargs.pop('overrides', {}))
  return ConfigExperiment('pendulum', output_dir=output_dir, overrides=overrides,
                                   quiet=True, **kwargs)


class SeedTest(unittest.TestCase):

  def test_seeds_are_spawned_from_one_sequence(self):
    seeds = experiment_base.fit_seeds(0, 4)
    self.assertEqual(seeds, experiment_base.fit_seeds(0, 4))
    self.assertEqual(len(set(seeds)), 4)
    # Fit i keeps its seed as n_fit grows.
    self.assertEqual(experiment_base.fit_seeds(0, 2), seeds[:2])
    self.assertNotEqual(experiment_base.fit_seeds(1, 4), seeds)
    self.assertTrue(all(0 <= seed < 2**31 for seed in seeds))


class BadInputTest(unittest.TestCase):

  def test_errors_name_the_culprit(self):
    output_dir = tempfile.mkdtemp()
    with self.assertRaisesRegex(ExperimentError, 'n_fit must be an int >= 1, got 0'):
      _tiny_manager(output_dir, n_fit=0)
    with self.assertRaisesRegex(configs.ConfigError, "Unknown config 'pendulm'"):
      ConfigExperiment('pendulm', output_dir=output_dir)
    with self.assertRaisesRegex(configs.ConfigError, 'learning_rat'):
      _tiny_manager(output_dir, base=tiny_experiment.TINY_OVERRIDES,
                    overrides={'algorithm.learning_rat': 1e-3})
    with self.assertRaisesRegex(ExperimentError, 'overrides_per_fit has 1 entries'):
      _tiny_manager(output_dir, overrides_per_fit=[{}])
    with self.assertRaisesRegex(configs.ConfigError, 'Fit 1: .*discount'):
      _tiny_manager(output_dir, base=tiny_experiment.TINY_OVERRIDES,
                    overrides_per_fit=[{}, {'algorithm.discount': 'high'}])
    with self.assertRaisesRegex(configs.ConfigError, "Fit 0: .*'NoSuchEnv-v0'"):
      _tiny_manager(output_dir, overrides_per_fit=[{'environment.id': 'NoSuchEnv-v0'}, {}])
    with self.assertRaisesRegex(ExperimentError, 'parallelization'):
      _tiny_manager(output_dir, parallelization='threads')
    self.assertFalse(os.listdir(output_dir))  # Nothing was written.

  def test_clear_output_dir_deletes_only_the_experiment(self):
    output_dir = tempfile.mkdtemp()
    experiment = _tiny_manager(output_dir)
    directory = experiment.save().parent
    experiment.clear_output_dir()
    self.assertFalse(os.path.exists(directory))
    self.assertTrue(os.path.isdir(output_dir))
    self.assertEqual(_tiny_manager(output_dir, seed=1).seed_entropy, 1)  # Nothing to adopt.

  def test_load_of_a_directory_that_is_not_an_experiment(self):
    directory = tempfile.mkdtemp()
    with self.assertRaisesRegex(manifest.NotAnExperimentError, 'has no experiment.yaml'):
      ConfigExperiment.load(directory)
    with self.assertRaisesRegex(manifest.NotAnExperimentError, 'is not a directory'):
      ConfigExperiment.load(os.path.join(directory, 'missing'))
    with open(manifest.path_in(directory), 'w', encoding='utf-8') as file:
      file.write('- just a list\n')
    with self.assertRaisesRegex(manifest.NotAnExperimentError, 'not an experiment manifest'):
      ConfigExperiment.load(directory)

  def test_another_experiment_in_the_same_directory_is_refused(self):
    output_dir = tempfile.mkdtemp()
    _tiny_manager(output_dir).save()
    with self.assertRaisesRegex(ExperimentError, r'another experiment .*seed_entropy'):
      _tiny_manager(output_dir, seed=1)
    with self.assertRaisesRegex(ExperimentError, r'config\.(environment\.)?max_episode_steps'):
      _tiny_manager(output_dir, overrides={'environment.max_episode_steps': 40})
    # The budget may change: that is how a finished experiment is extended.
    self.assertEqual(_tiny_manager(output_dir, fit_budget=512).fit_budget, 512)

  def test_a_key_declared_since_the_experiment_was_saved_resumes_at_its_default(self):
    output_dir = tempfile.mkdtemp()
    ppo = tiny_experiment.TINY_OVERRIDES
    directory = _tiny_manager(output_dir, base=ppo).save().parent
    data = manifest.read(directory)
    del data['config']['network']['gru_units']  # As written before the key existed.
    configs.save_yaml(data, manifest.path_in(directory))
    self.assertEqual(_tiny_manager(output_dir, base=ppo).n_fit, 2)
    with self.assertRaisesRegex(ExperimentError, r'config\.network\.gru_units'):
      _tiny_manager(output_dir, base=ppo, overrides={'network.gru_units': 8})


class FitTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.output_dir = tempfile.mkdtemp()
    cls.manager = _tiny_manager(cls.output_dir)
    cls.first = cls.manager.fit()

  def test_agent_instances_are_the_fits_policies_and_the_eval_env_is_seeded(self):
    policies = self.manager.get_agent_instances()
    self.assertEqual(len(policies), 2)
    self.assertTrue(all(callable(policy) for policy in policies))
    first, second = self.manager.build_eval_env(), self.manager.build_eval_env()
    self.assertEqual(first.spec.id, 'Pendulum-v1')
    self.assertEqual(first.unwrapped.state.tolist(), second.unwrapped.state.tolist())

  def test_each_fit_is_a_run_directory_with_its_own_seed(self):
    seeds = experiment_base.fit_seeds(0, 2)
    self.assertEqual(list(self.first['seed']), seeds)
    self.assertEqual(list(self.first['status']), [fitting.FINISHED] * 2)
    for index in range(2):
      run_dir = self.manager.run_dir(index)
      self.assertEqual(os.path.dirname(run_dir), os.path.join(self.output_dir, 'pendulum'))
      for name in ('config.yaml', 'metrics.jsonl', 'checkpoints', 'policy'):
        self.assertTrue(os.path.exists(os.path.join(run_dir, name)), name)
      config = configs.load_yaml(os.path.join(run_dir, 'config.yaml'))
      self.assertEqual(configs.flatten(config)['seed'], seeds[index])
      self.assertEqual(configs.flatten(config)['environment.max_episode_steps'], 32)

  def test_writer_data(self):
    frame = self.manager.get_writer_data()
    self.assertEqual(list(frame.columns), ['name', 'fit', 'step', 'phase', 'tag', 'value'])
    self.assertEqual(set(frame['fit']), {0, 1})
    self.assertEqual(set(frame['name']), {'pendulum'})
    scores = frame[(frame['tag'] == 'mean_score') & (frame['phase'] == 'train')]
    self.assertEqual(sorted(set(scores['step'])), [64, 128])
    final = self.manager.final_scores()
    self.assertEqual(final.shape, (2,))
    np.testing.assert_allclose(final, list(self.first['mean_score']), rtol=1e-6)

  def test_save_and_load_round_trip(self):
    loaded = ConfigExperiment.load(self.manager.directory, quiet=True)
    self.assertEqual(loaded.fits, self.manager.fits)
    self.assertEqual(loaded.config, self.manager.config)
    self.assertEqual(loaded.config_name, 'pendulum')
    self.assertEqual(loaded.overrides, self.manager.overrides)
    frame = loaded.get_writer_data()
    self.assertEqual(len(frame), len(self.manager.get_writer_data()))
    with open(manifest.path_in(self.manager.directory), encoding='utf-8') as file:
      text = file.read()
    self.assertNotIn('!!python', text)  # Plain YAML, no pickled objects.

  def test_loading_another_version_warns(self):
    directory = tempfile.mkdtemp()
    data = manifest.read(self.manager.directory)
    data.pop('format')
    data.pop('project_version')
    manifest.write(directory, data)
    path = manifest.path_in(directory)
    with open(path, encoding='utf-8') as file:
      text = file.read().replace(f'project_version: {manifest.project_version()}',
                                 'project_version: 0.0.1')
    with open(path, 'w', encoding='utf-8') as file:
      file.write(text)
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter('always')
      manifest.read(directory)
    self.assertTrue(any('written by batchppo-agents 0.0.1' in str(w.message) for w in caught))

  def test_a_crashing_fit_is_reported_with_its_index_and_the_others_finish_and_extend(self):
    output_dir = tempfile.mkdtemp()
    bad = [{}, crashing_env.CRASHING_OVERRIDES]
    crashing = _tiny_manager(output_dir, overrides_per_fit=bad)
    with self.assertLogs('agents.experiment.experiment_base', 'ERROR') as logs:
      summary = crashing.fit()
    self.assertEqual(list(summary['status']), [fitting.FINISHED, fitting.FAILED])
    self.assertEqual(crashing.failed_fits(), [1])
    self.assertIn(crashing_env.MESSAGE, crashing.fits[1]['error'])
    # One error, with the fit's traceback.
    self.assertEqual(len(logs.records), 1, logs.output)
    self.assertRegex(logs.output[0], r'Fit 1 of pendulum failed:\nTraceback(.|\n)*'
                     + crashing_env.MESSAGE)
    # The failed fit is tried again by the next fit(); the finished one is kept.
    rows_before = crashing.get_writer_data()
    with self.assertLogs('agents.experiment.experiment_base', 'ERROR'):
      self.assertEqual(list(crashing.fit()['status']), [fitting.FINISHED, fitting.FAILED])
    self.assertTrue(rows_before.equals(crashing.get_writer_data()))
    # Fit again extends the budget and keeps the first steps (checked here on the finished
    # fit 0, rather than on an experiment of its own that would train one more fit).
    rows_before = rows_before[rows_before['fit'] == 0]
    # A new manager on the same directory picks up the finished fit.
    again = _tiny_manager(output_dir, overrides_per_fit=bad)
    self.assertEqual(again.fits[0]['status'], fitting.FINISHED)
    with self.assertLogs('agents.experiment.experiment_base', 'ERROR'):  # Fit 1 again.
      summary = again.fit(budget=2 * _BUDGET)
    self.assertEqual(list(summary['step'])[0], 2 * _BUDGET)
    rows_after = again.get_writer_data()
    rows_after = rows_after[rows_after['fit'] == 0]
    steps = sorted(set(rows_after.loc[rows_after['phase'] == 'train', 'step']))
    self.assertEqual(steps, [64, 128, 192, 256])
    before = rows_before[rows_before['phase'] == 'train'].reset_index(drop=True)
    after = rows_after[(rows_after['phase'] == 'train') & (rows_after['step'] <= _BUDGET)]
    np.testing.assert_array_equal(before['value'], after.reset_index(drop=True)['value'])

  def test_profile(self):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
      path = self.manager.generate_profile(budget=64, lines=5)
    self.assertTrue(os.path.getsize(path) > 0)
    self.assertIn('cumulative', printed.getvalue())
    self.assertIn('run_fit', printed.getvalue())


if __name__ == '__main__':
  unittest.main()
