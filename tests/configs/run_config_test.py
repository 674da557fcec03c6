"""Tests of agents/configs/run_config.py: the frozen run config and its typed sections."""

import copy
import json
import pickle
import unittest

import cloudpickle

from agents import configs
from agents.configs import sections


class RunConfigTest(unittest.TestCase):

  def setUp(self):
    self.config = configs.resolve('cartpole', {'loop.steps': 4096})

  def test_each_section_is_its_declared_dataclass(self):
    config = self.config
    self.assertIsInstance(config, configs.RunConfig)
    self.assertIsInstance(config.loop, sections.LoopConfig)
    self.assertIsInstance(config.environment, sections.EnvironmentConfig)
    self.assertEqual(config.loop.steps, 4096)
    self.assertEqual(config.environment.id, 'CartPole-v1')
    self.assertEqual(config.algorithm_name, 'ppo')
    self.assertEqual(config.algorithm.learning_rate, config['algorithm']['learning_rate'])
    self.assertEqual(config.network.kind, 'feed_forward')
    self.assertIsNone(config.network_options)
    self.assertEqual(config.seed, config['seed'])

  def test_a_network_kind_brings_its_own_keys_as_a_dataclass(self):
    config = configs.resolve('balloon')
    self.assertEqual(config.network.kind, 'column')
    self.assertEqual(list(config.network_options.column_layers),
                     config['network']['column_layers'])

  def test_it_reads_as_the_plain_mapping_and_refuses_changes(self):
    self.assertEqual(self.config['loop']['steps'], 4096)
    for change in (lambda: self.config['loop'].__setitem__('steps', 1),
                   lambda: self.config.__setitem__('seed', 1),
                   lambda: self.config['loop'].update(steps=1),
                   lambda: setattr(self.config, 'seed', 1)):
      with self.assertRaisesRegex(TypeError, 'frozen.*apply_overrides'):
        change()
    self.assertEqual(self.config.loop.steps, 4096)

  def test_a_change_is_a_new_config_and_a_copy_is_plain(self):
    changed = configs.apply_overrides(self.config, {'loop.steps': 100})
    self.assertEqual((changed.loop.steps, self.config.loop.steps), (100, 4096))
    plain = copy.deepcopy(self.config)
    self.assertIs(type(plain), dict)
    self.assertIs(type(plain['loop']), dict)
    plain['loop']['steps'] = 700
    self.assertEqual(configs.validate(plain).loop.steps, 700)
    self.assertEqual(self.config.to_plain(), json.loads(json.dumps(self.config)))

  def test_it_travels_as_the_plain_mapping_and_validates_back_to_itself(self):
    for dumps, loads in ((pickle.dumps, pickle.loads),
                         (cloudpickle.dumps, cloudpickle.loads)):
      received = loads(dumps(self.config))
      self.assertIs(type(received), dict)
      self.assertEqual(received, self.config)
      self.assertEqual(configs.as_run_config(received), self.config)
    self.assertIs(configs.as_run_config(self.config), self.config)

  def test_a_saved_config_without_a_key_added_later_reads_the_value_it_ran_with(self):
    config = configs.resolve('default')  # XLA on, the default
    saved = config.to_plain()
    del saved['algorithm']['jit_compile']  # added with legacy=False: runs before it ran op by op
    self.assertIs(configs.from_saved(saved, 'config.yaml').algorithm.jit_compile, False)
    self.assertIs(config.algorithm.jit_compile, True)
    with self.assertRaisesRegex(configs.ConfigError, "missing the key 'algorithm.jit_compile'"):
      configs.validate(saved)  # a new config names every key
    # BatchPPO's network keys: runs saved before them ran today's network.
    saved = self.config.to_plain()
    for key in ('mean_activation', 'std_transform', 'initializer', 'init_output_factor'):
      del saved['network'][key]
    network = configs.from_saved(saved, 'config.yaml').network
    self.assertEqual((network.mean_activation, network.std_transform, network.initializer,
                      network.init_output_factor), ('none', 'exp', 'orthogonal', None))

  def test_yaml_holds_the_plain_mapping(self):
    text = configs.dump_yaml(self.config)
    self.assertIn('steps: 4096', text)
    self.assertNotIn('RunConfig', text)


if __name__ == '__main__':
  unittest.main()
