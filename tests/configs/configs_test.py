"""Tests of agents/configs: named configs, merge, overrides, YAML files, resume."""

import os
import tempfile
import unittest

from agents import configs
from agents.config_fields import ConfigError


def _write(text):
  path = os.path.join(tempfile.mkdtemp(), 'config.yaml')
  with open(path, 'w', encoding='utf-8') as file:
    file.write(text)
  return path


class NamedConfigsTest(unittest.TestCase):

  def test_named_configs_are_nested_and_inherit_by_merge(self):
    pendulum, cartpole = configs.resolve('pendulum'), configs.resolve('cartpole')
    self.assertEqual(list(pendulum), ['seed', 'environment', 'network', 'algorithm', 'loop'])
    self.assertEqual(pendulum['environment']['id'], 'Pendulum-v1')
    self.assertEqual(cartpole['environment']['id'], 'CartPole-v1')
    self.assertEqual(pendulum['algorithm']['learning_rate'], 1e-3)
    self.assertEqual(cartpole['algorithm']['gae_lambda'],
                     configs.CONFIGS['default']()['algorithm']['gae_lambda'])
    self.assertEqual(set(configs.flatten(pendulum)), set(configs.specs_of('ppo')))

  def test_balloon_keeps_its_values(self):
    balloon = configs.resolve('balloon')
    self.assertEqual(balloon['environment']['num_agents'], 256)
    self.assertEqual(balloon['environment']['kwargs'],
                     {'progress_reward': 0.2, 'wind': 'generative'})
    self.assertEqual(balloon['algorithm']['segment_length'], 30)
    # Every update still learns from 7,680 samples.
    self.assertEqual(balloon['environment']['num_agents'] * balloon['algorithm']['segment_length'],
                     7680)
    # Float32 products and the value MLP on every 4th level, the update compiled by XLA.
    self.assertEqual(balloon['network']['matmul_dtype'], 'float32')
    self.assertEqual(balloon['network']['value_stride'], 4)
    self.assertIs(balloon['algorithm']['jit_compile'], True)
    self.assertEqual(balloon['loop']['tf_threads'], 2)
    self.assertEqual(balloon['algorithm']['discount'], 0.993)
    self.assertEqual(balloon['network']['kind'], 'column')
    self.assertEqual(balloon['network']['column_stride'], 4)
    self.assertEqual(balloon['network']['column_layers'], [32])
    self.assertEqual(balloon['network']['value_layers'], [128, 128])
    self.assertFalse(balloon['algorithm']['normalize_observ'])
    self.assertEqual(balloon['loop']['steps'], 2_000_000)

  def test_merge_refuses_unknown_keys_naming_their_path(self):
    with self.assertRaisesRegex(ConfigError, "'algorithm.learning_rat'"):
      configs.merge(configs.CONFIGS['default'](), {'algorithm': {'learning_rat': 1.0}})
    with self.assertRaisesRegex(ConfigError, "'learning_rate'"):
      configs.merge(configs.CONFIGS['default'](), {'learning_rate': 1.0})

  def test_unknown_names_and_keys(self):
    with self.assertRaisesRegex(ConfigError, "Unknown config 'pendulm'"):
      configs.resolve('pendulm')
    with self.assertRaisesRegex(ConfigError, "Unknown config key 'num_agent'.*'num_agents'"):
      configs.resolve('pendulum', {'num_agent': 4})
    with self.assertRaisesRegex(ConfigError, "'environment.num_agents'.*an int"):
      configs.resolve('pendulum', {'num_agents': 'four'})
    with self.assertRaisesRegex(ConfigError, "'algorithm.normalize_observ'.*a bool"):
      configs.resolve('pendulum', {'normalize_observ': 1})


