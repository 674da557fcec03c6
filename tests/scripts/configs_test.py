"""Tests of agents/scripts/configs.py and agents/scripts/config_schema.py."""

import os
import tempfile
import unittest

import gymnasium

from agents.scripts import config_schema, configs


class ConfigsTest(unittest.TestCase):

  def test_named_configs_resolve_and_inherit_by_merge(self):
    pendulum = configs.resolve('pendulum')
    cartpole = configs.resolve('cartpole')
    self.assertEqual(pendulum['env'], 'Pendulum-v1')
    self.assertEqual(cartpole['env'], 'CartPole-v1')
    self.assertEqual(pendulum['learning_rate'], 1e-3)
    # Unchanged keys come from default().
    self.assertEqual(cartpole['gae_lambda'], configs.default()['gae_lambda'])
    self.assertEqual(set(pendulum), set(config_schema.SCHEMA))

  def test_merge_rejects_unknown_keys(self):
    with self.assertRaisesRegex(config_schema.ConfigError, "'learning_rat'"):
      configs.merge(configs.default(), {'learning_rat': 1.0})

  def test_unknown_key_and_wrong_type_name_the_key(self):
    with self.assertRaisesRegex(config_schema.ConfigError,
                                "Unknown config key 'num_agent'.*'num_agents'"):
      configs.resolve('pendulum', {'num_agent': 4})
    with self.assertRaisesRegex(config_schema.ConfigError, "'num_agents'.*must be int"):
      configs.resolve('pendulum', {'num_agents': 'four'})
    with self.assertRaisesRegex(config_schema.ConfigError, "'normalize_observ'.*must be bool"):
      configs.resolve('pendulum', {'normalize_observ': 1})
    with self.assertRaisesRegex(configs.UnknownConfigError, "Unknown config 'pendulm'"):
      configs.resolve('pendulm')

  def test_parse_override_reads_yaml_values(self):
    self.assertEqual(config_schema.parse_override('learning_rate=1e-3'),
                     ('learning_rate', 1e-3))
    self.assertEqual(config_schema.parse_override('policy_layers=[32, 32]'),
                     ('policy_layers', [32, 32]))
    self.assertEqual(config_schema.parse_override('discount=1'), ('discount', 1.0))
    self.assertEqual(config_schema.parse_override('env_processes=false'),
                     ('env_processes', False))
    with self.assertRaisesRegex(config_schema.ConfigError, 'key=value'):
      config_schema.parse_override('learning_rate')

  def test_yaml_round_trip(self):
    config = configs.resolve('cartpole', {'policy_layers': [8]})
    path = os.path.join(tempfile.mkdtemp(), 'config.yaml')
    config_schema.save_yaml(config, path)
    self.assertEqual(config_schema.load_yaml(path), config)

  def test_balloon_is_real_or_plainly_missing(self):
    try:
      config = configs.resolve('balloon')
    except configs.UnknownConfigError as error:
      self.assertIn(configs.BALLOON_ENV_ID, str(error))
      self.assertIn('missing', str(error))
      return
    self.assertIn(configs.BALLOON_ENV_ID, gymnasium.registry)
    self.assertEqual(config['env'], configs.BALLOON_ENV_ID)


if __name__ == '__main__':
  unittest.main()
