"""Tests of agents/experiment/manager.py with an agent class (rlberry's `agent_class`): fits,
budgets, init_kwargs_per_instance, eval_agents, get_agent_instances, build_eval_env,
clear_output_dir, load, searches with custom_eval_function, and BLE agent classes."""

import os
import tempfile
import unittest

from agents.experiment import ExperimentError, ExperimentManager, fitting, search
from agents.python_agents import train_lib
from tests.helpers import ble_agents, rlberry_agents

CARTPOLE = ('CartPole-v1', {})
SPACE = {'learning_rate': {'type': 'uniform', 'low': 0.0, 'high': 1.0}}


def _manager(output_dir, agent_class=rlberry_agents.SavedStepCounter, **kwargs):
  kwargs.setdefault('n_fit', 2)
  kwargs.setdefault('seed', 0)
  kwargs.setdefault('fit_budget', 30)
  kwargs.setdefault('outdir_id_style', None)  # A second manager picks up the first's fits.
  return ExperimentManager(agent_class=agent_class, train_env=CARTPOLE,
                           output_dir=output_dir, **kwargs)


class ArgumentTest(unittest.TestCase):

  def test_bad_arguments_name_the_culprit_and_write_nothing(self):
    output_dir = tempfile.mkdtemp()
    cases = (
        (dict(agent_class=rlberry_agents.FitOnly), r'FitOnly has no callable eval\(\)'),
        (dict(fit_budget=None), r'fit_budget missing in __init__\(\)\.'),
        (dict(init_kwargs={'learning_rat': 1}), "init_kwargs of fit 0 .*'learning_rat'"),
        (dict(init_kwargs_per_instance=[{}]), 'init_kwargs_per_instance has 1 entries'),
        (dict(init_kwargs_per_instance=[{}, {'x': 1}]), "init_kwargs of fit 1 .*'x'"),
        (dict(parallelization='fork'), 'parallelization must be one of'),
        (dict(mp_context='fork'), 'mp_context must be one of'),
        (dict(outdir_id_style='date'), 'outdir_id_style must be one of'),
        (dict(agent_name='a/b'), 'agent_name must be a plain folder name'),
    )
    for kwargs, message in cases:
      with self.subTest(kwargs=kwargs), self.assertRaisesRegex(ExperimentError, message):
        _manager(output_dir, **kwargs)
    with self.assertRaisesRegex(ExperimentError, "agent_class must be a class, got 'pendulum'"):
      ExperimentManager('pendulum', train_env=CARTPOLE, output_dir=output_dir)
    self.assertEqual(os.listdir(output_dir), [])

  def test_a_class_given_first_is_the_agent_class_and_names_the_experiment(self):
    manager = ExperimentManager(rlberry_agents.StepCounter, CARTPOLE, 5,
                                output_dir=tempfile.mkdtemp())
    self.assertIs(manager.agent_class, rlberry_agents.StepCounter)
    self.assertEqual(manager.agent_name, 'step_counter')  # rlberry's agent_class.name
    self.assertRegex(os.path.basename(manager.directory), r'^step_counter_\d{4}-\d\d-\d\d_')
    self.assertEqual(manager.parallelization, 'thread')  # rlberry's default


