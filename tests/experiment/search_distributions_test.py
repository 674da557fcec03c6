"""Tests of agents/experiment/search_distributions.py: the format, its checks and sampling."""

import unittest

import optuna

from agents import configs
from agents.experiment import search_distributions, search_spaces
from agents.experiment.search_distributions import Categorical, Int, LogUniform, Uniform


def _pendulum():
  return configs.resolve('pendulum')


class CheckTest(unittest.TestCase):

  def test_declared_spaces_are_valid(self):
    for name in search_spaces.SEARCH_SPACES.names():  # the balloon's registered one too
      space = search_distributions.check(search_spaces.for_config(name),
                                         configs.resolve(name))
      self.assertIn('algorithm.learning_rate', space)

  def test_a_network_kinds_own_keys_are_hyperparameters_of_its_configs(self):
    space = {'network.column_stride': Categorical([2, 4])}
    self.assertIn('network.column_stride',
                  search_distributions.check(space, configs.resolve('balloon'),
                                             'balloon'))
    with self.assertRaisesRegex(search_distributions.SearchSpaceError, 'not a hyperparameter'):
      search_distributions.check(space, _pendulum(), 'pendulum')

  def test_bad_spaces_name_the_culprit(self):
    config = _pendulum()
    cases = [
        ({}, 'search space is empty'),
        ({'algorithm.learning_rat': LogUniform(1e-4, 1e-3)},
         "'algorithm.learning_rat' is not a hyperparameter"),
        ({'algorithm.learning_rate': LogUniform(0.0, 1e-3)}, 'log scale needs low > 0'),
        ({'algorithm.update_epochs': Int(5, 2)}, 'low 5 must be below high 2'),
        ({'algorithm.policy_objective': Categorical([])}, 'has no choices'),
        ({'algorithm.update_epochs': Uniform(1.5, 3.0)}, "'algorithm.update_epochs': value 1.5"),
        ({'algorithm.clip_ratio': Uniform(0.1, 0.3, when={'algorithm.policy_objective': 'x'})},
         'conditional on'),
        ({'algorithm.learning_rate': {'type': 'loguniform', 'low': 1, 'high': 2}},
         'must be a Uniform'),
        ({'algorithm.learning_rate': {'type': 'log_uniform', 'low': 1e-4, 'hi': 2}},
         "unknown field 'hi'"),
    ]
    for space, message in cases:
      with self.subTest(message=message):
        with self.assertRaisesRegex(search_distributions.SearchSpaceError, message):
          search_distributions.check(space, config, 'pendulum')

  def test_unknown_config_name_has_no_space(self):
    with self.assertRaisesRegex(KeyError, "No search space is declared for config 'walker'"):
      search_spaces.for_config('walker')

  def test_plain_form_round_trips(self):
    space = search_spaces.for_config('pendulum')
    plain = search_distributions.to_plain(space)
    self.assertEqual(plain['algorithm.learning_rate'],
                     {'type': 'log_uniform', 'low': 1e-4, 'high': 3e-3})
    self.assertEqual(search_distributions.parse(plain), search_distributions.parse(space))


class SampleTest(unittest.TestCase):

  def test_conditional_keys_follow_their_condition(self):
    space = search_distributions.check({
        'algorithm.policy_objective': Categorical(['kl_penalty', 'clipped']),
        'algorithm.clip_ratio': Uniform(0.1, 0.3, when={'algorithm.policy_objective': 'clipped'}),
        'algorithm.update_epochs': Int(2, 4),
        'network.policy_layers': Categorical([[8], [16, 16]]),
        'algorithm.learning_rate': LogUniform(1e-4, 1e-3),
    }, _pendulum())
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    seen = set()
    for _ in range(20):
      trial = study.ask()
      params = search_distributions.sample(trial, space)
      study.tell(trial, 0.0)
      clipped = params['algorithm.policy_objective'] == 'clipped'
      self.assertEqual('algorithm.clip_ratio' in params, clipped)
      self.assertIn(params['network.policy_layers'], ([8], [16, 16]))
      self.assertIn(params['algorithm.update_epochs'], (2, 3, 4))
      self.assertTrue(1e-4 <= params['algorithm.learning_rate'] <= 1e-3)
      seen.add(clipped)
      configs.apply_overrides(_pendulum(), params)  # Every sample is a valid config.
    self.assertEqual(seen, {True, False})

  def test_grid_needs_values_for_floats(self):
    space = search_distributions.parse({'algorithm.update_epochs': Int(2, 4),
                                        'algorithm.policy_objective': Categorical(['a', 'b'])})
    self.assertEqual(search_distributions.grid(space),
                     {'algorithm.update_epochs': [2, 3, 4],
                      'algorithm.policy_objective': ['a', 'b']})
    with self.assertRaisesRegex(search_distributions.SearchSpaceError, 'needs grid='):
      search_distributions.grid(
          search_distributions.parse({'algorithm.learning_rate': LogUniform(1e-4, 1e-3)}))
    space = search_distributions.parse(
        {'algorithm.learning_rate': LogUniform(1e-4, 1e-3, grid=[1e-4, 1e-3])})
    self.assertEqual(search_distributions.grid(space), {'algorithm.learning_rate': [1e-4, 1e-3]})


if __name__ == '__main__':
  unittest.main()
