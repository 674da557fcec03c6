"""Tests of agents/algorithms/registry.py."""

import unittest

from agents.algorithms import random_algorithm, registry
from agents.algorithms.ppo import config as ppo_config
from agents.algorithms.ppo import ppo
from agents.config_fields import ConfigError


class RegistryTest(unittest.TestCase):

  def test_built_in_names(self):
    self.assertIs(registry.lookup('ppo'), ppo.PPO)
    self.assertIs(registry.lookup('random'), random_algorithm.RandomAlgorithm)
    self.assertEqual(registry.declarations('ppo'),
                     (ppo_config.PPOConfig, ppo_config.NetworkConfig))
    # The entry's declarations are the ones the class carries.
    self.assertEqual(registry.declarations('ppo'), (ppo.PPO.Config, ppo.PPO.NetworkConfig))
    self.assertEqual(registry.declarations('random'), (None, None))
    from agents.algorithms.qrdqn import qrdqn
    self.assertIs(registry.lookup('qrdqn'), qrdqn.QRDQN)
    self.assertEqual(registry.declarations('qrdqn'), (qrdqn.QRDQN.Config,
                                                      qrdqn.QRDQN.NetworkConfig))

  def test_import_paths_and_bad_names(self):
    self.assertIs(registry.lookup('agents.algorithms.ppo.ppo:PPO'), ppo.PPO)
    with self.assertRaisesRegex(ConfigError, "one of \\['ppo', 'qrdqn', 'random'\\]"):
      registry.lookup('pp0')
    with self.assertRaisesRegex(ConfigError, 'cannot import'):
      registry.declarations('no_such_package.module:Agent')
    with self.assertRaisesRegex(ConfigError, "has no 'Nope'"):
      registry.lookup('agents.algorithms.ppo.ppo:Nope')
    with self.assertRaisesRegex(ConfigError, 'not an InGraphAlgorithm'):
      registry.lookup('agents.algorithms.ppo.config:PPOConfig')


if __name__ == '__main__':
  unittest.main()