class FitTest(unittest.TestCase):

  def setUp(self):
    rlberry_agents.CONSTRUCTED.clear()
    self.output_dir = tempfile.mkdtemp()
    self.manager = _manager(self.output_dir, init_kwargs={'learning_rate': 0.2},
                            init_kwargs_per_instance=[{}, {'learning_rate': 0.5}])
    self.manager.fit()

  def test_each_fit_has_its_seed_run_directory_and_instance_kwargs(self):
    summary = self.manager.summary()
    self.assertEqual(list(summary['status']), [fitting.FINISHED] * 2)
    self.assertEqual(list(summary['step']), [30, 30])
    seeds = [fit['seed'] for fit in self.manager.fits]
    self.assertEqual(sorted(rlberry_agents.CONSTRUCTED), sorted([
        (seeds[0], self.manager.run_dir(0), 0.2), (seeds[1], self.manager.run_dir(1), 0.5)]))
    agents = self.manager.get_agent_instances()
    self.assertEqual([agent.learning_rate for agent in agents], [0.2, 0.5])
    self.assertEqual([agent.steps for agent in agents], [30, 30])

  def test_each_fit_call_fits_its_budget_more(self):
    self.manager.fit(20, verbose=1)  # rlberry's fit(budget): 20 more, kwargs to the agents
    agents = self.manager.get_agent_instances()
    self.assertEqual(agents[0].fit_calls, [(30, {}), (20, {'verbose': 1})])
    self.assertEqual([agent.steps for agent in agents], [50, 50])
    self.assertEqual(list(self.manager.summary()['step']), [50, 50])

  def test_eval_agents_is_rlberrys(self):
    values = self.manager.eval_agents()
    self.assertEqual(len(values), 4)  # 2 * n_fit
    self.assertTrue(set(values) <= {-0.1, -0.2} or all(
        min(abs(v + 0.1), abs(v + 0.2)) < 1e-9 for v in values))
    self.assertEqual(self.manager.eval_agents(n_simulations=3, agent_id=1),
                     [self.manager.get_agent_instances()[1].eval()] * 3)
    with self.assertRaisesRegex(ExperimentError, "n_simulations must be an int >= 1, got 'ti"):
      self.manager.eval_agents('tiny_eval')

  def test_saved_agents_come_back_in_a_new_manager(self):
    loaded = ExperimentManager.load(self.manager.save())
    self.assertIs(loaded.agent_class, rlberry_agents.SavedStepCounter)
    self.assertEqual(loaded.init_kwargs_per_instance, [{}, {'learning_rate': 0.5}])
    self.assertEqual([agent.steps for agent in loaded.get_agent_instances()], [30, 30])
    with self.assertRaisesRegex(ExperimentError, r'another experiment \(differs in agent'):
      _manager(self.output_dir, init_kwargs={'learning_rate': 0.3},
               init_kwargs_per_instance=[{}, {'learning_rate': 0.5}])

  def test_build_eval_env_is_seeded_by_the_manager(self):
    first, second = self.manager.build_eval_env(), self.manager.build_eval_env()
    self.assertEqual(first.unwrapped.state.tolist(), second.unwrapped.state.tolist())
    self.assertEqual(first.spec.id, 'CartPole-v1')

  def test_clear_output_dir_deletes_the_experiment_and_starts_afresh(self):
    directory = self.manager.directory
    self.manager.clear_output_dir()
    self.assertFalse(os.path.exists(directory))
    self.assertTrue(os.path.isdir(self.output_dir))
    self.assertEqual({fit['status'] for fit in self.manager.fits}, {fitting.PENDING})
    with self.assertRaisesRegex(ExperimentError, 'fit 0 has no trained agent'):
      self.manager.get_agent_instances()
    self.manager.fit()
    self.assertEqual(len(self.manager.get_agent_instances()), 2)


class ProcessTest(unittest.TestCase):

  def test_agents_fitted_in_processes_come_back_by_save_and_load(self):
    # One fit, one worker process (each imports the package anew): the way back, save in
    # the worker and load here, is the same for every fit.
    manager = _manager(tempfile.mkdtemp(), parallelization='process', n_fit=1)
    manager.fit()
    self.assertEqual([agent.steps for agent in manager.get_agent_instances()], [30])

  def test_without_save_an_agent_of_another_process_is_named_as_missing(self):
    manager = _manager(tempfile.mkdtemp(), agent_class=rlberry_agents.StepCounter,
                       parallelization='process', n_fit=1)
    manager.fit()
    with self.assertRaisesRegex(ExperimentError, 'fit 0 has no trained agent here .*save'):
      manager.get_agent_instances()


