"""rlberry's `rlberry.manager` module helpers, manager attributes, Seeder and agent checks."""

import os
import subprocess
import sys
import tempfile
import unittest

import matplotlib
import numpy as np
import pandas as pd

matplotlib.use('Agg')

from agents.experiment import (  # noqa: E402 (the backend first)  # noqa: E402
  AdastopComparator,
  AgentManager,
  ExperimentError,
  ExperimentManager,
  MultipleManagers,
  Seeder,
  check_agent,
  check_rl_agent,
  check_rlberry_agent,
  compare_agents,
  evaluate_agents,
  gym_make,
  plot_writer_data,
  plots,
  preset_manager,
  read_writer_data,
)
from agents.experiment.agent_base import Agent  # noqa: E402
from tests.helpers import rlberry_agents  # noqa: E402

CARTPOLE = ('CartPole-v1', {})


def _pole(output_dir, name='pole', n_fit=2, **kwargs):
  kwargs = dict(dict(fit_budget=120, n_fit=n_fit, seed=1, output_dir=output_dir,
                     init_kwargs=dict(epsilon=0.8),
                     agent_name=name, eval_kwargs=dict(eval_horizon=20, n_simulations=1)),
                **kwargs)
  return ExperimentManager(rlberry_agents.PoleAgent, CARTPOLE, **kwargs)


class Constant(Agent):
  """Evaluates to its `value`; needs no environment."""

  def __init__(self, value=0.0, **kwargs):
    Agent.__init__(self, **kwargs)
    self.value = value

  def fit(self, budget, **kwargs):
    del budget, kwargs

  def eval(self, **kwargs):
    del kwargs
    return self.value


class ModuleHelpersTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.output_dir = tempfile.mkdtemp()
    cls.manager = _pole(cls.output_dir)
    cls.manager.fit()

  def test_writer_data_is_a_frame_per_fit_and_reads_from_managers_or_folders(self):
    by_fit = self.manager.get_writer_data()
    self.assertEqual(sorted(by_fit), [0, 1])
    self.assertEqual(list(by_fit[0].columns),
                     ['name', 'tag', 'value', 'dw_time_elapsed', 'global_step'])
    rows = read_writer_data(self.manager, tag='episode_rewards', preprocess_func=np.cumsum)
    self.assertEqual(sorted(set(rows['n_simu'])), [0, 1])
    first = rows[rows['n_simu'] == 0]['value'].to_numpy()
    np.testing.assert_allclose(first, np.cumsum(by_fit[0]['value']))
    from_root = read_writer_data(self.output_dir)  # The latest manager of each name.
    from_folder = read_writer_data([str(self.manager.output_dir_)])
    self.assertEqual(len(from_root), len(from_folder))
    self.assertEqual(len(read_writer_data(self.manager, id_agent=1)), len(by_fit[1]))

  def test_plot_writer_data_draws_managers_and_folders(self):
    path = os.path.join(self.output_dir, 'plot.png')
    for source in (self.manager, [self.manager], self.output_dir):
      data = plot_writer_data(source, 'episode_rewards', show=False, savefig_fname=path)
      self.assertGreater(len(data), 1)
      self.assertGreater(os.path.getsize(path), 1000)
    for representation in ('ci', 'pi', 'cb', 'raw_curves'):
      plot_writer_data(self.manager, 'episode_rewards', smooth=True, show=False,
                       error_representation=representation)
    with self.assertRaisesRegex(ValueError, 'error_representation not implemented'):
      plot_writer_data(self.manager, 'episode_rewards', show=False, error_representation='x')
    # A tag no fit logged draws nothing and says so, as rlberry's.
    self.assertEqual(len(plot_writer_data(self.manager, 'absent', show=False)), 0)

  def test_the_projects_plot_takes_a_managers_writer_data(self):
    figure = plots.plot_writer_data([self.manager.get_writer_data()], 'episode_rewards')
    self.assertEqual(len(figure.axes[0].lines), 1)

  def test_evaluate_agents_gives_a_column_per_manager(self):
    twin = _pole(self.output_dir, name='pole', n_fit=2)
    twin.fit()
    data = evaluate_agents([self.manager, twin], n_simulations=3, show=False)
    self.assertEqual(list(data.columns), ['pole', 'pole*'])
    self.assertEqual(len(data), 3)
    every = evaluate_agents([self.manager], n_simulations=2, choose_random_agents=False,
                            plot=False)
    self.assertEqual(len(every), 4)

  def test_attributes(self):
    manager = self.manager
    self.assertEqual(manager.output_dir, __import__('pathlib').Path(self.output_dir))
    self.assertEqual(manager.output_dir_.name, f'pole_{manager.timestamp_id}')
    self.assertEqual(len(manager.unique_id), 32)
    self.assertEqual(len(manager.agent_handlers), 2)
    self.assertIsNone(manager.best_hyperparams)
    self.assertIsNone(manager.optuna_study)
    self.assertEqual(manager.seeder.seed_seq.entropy, 1)
    loaded = ExperimentManager.load(manager.save())
    self.assertEqual(loaded.unique_id, manager.unique_id)
    self.assertEqual(loaded, manager)
    self.assertNotEqual(_pole(self.output_dir, fit_budget=7), manager)


