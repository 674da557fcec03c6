"""rlberry's ExperimentManager and Agent, as its documentation (seed 003) writes them.

Each snippet is the seed's, with the import lines changed and its placeholders filled by
small agents of the tests (`tests/helpers/rlberry_agents.py`: `PoleAgent`, an
`AgentWithSimplePolicy` on CartPole). The checks are what the seed promises.
"""

import contextlib
import inspect
import io
import os
import pathlib
import tempfile
import unittest

import gymnasium
import numpy as np

from agents.experiment import (
    AgentWithSimplePolicy,
    ConfigExperiment,
    DefaultWriter,
    ExperimentError,
    ExperimentManager,
)
from tests.helpers import rlberry_agents

WRITER_COLUMNS = ['name', 'tag', 'value', 'dw_time_elapsed', 'global_step', 'n_simu']
# rlberry's ExperimentManager parameters, in order, with their defaults.
RLBERRY_PARAMETERS = [
    ('agent_class', inspect.Parameter.empty), ('train_env', (None, None)),
    ('fit_budget', None), ('eval_env', None), ('init_kwargs', None), ('fit_kwargs', None),
    ('eval_kwargs', None), ('agent_name', None), ('n_fit', 4), ('output_dir', None),
    ('parallelization', 'thread'), ('max_workers', None), ('mp_context', 'spawn'),
    ('worker_logging_level', None), ('seed', None), ('enable_tensorboard', False),
    ('outdir_id_style', 'timestamp'), ('default_writer_kwargs', None),
    ('init_kwargs_per_instance', None), ('thread_shared_data', None)]


def _defaults(function):
  return [(name, parameter.default) for name, parameter
          in inspect.signature(function).parameters.items() if name != 'self']


class SignatureTest(unittest.TestCase):

  def test_parameters_and_methods_are_rlberrys(self):
    self.assertEqual(_defaults(ExperimentManager.__init__), RLBERRY_PARAMETERS)
    self.assertEqual(_defaults(ExperimentManager.eval_agents), [
        ('n_simulations', None), ('eval_kwargs', None), ('agent_id', None), ('verbose', True)])
    self.assertEqual(_defaults(ExperimentManager.optimize_hyperparams)[:12], [
        ('n_trials', 256), ('timeout', 60), ('n_fit', 2), ('n_optuna_workers', 2),
        ('optuna_parallelization', 'thread'), ('sampler_method', 'optuna_default'),
        ('pruner_method', 'halving'), ('continue_previous', False), ('fit_fraction', 1.0),
        ('sampler_kwargs', None), ('disable_evaluation_writers', True),
        ('custom_eval_function', None)])
    self.assertEqual(_defaults(ExperimentManager.set_writer),
                     [('idx', inspect.Parameter.empty), ('writer_fn', inspect.Parameter.empty),
                      ('writer_kwargs', None)])
    self.assertEqual(_defaults(ExperimentManager.generate_profile),
                     [('budget', None), ('fname', None)])
    self.assertIsInstance(inspect.getattr_static(ExperimentManager, 'load'), classmethod)
    self.assertEqual(list(inspect.signature(AgentWithSimplePolicy.eval).parameters),
                     ['self', 'eval_horizon', 'n_simulations', 'gamma'])