class SearchTest(unittest.TestCase):

  def test_search_of_init_kwargs_updates_them(self):
    manager = _manager(tempfile.mkdtemp(), n_fit=1, init_kwargs={'learning_rate': 0.9})
    best = manager.optimize_hyperparams(n_trials=4, n_fit=1, search_space=SPACE,
                                        sampler_method='random', pruner_method='none',
                                        fit_fraction=0.5, n_optuna_workers=1)
    self.assertEqual(manager.init_kwargs['learning_rate'], best['learning_rate'])
    self.assertLess(abs(best['learning_rate'] - 0.3), 0.6)
    self.assertEqual(manager.study['complete'], 4)

  def test_custom_eval_function_gets_the_trained_agents(self):
    manager = _manager(tempfile.mkdtemp())
    seen = []

    def custom_eval_function(agents):
      seen.append([agent.steps for agent in agents])
      return -abs(agents[0].learning_rate - 0.7)

    best = manager.optimize_hyperparams(n_trials=3, n_fit=2, search_space=SPACE,
                                        sampler_method='random', pruner_method='none',
                                        n_optuna_workers=1,
                                        custom_eval_function=custom_eval_function)
    self.assertEqual(seen, [[30, 30]] * 3)
    self.assertIn('learning_rate', best)
    with self.assertRaisesRegex(ExperimentError, "sampler_method must be one of .*'tp'"):
      manager.optimize_hyperparams(n_trials=1, search_space=SPACE, sampler_method='tp')

  def test_sample_parameters_of_the_class_and_refused_keys(self):
    manager = _manager(tempfile.mkdtemp(), agent_class=rlberry_agents.SampledStepCounter,
                       n_fit=1)
    best = manager.optimize_hyperparams(n_trials=2, n_fit=1, sampler_method='random',
                                        pruner_method='none', n_optuna_workers=1)
    self.assertEqual(list(best), ['learning_rate'])
    per_instance = _manager(tempfile.mkdtemp(), init_kwargs_per_instance=[
        {'learning_rate': 0.1}, {}])
    with self.assertRaisesRegex(search.SearchError, 'set by init_kwargs_per_instance'):
      per_instance.optimize_hyperparams(n_trials=1, search_space=SPACE)
    with self.assertRaisesRegex(search.SearchError, 'has no sample_parameters'):
      per_instance.optimize_hyperparams(n_trials=1)


class BLEAgentClassTest(unittest.TestCase):

  def test_a_ble_agent_class_fits_with_run_training_loop_and_evals_twr50(self):
    batch = (train_lib.make_batch_env, dict(env_id='BalloonLearningEnvironment-v0',
                                            num_balloons=2, num_processes=0,
                                            wind='procedural'))
    manager = ExperimentManager(
        agent_class=ble_agents.CountingAgent, train_env=batch, fit_budget=40, n_fit=1, seed=0,
        init_kwargs=dict(max_episode_length=10,
                         eval_suite='custom:seeds=0-1,episode_length=12,wind=procedural'),
        output_dir=tempfile.mkdtemp())
    manager.fit()
    # 40 steps over 2 balloons of 10-step episodes: 2 iterations, checkpointed each.
    run_dir = manager.run_dir(0)
    self.assertEqual(sorted(train_lib.read_records(os.path.join(run_dir, 'checkpoints'))),
                     [0, 1])
    frame = manager.get_writer_data()[0]
    self.assertEqual(sorted(set(frame[frame['tag'] == 'twr50']['global_step'])), [20, 40])
    self.assertIsNotNone(manager.summary()['mean_score'][0])
    self.assertTrue(os.path.exists(os.path.join(run_dir, 'policy', 'counts.npy')))
    adapter, = manager.get_agent_instances()
    self.assertEqual(adapter.agent.agents[0].counts.tolist(), [2, 18])
    value, = manager.eval_agents(n_simulations=1)
    self.assertTrue(0.0 <= value <= 1.0)
    loaded = ExperimentManager.load(manager.directory)
    self.assertEqual(loaded.get_agent_instances()[0].agent.agents[0].counts.tolist(),
                     [2, 18])


if __name__ == '__main__':
  unittest.main()