class MoreHelpersTest(unittest.TestCase):

  def test_no_environment_preset_alias_and_multiple_managers(self):
    output_dir = tempfile.mkdtemp()
    make = preset_manager(train_env=(None, None), fit_budget=-1, n_fit=5, seed=0,
                          output_dir=output_dir)
    self.assertTrue(issubclass(make, AgentManager))
    managers = MultipleManagers(parallelization='thread')
    for value in (0.0, 10.0):
      managers.append(make(Constant, agent_name=f'c{value:g}', init_kwargs=dict(value=value)))
    managers.run()
    first, second = managers.managers
    self.assertIsNone(first.agent_handlers[0].env)
    self.assertEqual(second.eval_agents(2), [10.0, 10.0])
    with self.assertRaisesRegex(ExperimentError, 'mp_context must be one of'):
      MultipleManagers(mp_context='fork')
    table = compare_agents([first, second], n_simulations=2)
    self.assertEqual(list(table['decisions']), ['reject'])
    table = compare_agents([first.save(), second.save()], method='permutation', B=50, seed=0,
                           n_simulations=2)
    self.assertEqual(list(table['decisions']), ['reject'])

  def test_compare_agents_on_a_table_accepts_equal_agents(self):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(dict(agent=['a'] * 10 + ['b'] * 10, mean_eval=rng.normal(size=20)))
    for method in ('tukey_hsd', 'permutation'):
      table = compare_agents(frame, method=method, B=200, seed=1)
      self.assertEqual(list(table['decisions']), ['accept'])

  def test_adastop_decides_a_clear_difference(self):
    output_dir = tempfile.mkdtemp()
    comparator = AdastopComparator(n=3, K=3, B=2000, seed=42)
    comparator.compare([dict(agent_class=Constant, agent_name=name, fit_budget=1,
                             init_kwargs=dict(value=value), output_dir=output_dir)
                        for name, value in (('low', 0.0), ('high', 10.0))],
                       n_evaluations=2, verbose=False)
    self.assertTrue(comparator.is_finished)
    self.assertNotIn('equal', comparator.decisions.values())


class SearchInProcessesTest(unittest.TestCase):

  def test_optuna_parallelization_process_fits_trials_in_worker_processes(self):
    manager = _pole(tempfile.mkdtemp(), n_fit=1, fit_budget=20)
    best = manager.optimize_hyperparams(n_trials=1, timeout=None, n_fit=1, n_optuna_workers=1,
                                        optuna_parallelization='process')
    self.assertEqual(list(best), ['gain'])
    self.assertEqual(manager.best_hyperparams, best)
    self.assertEqual(manager.optuna_study.best_params, best)
    self.assertEqual(manager.parallelization, 'thread')  # The manager's own fits: as before.


class SeederTest(unittest.TestCase):

  def test_seeder_is_rlberrys(self):
    self.assertTrue(np.array_equal(Seeder(44).rng.integers(100, size=20),
                                   Seeder(44).rng.integers(100, size=20)))
    self.assertFalse(np.array_equal(Seeder(43).rng.integers(100, size=20),
                                    Seeder(Seeder(43)).rng.integers(100, size=20)))
    seeder = Seeder(3)
    before = seeder.generate_state(2)
    self.assertEqual(before.shape, (2,))
    seeder.reseed(7)
    self.assertFalse(np.array_equal(before, seeder.generate_state(2)))
    again = Seeder(3)
    again.reseed(7)
    self.assertTrue(np.array_equal(seeder.generate_state(2), again.generate_state(2)))


def _local_class_manager(output_dir):
  class Local(rlberry_agents.PoleAgent):
    pass
  return ExperimentManager(Local, CARTPOLE, fit_budget=10, n_fit=1, seed=0,
                           output_dir=output_dir, outdir_id_style=None)


class UnimportableClassTest(unittest.TestCase):

  def test_a_class_defined_in_a_function_loads_here_and_is_named_elsewhere(self):
    manager = _local_class_manager(tempfile.mkdtemp())
    manager.fit()
    path = manager.save()
    self.assertIs(ExperimentManager.load(path).agent_class, manager.agent_class)
    code = ('from agents.experiment import ExperimentManager\n'
            f'ExperimentManager.load({str(path)!r})\n')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            cwd=os.getcwd(), check=False)
    self.assertNotEqual(result.returncode, 0)
    last = result.stderr.strip().splitlines()[-1]
    self.assertIn('was defined inside a function', last)
    self.assertIn('move it to a module', last)
    loaded = ExperimentManager.load(path, agent_class=rlberry_agents.PoleAgent)
    self.assertIs(loaded.agent_class, rlberry_agents.PoleAgent)


class CheckAgentTest(unittest.TestCase):

  def test_check_rl_agent_on_our_agent_classes(self):
    check_rl_agent(rlberry_agents.PoleAgent, env=CARTPOLE)
    check_rlberry_agent(rlberry_agents.PoleAgent, env='continuous_state')

  def test_bad_env_and_non_agents_are_named(self):
    with self.assertRaisesRegex(ValueError, 'The env given in parameter is not implemented'):
      check_rl_agent(rlberry_agents.PoleAgent, 'not_implemented')
    with self.assertRaisesRegex(RuntimeError, 'Agent not compatible with ExperimentManager'):
      check_rl_agent(rlberry_agents.FitOnly)

  def test_agents_almost_equal(self):
    first = rlberry_agents.PoleAgent(gym_make('CartPole-v1'), gain=0.5)
    twin = rlberry_agents.PoleAgent(gym_make('CartPole-v1'), gain=0.5)
    self.assertTrue(check_agent.check_agents_almost_equal(first, twin))
    self.assertTrue(check_agent.check_agents_almost_equal(first, twin, compare_using='eval'))


if __name__ == '__main__':
  unittest.main()