class SeedExampleTest(unittest.TestCase):
  """The class docstring's example: one fit in a spawned process, then evaluation."""

  @classmethod
  def setUpClass(cls):
    cls.output_dir = tempfile.mkdtemp()
    A2CAgent = rlberry_agents.PoleAgent  # noqa: N806  (the seed's placeholder name)
    env_ctor, env_kwargs = gymnasium.make, dict(id='CartPole-v1')
    # The seed's snippet, with the comma it lacks after eval_kwargs, and output_dir and
    # seed added so the test writes in its own folder and repeats itself.
    manager = ExperimentManager(
        A2CAgent,
        (env_ctor, env_kwargs),
        fit_budget=100,
        eval_kwargs=dict(eval_horizon=500),
        n_fit=1,
        parallelization="spawn",
        output_dir=cls.output_dir, seed=0,
    )
    if __name__ == '__main__' or True:  # The seed's guard, true under the test runner too.
      manager.fit(1e4)
    cls.manager = manager

  def test_the_fit_ran_its_budget_in_a_spawned_process(self):
    self.assertEqual(self.manager.parallelization, 'process')
    self.assertEqual(self.manager.mp_context, 'spawn')
    agent, = self.manager.get_agent_instances()  # Back through Agent.save and load.
    self.assertIsInstance(agent, rlberry_agents.PoleAgent)
    self.assertEqual(agent.total_steps, 10_000)
    self.assertEqual(agent.output_dir, pathlib.Path(self.manager.run_dir(0)))

  def test_eval_agents_returns_n_simulations_floats(self):
    values = self.manager.eval_agents(4)
    self.assertEqual(len(values), 4)
    self.assertTrue(all(isinstance(value, float) for value in values))
    self.assertTrue(all(0 < value <= 500 for value in values))  # eval_horizon=500

  def test_the_writers_rows_come_back_with_rlberrys_columns(self):
    by_fit = self.manager.get_writer_data()  # rlberry's: {fit index: DataFrame}
    self.assertEqual(list(by_fit), [0])
    data = by_fit[0]
    self.assertEqual(list(data.columns), WRITER_COLUMNS[:-1])  # n_simu is the key
    agent, = self.manager.get_agent_instances()
    self.assertEqual(len(data), agent.episodes)
    self.assertEqual(set(data['tag']), {'episode_rewards'})
    self.assertEqual(set(data['name']), {'pole'})
    self.assertTrue(data['global_step'].is_monotonic_increasing)
    self.assertEqual(list(data['value']),
                     list(agent.writer.read_tag_value('episode_rewards')))

  def test_save_returns_a_path_and_load_restores(self):
    path = self.manager.save()
    self.assertIsInstance(path, pathlib.Path)
    self.assertTrue(path.is_file())
    loaded = ExperimentManager.load(path)
    self.assertEqual(loaded.directory, self.manager.directory)
    self.assertEqual(loaded.eval_kwargs, dict(eval_horizon=500))
    agent, = loaded.get_agent_instances()
    original, = self.manager.get_agent_instances()
    self.assertEqual((agent.gain, agent.total_steps), (original.gain, original.total_steps))
    self.assertEqual(len(loaded.eval_agents(2, verbose=False)), 2)


class EvalAgentsExampleTest(unittest.TestCase):

  def test_eval_agents_docstring_example(self):
    eval_kwargs = {
        'horizon': 1000,
        'n_simulations': 10,
        'gamma': 0.99
    }
    agent_manager = ExperimentManager(
        rlberry_agents.HorizonPoleAgent, ('CartPole-v1', {}), fit_budget=300, n_fit=2, seed=1,
        output_dir=tempfile.mkdtemp(), eval_kwargs=eval_kwargs)
    agent_manager.fit()
    evaluation_results = agent_manager.eval_agents(n_simulations=5, verbose=True)
    self.assertEqual(len(evaluation_results), 5)
    # gamma=0.99: a discounted return stays below 1 / (1 - 0.99).
    self.assertTrue(all(0 < value < 100 for value in evaluation_results))
    fixed = agent_manager.eval_agents(n_simulations=3, agent_id=1, verbose=False)
    self.assertEqual(len(fixed), 3)


class WriterTest(unittest.TestCase):

  def test_default_writer_keeps_scalars(self):
    writer = DefaultWriter('agent', style_log='one_line', log_interval=0)
    writer.add_scalar('loss', 1.5, global_step=3)
    writer.add_scalar('loss', 0.5, global_step=4)
    writer.add_scalars('eval', {'return': 10.0}, global_step=4)
    writer.add_scalar('note', 1.0)
    self.assertEqual(writer.style_log, 'one_line')
    self.assertEqual(list(writer.read_tag_value('loss')), [1.5, 0.5])
    self.assertEqual(writer.read_last_tag_value('return', main_tag='eval'), 10.0)
    data = writer.data
    self.assertEqual(list(data.columns), WRITER_COLUMNS[:-1])
    self.assertEqual(len(data), 4)
    self.assertTrue(np.isnan(data[data['tag'] == 'note']['global_step'].iloc[0]))
    writer.add_text('anything', 'accepted, as TensorBoard writers take it')
    with self.assertRaisesRegex(ValueError, "style_log must be one of .*'fancy'"):
      DefaultWriter('agent', style_log='fancy')

  def test_set_writer_thread_shared_data_and_writer_kwargs(self):
    shared = {}

    class SharingAgent(rlberry_agents.PoleAgent):
      def fit(self, budget, **kwargs):
        self.thread_shared_data.setdefault('agents', []).append(self.unique_id)
        super().fit(budget, **kwargs)

    manager = ExperimentManager(
        SharingAgent, ('CartPole-v1', {}), fit_budget=200, n_fit=3, seed=2,
        init_kwargs=dict(epsilon=0.8),  # Short episodes: each fit logs some.
        output_dir=tempfile.mkdtemp(), thread_shared_data=shared,
        default_writer_kwargs={'style_log': 'progressbar'})
    manager.set_writer(0, None)
    manager.set_writer(1, DefaultWriter, dict(name='custom'))
    with self.assertRaisesRegex(ExperimentError, r'idx must be in \[0, 3\), got 3'):
      manager.set_writer(3, None)
    manager.fit()
    self.assertEqual(len(shared['agents']), 3)  # One dict, shared by the three threads.
    agents = manager.get_agent_instances()
    self.assertFalse(agents[0].writer)  # A NullWriter: takes the calls, keeps nothing.
    self.assertEqual(agents[2].writer.style_log, 'progressbar')
    data = manager.get_writer_data()
    self.assertEqual(sorted(data), [1, 2])
    self.assertEqual(set(data[1]['name']), {'custom'})

  def test_enable_tensorboard_writes_events(self):
    manager = ExperimentManager(
        rlberry_agents.PoleAgent, ('CartPole-v1', {}), fit_budget=100, n_fit=1, seed=3,
        init_kwargs=dict(epsilon=0.8), output_dir=tempfile.mkdtemp(), enable_tensorboard=True)
    manager.fit()
    events = os.listdir(os.path.join(manager.directory, 'tensorboard', '0'))
    self.assertTrue(any(name.startswith('events.out.tfevents') for name in events))
    self.assertGreater(len(manager.get_writer_data()), 0)


