"""Tests of agents/training/builders.py: environments, batches and algorithms from a config."""

import types
import unittest
from unittest import mock

import numpy as np

from agents import configs
from agents.algorithms import random_algorithm
from agents.algorithms.ppo import ppo
from agents.tools import batch_env as batch_env_lib
from agents.tools import placement
from agents.training import builders
from tests.helpers import tiny_run


class BuildersTest(unittest.TestCase):

  def test_make_env_applies_time_limit_and_kwargs(self):
    config = configs.resolve('pendulum', {'max_episode_steps': 7,
                                          'environment.kwargs': {'g': 9.0}})
    env = builders.make_env(config)
    try:
      self.assertEqual(env.spec.max_episode_steps, 7)
      self.assertEqual(env.unwrapped.g, 9.0)
    finally:
      env.close()

  def test_batch_env_in_this_process_plain_and_as_balloon_slabs(self):
    for name, observ_size in (('cartpole', 4), ('balloon', 1099)):
      config = configs.resolve(name, {'num_agents': 3, 'num_minibatches': 1,
                                      'environment.processes': False})
      if name == 'balloon':
        config = tiny_run.with_wind(config, 'procedural')
      batch = builders.make_batch_env(config)
      try:
        self.assertEqual(len(batch), 3)
        batch.reset(seeds=[0, 1, 2])
        observ, reward, _, _, _ = batch.step(np.array([0, 1, 0]))
        self.assertEqual((observ.shape, reward.shape), ((3, observ_size), (3,)))
      finally:
        batch.close()

  def test_processes_auto_steps_cartpole_here_and_a_costly_env_in_workers(self):
    config = configs.resolve('cartpole', {'num_agents': 4})
    self.assertEqual(config['environment']['processes'], 'auto')
    with mock.patch('os.cpu_count', return_value=2), \
        self.assertLogs('agents.training.builders', 'INFO') as logs:
      batch = builders.make_batch_env(config)
    try:
      self.assertEqual((batch.workers, batch.placement.processes, batch.placement.rule),
                       ([], False, 'auto'))
      self.assertIn('Environments step in this process (environment.processes = auto',
                    logs.output[0])
    finally:
      batch.close()
    # A step far above the crossover (the probe is mocked: no timing in this test).
    calls = []
    with mock.patch('os.cpu_count', return_value=2), \
        mock.patch.object(placement, 'probe_step_seconds', return_value=1e-3), \
        mock.patch.object(batch_env_lib.BatchEnv, 'from_constructors',
                          lambda *args, **kwargs: calls.append(kwargs) or types.SimpleNamespace()):
      batch = builders.make_batch_env(config)
    self.assertEqual((calls[0]['processes'], calls[0]['envs_per_process']), (True, 2))
    self.assertEqual(batch.placement.as_record(), {
        'processes': True, 'rule': 'auto', 'workers': 2, 'step_us': 1000.0,
        'hop_us': placement.HOP_SECONDS * 1e6})

  def test_processes_takes_true_false_auto_and_ray_only(self):
    for value in (True, False, 'auto', 'ray'):
      config = configs.resolve('cartpole', {'environment.processes': value})
      self.assertEqual(config['environment']['processes'], value)
    for value in ('sometimes', 1, None):
      with self.assertRaisesRegex(
          configs.ConfigError,
          r"'environment.processes' .* must be one of true, false, 'auto', 'ray', got"):
        configs.resolve('cartpole', {'environment.processes': value})

  def test_check_finite_reaches_batch_env_when_it_takes_it(self):
    config = configs.resolve('cartpole', {'check_finite': False, 'environment.processes': False})
    calls = []

    def from_slab_constructors(slabs, processes=True, max_restarts=0, check_finite=True):
      calls.append(check_finite)
      return types.SimpleNamespace()

    with mock.patch.object(batch_env_lib.BatchEnv, 'from_constructors',
                           lambda *args, **kwargs: calls.append(kwargs.get('check_finite'))
                           or types.SimpleNamespace()), \
        mock.patch.object(batch_env_lib.BatchEnv, 'from_slab_constructors',
                          from_slab_constructors):
      builders.make_batch_env(config)
    self.assertEqual(calls, [False])

  def test_build_algorithm_by_name(self):
    config = configs.resolve('cartpole', {'num_agents': 2, 'num_minibatches': 2})
    observation_space, action_space = builders.env_spaces(config)
    self.assertIsInstance(
        builders.build_algorithm(config, observation_space, action_space), ppo.PPO)
    config = configs.resolve('cartpole', {'algorithm.name': 'random'})
    self.assertIsInstance(builders.build_algorithm(config, observation_space, action_space),
                          random_algorithm.RandomAlgorithm)


if __name__ == '__main__':
  unittest.main()