class OverridesTest(unittest.TestCase):

  def test_dotted_and_leaf_keys(self):
    config = configs.resolve('cartpole', {'algorithm.learning_rate': 1e-3, 'num_agents': 4,
                                          'policy_layers': [32], 'seed': 3})
    self.assertEqual((config['algorithm']['learning_rate'], config['environment']['num_agents'],
                      config['network']['policy_layers'], config['seed']), (1e-3, 4, [32], 3))

  def test_parse_override_reads_yaml_values(self):
    self.assertEqual(configs.parse_override('learning_rate=1e-3'), ('learning_rate', 1e-3))
    self.assertEqual(configs.parse_override('policy_layers=[32, 32]'),
                     ('policy_layers', [32, 32]))
    self.assertEqual(configs.parse_override('environment.processes=false'),
                     ('environment.processes', False))
    with self.assertRaisesRegex(ConfigError, 'key=value'):
      configs.parse_override('learning_rate')
    with self.assertRaisesRegex(ConfigError, 'not a plain YAML value'):
      configs.parse_override('seed=!!python/object/apply:os.system [echo]')

  def test_switching_the_algorithm_takes_its_defaults(self):
    config = configs.resolve('cartpole', {'algorithm.name': 'random'})
    self.assertEqual(config['algorithm'], {'name': 'random'})
    self.assertEqual(config['network'], {})
    self.assertEqual(config['environment']['id'], 'CartPole-v1')
    with self.assertRaisesRegex(ConfigError, "'algorithm.name'"):
      configs.resolve('cartpole', {'algorithm.name': 'nope'})
    with self.assertRaisesRegex(ConfigError, 'cannot import'):
      configs.resolve('cartpole', {'algorithm.name': 'no_such_module:Agent'})

  def test_relations_are_checked_before_building(self):
    with self.assertRaisesRegex(ConfigError, 'num_minibatches.* must divide'):
      configs.resolve('cartpole', {'num_minibatches': 7})
    with self.assertRaisesRegex(ConfigError, "'loop.steps' = 4 must be at least"):
      configs.resolve('cartpole', {'loop.steps': 4})
    with self.assertRaisesRegex(ConfigError, "'loop.select_suite' = 'small_eval' is flown "
                                "after each evaluation phase: it needs loop.eval_every > 0"):
      configs.resolve('cartpole', {'loop.select_suite': 'small_eval'})

  def test_unknown_environment_is_refused(self):
    with self.assertRaisesRegex(ConfigError, "'environment.id' = 'NoSuchEnv-v0'"):
      configs.resolve('cartpole', {'environment.id': 'NoSuchEnv-v0'})
    with self.assertRaisesRegex(ConfigError, "cannot import 'no_such_module'"):
      configs.resolve('cartpole', {'environment.imports': ['no_such_module']})


class YamlFilesTest(unittest.TestCase):

  def test_round_trip(self):
    config = configs.resolve('cartpole', {'policy_layers': [8]})
    path = os.path.join(tempfile.mkdtemp(), 'config.yaml')
    configs.save_yaml(config, path)
    self.assertEqual(configs.load_yaml(path), config)
    self.assertEqual(configs.resolve(path), config)

  def test_a_saved_file_has_the_mode_a_plain_open_gives(self):
    # Written through a private temporary file, it must not stay private (a shared
    # policy.yaml, a run's config.yaml read by another user).
    previous = os.umask(0o022)
    self.addCleanup(os.umask, previous)
    path = os.path.join(tempfile.mkdtemp(), 'config.yaml')
    configs.save_yaml({'seed': 1}, path)
    self.assertEqual(os.stat(path).st_mode & 0o777, 0o644)

  def test_a_partial_file_merges_onto_default(self):
    path = _write('environment: {id: CartPole-v1}\nalgorithm: {learning_rate: 0.001}\n')
    config = configs.resolve(path)
    self.assertEqual(config['environment']['id'], 'CartPole-v1')
    self.assertEqual(config['algorithm']['learning_rate'], 0.001)
    self.assertEqual(config['algorithm']['discount'], 0.99)

  def test_a_partial_file_names_its_base(self):
    config = configs.resolve(_write('base: cartpole\nalgorithm: {learning_rate: 0.001}\n'))
    self.assertEqual((config['environment']['id'], config['loop']['steps']),
                     ('CartPole-v1', 100_000))
    self.assertEqual(config['algorithm']['learning_rate'], 0.001)
    with self.assertRaisesRegex(ConfigError, "'base' must be one of"):
      configs.resolve(_write('base: cartpol\n'))

  def test_a_saved_config_must_be_a_mapping(self):
    with self.assertRaisesRegex(ConfigError, 'old config.yaml: a config is a mapping'):
      configs.from_saved(['seed'], 'old config.yaml')

  def test_damaged_files_are_one_clear_error(self):
    for text, message in (('\x00\x01binary', 'NUL bytes'),
                          ('seed: [1, 2\n', 'not valid YAML'),
                          ('- 1\n- 2\n', 'does not hold a mapping'),
                          ('seed: !!python/object/apply:os.system [echo]\n', 'not valid YAML')):
      with self.assertRaisesRegex(ConfigError, message):
        configs.load_yaml(_write(text))
    path = os.path.join(tempfile.mkdtemp(), 'config.yaml')
    with open(path, 'wb') as file:
      file.write(b'\xff\xfe\x00garbage')
    with self.assertRaisesRegex(ConfigError, 'not UTF-8'):
      configs.load_yaml(path)


