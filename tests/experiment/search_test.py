"""Tests of agents/experiment/search.py: a tiny resumable study with pruning and failures."""

import os
import tempfile
import unittest

import optuna

from agents import configs
from agents.experiment import ConfigExperiment, search
from agents.experiment.search_distributions import Categorical, LogUniform
from tests.helpers import tiny_experiment

# The hyperparameters of the linear softmax policy (tiny_experiment.LINEAR_SOFTMAX).
_SPACE = {
    'algorithm.learning_rate': LogUniform(1e-3, 1e-1),
    'algorithm.baseline_decay': Categorical([0.9, 0.99]),
}


def _manager(output_dir):
  """Tiny CartPole fits of the linear softmax policy."""
  return ConfigExperiment('cartpole', n_fit=1, fit_budget=128, output_dir=output_dir,
                          seed=0, overrides=tiny_experiment.LINEAR_OVERRIDES,
                          parallelization='inline', quiet=True)


class SearchTest(unittest.TestCase):

  def test_chunk_budgets(self):
    self.assertEqual(search.chunk_budgets(1000, 0.25), [250, 500, 750, 1000])
    self.assertEqual(search.chunk_budgets(1000, 1.0), [1000])
    self.assertEqual(search.chunk_budgets(1000, 0.3), [250, 500, 750, 1000])
    with self.assertRaisesRegex(search.SearchError, 'fit_fraction'):
      search.chunk_budgets(1000, 0)

  def test_bad_arguments(self):
    experiment = _manager(tempfile.mkdtemp())
    with self.assertRaisesRegex(search.SearchError, "sampler must be one of"):
      experiment.optimize_hyperparams(n_trials=1, sampler='bayes', search_space=_SPACE)
    with self.assertRaisesRegex(search.SearchError, "pruner must be one of"):
      experiment.optimize_hyperparams(n_trials=1, pruner='hyperband', search_space=_SPACE)
    with self.assertRaisesRegex(search.SearchError, 'n_fit must be an int >= 1'):
      experiment.optimize_hyperparams(n_trials=1, n_fit=0, search_space=_SPACE)
    with self.assertRaisesRegex(search.search_distributions.SearchSpaceError, 'empty'):
      experiment.optimize_hyperparams(n_trials=1, search_space={})
    with self.assertRaisesRegex(search.search_distributions.SearchSpaceError, 'learning_rat'):
      experiment.optimize_hyperparams(
          n_trials=1, search_space={'algorithm.learning_rat': LogUniform(1e-3, 1e-2)})

  def test_study_reports_prunes_fails_and_resumes(self):
    output_dir = tempfile.mkdtemp()
    experiment = _manager(output_dir)
    calls = []

    def objective(trial_manager):  # Called after each chunk: call 3 is trial 1's first.
      calls.append(trial_manager.name)
      if len(calls) == 3:
        raise RuntimeError('objective broke')
      return search.mean_final_score(trial_manager)

    with self.assertLogs('optuna', 'WARNING') as logs:
      best = experiment.optimize_hyperparams(
          n_trials=2, n_fit=1, sampler='random', pruner='median', fit_fraction=0.5,
          objective=objective, search_space=_SPACE)
    self.assertIn('objective broke', '\n'.join(logs.output))  # Optuna's line of the failure.
    self.assertEqual(set(best), {'algorithm.learning_rate', 'algorithm.baseline_decay'})
    record = experiment.study
    self.assertEqual(record['failed'], 1)  # The trial that raised; the study went on.
    self.assertEqual(record['complete'] + record['pruned'], 2)
    self.assertEqual(record['storage'], 'optuna.db')
    storage = search.storage_url(experiment.directory)
    study = optuna.load_study(study_name=record['study_name'], storage=storage)
    complete = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    # Intermediate values at both chunk budgets, for the pruner.
    self.assertEqual(sorted(complete[0].intermediate_values), [64, 128])
    config = configs.load_yaml(os.path.join(experiment.directory, 'best_config.yaml'))
    self.assertEqual(configs.flatten(config)['algorithm.baseline_decay'],
                     best['algorithm.baseline_decay'])
    self.assertEqual(configs.flatten(config)['loop.steps'], 128)
    # The manifest records the study; a loaded manager continues it.
    loaded = ConfigExperiment.load(experiment.directory, quiet=True)
    self.assertEqual(loaded.study['study_name'], record['study_name'])
    loaded.optimize_hyperparams(n_trials=3, n_fit=1, sampler='random', fit_fraction=1.0,
                                continue_previous=True, search_space=_SPACE)
    self.assertEqual(loaded.study['study_name'], record['study_name'])
    self.assertEqual(loaded.study['complete'] + loaded.study['pruned'], 3)

  def test_cut_off_trials_are_queued_again_with_their_values(self):
    directory = tempfile.mkdtemp()
    storage = search.storage_url(directory)
    verbosity = optuna.logging.get_verbosity()  # Without Optuna's line "A new study created".
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    self.addCleanup(optuna.logging.set_verbosity, verbosity)
    study = optuna.create_study(storage=storage, study_name='s', direction='maximize')
    running = study.ask()
    running.suggest_float('x', 0, 1)
    interrupted = study.ask()
    interrupted.suggest_float('x', 0, 1)
    interrupted.set_user_attr('interrupted', True)
    study.tell(interrupted, state=optuna.trial.TrialState.FAIL)
    search._requeue_cut_off_trials(study)
    search._requeue_cut_off_trials(study)  # Only once.
    waiting = study.get_trials(states=(optuna.trial.TrialState.WAITING,))
    self.assertEqual(sorted(t.system_attrs['fixed_params']['x'] for t in waiting),
                     sorted([running.params['x'], interrupted.params['x']]))
    self.assertEqual(len(waiting), 2)

  def test_trial_name_depends_on_values_only(self):
    self.assertEqual(search.trial_name({'a': 1, 'b': [8]}), search.trial_name({'b': [8], 'a': 1}))
    self.assertNotEqual(search.trial_name({'a': 1}), search.trial_name({'a': 2}))



class StopOnSigintTest(unittest.TestCase):

  def test_ctrl_c_asks_the_fits_to_stop_then_raises(self):
    import signal

    from agents.experiment import fitting
    handler_before = signal.getsignal(signal.SIGINT)  # SIG_IGN when run in the background
    with self.assertRaises(KeyboardInterrupt):
      with search._StopOnSigint():
        signal.raise_signal(signal.SIGINT)
        self.assertTrue(fitting.STOP.is_set())  # The running fits see it and checkpoint.
    self.assertFalse(fitting.STOP.is_set())
    self.assertIs(signal.getsignal(signal.SIGINT), handler_before)  # restored


if __name__ == '__main__':
  unittest.main()