def _pole_manager(parallelization, n_fit=2):
  return ExperimentManager(
      rlberry_agents.PoleAgent, ('CartPole-v1', {}), fit_budget=200, n_fit=n_fit, seed=4,
      output_dir=tempfile.mkdtemp(), parallelization=parallelization, max_workers=2)


class ManagerMethodsTest(unittest.TestCase):

  def test_optimize_hyperparams_with_rlberrys_arguments(self):
    # The trials' fits in threads: this test is of the search's arguments; the fits of an
    # agent class in processes are the other tests' (SeedExampleTest, the one below).
    self.manager = _pole_manager('thread')
    best = self.manager.optimize_hyperparams(
        n_trials=2, timeout=None, n_fit=1, n_optuna_workers=1, optuna_parallelization='thread',
        sampler_method='random', pruner_method='halving', fit_fraction=0.5,
        sampler_kwargs={'seed': 5}, disable_evaluation_writers=True)
    self.assertEqual(list(best), ['gain'])
    self.assertEqual(self.manager.init_kwargs['gain'], best['gain'])
    self.assertEqual(self.manager.study['complete'] + self.manager.study['pruned'], 2)
    trials = os.path.join(self.manager.directory, 'trials')
    for trial in os.listdir(trials):  # The trials' agents had no writer.
      for run in os.listdir(os.path.join(trials, trial)):
        if run.startswith('fit'):
          self.assertFalse(os.path.exists(os.path.join(trials, trial, run, 'writer_data.csv')))
    with self.assertRaisesRegex(ExperimentError,
                                "optuna_parallelization must be 'thread' or 'process'"):
      self.manager.optimize_hyperparams(n_trials=1, optuna_parallelization='fork')

  def test_clear_handlers_build_eval_env_and_profile(self):
    # One fit in one worker process (each imports the package anew): its saved agent is
    # what clear_handlers deletes, as it would every fit's.
    self.manager = _pole_manager('process', n_fit=1)
    self.manager.fit()
    saved = [os.path.join(self.manager.directory, fit['saved_agent'])
             for fit in self.manager.fits]
    self.assertTrue(all(os.path.isfile(path) for path in saved))
    self.manager.clear_handlers()
    self.assertFalse(any(os.path.exists(path) for path in saved))
    env = self.manager.build_eval_env()
    self.assertEqual(env.spec.id, 'CartPole-v1')
    with contextlib.redirect_stdout(io.StringIO()) as printed:
      path = self.manager.generate_profile(budget=50)
    self.assertTrue(os.path.isfile(path))
    self.assertIn('cumulative', printed.getvalue())


class BadInputTest(unittest.TestCase):

  def test_an_agent_class_without_fit_is_named_in_one_line(self):
    output_dir = tempfile.mkdtemp()
    for agent_class, message in (
        (rlberry_agents.NoFitAgent, r'agent_class NoFitAgent does not implement fit\(\)'),
        (rlberry_agents.FitOnly, r'agent_class FitOnly has no callable eval\(\)')):
      with self.subTest(agent_class=agent_class), \
          self.assertRaisesRegex(ExperimentError, message) as caught:
        ExperimentManager(agent_class, ('CartPole-v1', {}), fit_budget=10,
                          output_dir=output_dir)
      self.assertNotIn('\n', str(caught.exception))
    self.assertEqual(os.listdir(output_dir), [])


class FromConfigTest(unittest.TestCase):

  def test_a_config_has_its_own_entry(self):
    experiment = ExperimentManager.from_config('cartpole', n_fit=2, fit_budget=64,
                                               output_dir=tempfile.mkdtemp(), seed=0)
    self.assertIsInstance(experiment, ConfigExperiment)
    self.assertEqual(experiment.parallelization, 'process')
    self.assertIs(ExperimentManager.load(experiment.save()).__class__, ConfigExperiment)


if __name__ == '__main__':
  unittest.main()