class NetworkKindTest(unittest.TestCase):
  """`network.kind` resolves through `agents.plugins.NETWORKS`; a kind brings its own keys."""

  def test_the_balloon_config_is_found_by_name_through_the_registry(self):
    from agents import plugins
    from agents.env.balloon import configs as balloon_configs
    self.assertIn('balloon', plugins.CONFIGS.names())
    self.assertIs(plugins.CONFIGS.get('balloon'), balloon_configs.balloon)
    self.assertEqual(configs.resolve('balloon')['environment']['id'],
                     'BalloonLearningEnvironment-v0')

  def test_a_kind_brings_its_keys_and_takes_them_away(self):
    cartpole = configs.resolve('cartpole')
    self.assertNotIn('column_stride', cartpole['network'])
    column = configs.resolve('cartpole', {'network.kind': 'column', 'column_stride': 4})
    self.assertEqual((column['network']['column_stride'], column['network']['column_layers']),
                     (4, [32, 32]))
    back = configs.apply_overrides(column, {'kind': 'feed_forward'})
    self.assertEqual(back['network'], cartpole['network'])

  def test_an_unknown_kind_is_one_line_listing_the_known_kinds(self):
    with self.assertRaises(ConfigError) as caught:
      configs.resolve('cartpole', {'network.kind': 'transformer'})
    message = str(caught.exception)
    self.assertNotIn('\n', message)
    self.assertRegex(message, r"'network.kind' must be a registered network kind, one of "
                              r"\[.*'column', 'feed_forward', 'recurrent'.*\]; got 'transformer'")
    with self.assertRaisesRegex(ConfigError, "'network.kind'.*got 'transformer'"):
      configs.resolve(_write('network: {kind: transformer}\n'))

  def test_a_partial_file_may_choose_a_kind_and_set_its_keys(self):
    config = configs.resolve(_write('base: balloon\nnetwork: {column_stride: 2}\n'))
    self.assertEqual(config['network']['column_stride'], 2)
    config = configs.resolve(_write(
        'base: balloon\nnetwork: {kind: recurrent, gru_units: 8}\nalgorithm: {normalize_observ: '
        'true, num_minibatches: 16}\n'))
    self.assertEqual((config['network']['kind'], config['network']['gru_units']),
                     ('recurrent', 8))
    self.assertNotIn('column_stride', config['network'])


class ResumeTest(unittest.TestCase):

  def test_budget_and_cadences_may_change_nothing_else(self):
    saved = configs.resolve('cartpole')
    longer = configs.resolve('cartpole', {'loop.steps': 200_000, 'log_every': 2048})
    config, changed = configs.resume_config(saved, longer)
    self.assertEqual(changed, ['loop.log_every', 'loop.steps'])
    self.assertEqual(config, longer)
    other = configs.resolve('cartpole', {'learning_rate': 3e-4, 'seed': 2})
    with self.assertRaisesRegex(ConfigError, r'not algorithm.learning_rate \(0.001 -> 0.0003\), '
                                r'seed \(0 -> 2\)'):
      configs.resume_config(saved, other)


if __name__ == '__main__':
  unittest.main()
