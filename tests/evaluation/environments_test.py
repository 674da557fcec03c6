"""Tests for agents/evaluation/environments.py: each environment's plug-in, or the default."""

import unittest

import numpy as np

from agents import plugins
from agents.env.balloon import constants
from agents.env.balloon import plugin as balloon_plugin
from agents.evaluation import environments, runner, statistics, suites
from agents.evaluation.errors import EvaluationError


class _PaidSteps:
  """A third-party plug-in's metric: the steps that paid a positive reward."""

  def __init__(self, batch_size, episode_length, flight_paths):
    del episode_length, flight_paths
    self._paid = np.zeros(batch_size, np.int64)

  def start(self, rows):
    self._paid[rows] = 0

  def record(self, active, reward, infos):
    del infos
    self._paid += active & (np.asarray(reward) > 0)

  def result(self, row, infos):
    del infos
    return {'paid_steps': int(self._paid[row])}


class _CartPoleEvaluation(plugins.EnvironmentPlugin):
  metric = 'paid_steps'
  episode_length = 30
  episode_metrics = _PaidSteps


class _Registered:
  """Registers a plug-in for CartPole for the duration of a test."""

  def __enter__(self):
    plugins.ENVIRONMENTS.register('CartPole-v1', _CartPoleEvaluation())
    environments.get.cache_clear()

  def __exit__(self, *exc_info):
    plugins.ENVIRONMENTS.unregister('CartPole-v1')
    environments.get.cache_clear()


class _InSlab(plugins.Baseline):
  """A baseline whose actions its slab computes."""

  acts_in_slab = True


def _recording_slab(num_envs, episode_length, options, flight_paths, controller=None):
  return ('slab', num_envs, episode_length, options, flight_paths, controller)


class _SlabBaselines(plugins.EnvironmentPlugin):
  baselines = {'in_slab': _InSlab, 'outside': plugins.Baseline}
  make_slab = staticmethod(_recording_slab)


class _InSlabWithoutSlab(plugins.EnvironmentPlugin):
  baselines = {'in_slab': _InSlab}


class EnvironmentEvaluationTest(unittest.TestCase):

  def test_a_baseline_acting_in_the_slab_gets_a_slab_with_its_controller(self):
    environment = environments.EnvironmentEvaluation('Mine-v0', _SlabBaselines())
    self.assertTrue(environment.acts_in_slab('in_slab'))
    self.assertFalse(environment.acts_in_slab('outside'))
    self.assertFalse(environment.acts_in_slab('run:somewhere'))
    self.assertEqual(environment.slab_constructor(3, 10, {}, agent='in_slab')(),
                     ('slab', 3, 10, {}, False, 'in_slab'))
    for agent in ('outside', None):
      self.assertEqual(environment.slab_constructor(3, 10, {}, agent=agent)(),
                       ('slab', 3, 10, {}, False, None))
    without = environments.EnvironmentEvaluation('Mine-v0', _InSlabWithoutSlab())
    with self.assertRaisesRegex(EvaluationError, 'acts in the slab'):
      without.slab_constructor(3, 10, {}, agent='in_slab')

  def test_the_balloon_plugs_in_through_the_registry(self):
    environment = environments.get(constants.BALLOON_ENV_ID)
    self.assertIs(environment.plugin, balloon_plugin.BALLOON_PLUGIN)
    self.assertEqual((environment.metric, environment.default_episode_length()),
                     ('twr50', 960))
    self.assertEqual(environment.episode_seeds([7]), [2 ** 62 + 7])
    self.assertEqual(environments.default_env_id(), constants.BALLOON_ENV_ID)
    self.assertEqual(environments.baseline_env_id('station_seeker'), constants.BALLOON_ENV_ID)
    self.assertIsNone(environments.baseline_env_id('random'))

  def test_a_plugin_must_be_an_environment_plugin(self):
    class Untyped:
      metric = 'paid_steps'
    plugins.ENVIRONMENTS.register('Mine-v0', Untyped())
    self.addCleanup(plugins.ENVIRONMENTS.unregister, 'Mine-v0')
    with self.assertRaisesRegex(EvaluationError, 'Mine-v0 must be .*EnvironmentPlugin'):
      environments.get('Mine-v0')

  def test_an_environment_without_a_plugin_gets_the_defaults(self):
    environment = environments.get('CartPole-v1')
    self.assertIs(type(environment.plugin), plugins.EnvironmentPlugin)
    self.assertEqual((environment.metric, environment.default_episode_length()),
                     ('cumulative_reward', 500))
    self.assertEqual(environment.episode_seeds([7]), [7])
    self.assertFalse(environment.has_flight_renderer)
    with self.assertRaisesRegex(EvaluationError, "'NoSuchEnv-v9' is not a registered"):
      environments.get('NoSuchEnv-v9').default_episode_length()

  def test_a_third_party_plugin_adds_its_metric(self):
    with _Registered():
      suite = suites.get_suite('micro_eval', 'CartPole-v1')
      self.assertEqual(suite.episode_length, 30)
      flown = runner.fly('random', suite, suite.seeds, workers=0, env_id='CartPole-v1')
      self.assertEqual(flown[0].paid_steps, flown[0].final_timestep)
      summary = statistics.summarize(flown, environment=environments.get('CartPole-v1'))
      self.assertEqual(summary['metric'], 'paid_steps')
      self.assertEqual(summary['paid_steps']['mean'], flown[0].final_timestep)
      # Two environments with plug-ins: an agent naming none must say which.
      with self.assertRaisesRegex(EvaluationError, r'--env=.*CartPole-v1'):
        environments.default_env_id()


if __name__ == '__main__':
  unittest.main()
