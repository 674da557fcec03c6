"""Tests of BatchPPO's flat configs: a user's config function, the named ones, the refusals."""

import os
import re
import sys
import tempfile
import textwrap
import unittest

from agents import configs
from agents.configs import batchppo

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_USER_MODULE = '''
from agents.scripts import configs

def mytask():
  """A BatchPPO-style config, in the user's own module."""
  locals().update(configs.default())
  env = 'Pendulum-v1'
  max_length = 200
  steps = 4e4
  num_agents = 10
  update_every = 20
  policy_layers = 32, 32
  kl_target = 2e-2
  return locals()

def typo():
  locals().update(configs.default())
  env = 'Pendulum-v1'
  max_length = 200
  steps = 1e4
  update_evrey = 10
  return locals()
'''


class UserConfigFunctionTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls._directory = tempfile.TemporaryDirectory()
    with open(os.path.join(cls._directory.name, 'batchppo_user_configs.py'), 'w') as file:
      file.write(textwrap.dedent(_USER_MODULE))
    sys.path.insert(0, cls._directory.name)

  @classmethod
  def tearDownClass(cls):
    sys.path.remove(cls._directory.name)
    sys.modules.pop('batchppo_user_configs', None)
    cls._directory.cleanup()

  def test_runs_a_config_function_of_the_users_module(self):
    config = configs.resolve('batchppo_user_configs:mytask', {'loop.steps': 2000})
    self.assertEqual(config['environment']['id'], 'Pendulum-v1')
    self.assertEqual(config['environment']['max_episode_steps'], 200)
    self.assertEqual(config['environment']['num_agents'], 10)
    # 20 episodes of 200 steps over 10 agents: 400 steps of each agent per update.
    self.assertEqual(config['algorithm']['segment_length'], 400)
    self.assertEqual(config['network']['policy_layers'], [32, 32])
    self.assertEqual(config['network']['value_layers'], [200, 100])
    self.assertEqual(config['algorithm']['kl_target'], 2e-2)
    self.assertEqual(config['algorithm']['learning_rate'], 1e-4)
    self.assertEqual(config['loop']['steps'], 2000)  # The override wins.
    self.assertEqual(config['loop']['eval_every'], 20 * 200)
    self.assertEqual(config['loop']['eval_steps'], 30 * 200)

  def test_an_unknown_key_is_refused_by_name(self):
    with self.assertRaisesRegex(configs.ConfigError, r"unknown keys \['update_evrey'\]"):
      configs.resolve('batchppo_user_configs:typo')

  def test_an_unknown_function_is_one_line(self):
    with self.assertRaisesRegex(configs.ConfigError, "has no 'nothing'"):
      configs.resolve('batchppo_user_configs:nothing')


class TranslateTest(unittest.TestCase):

  def _flat(self, **changes):
    from agents.scripts import configs as batchppo_configs
    return dict(batchppo_configs.pendulum(), **changes)

  def test_missing_keys_are_named(self):
    flat = self._flat()
    del flat['max_length'], flat['kl_target']
    with self.assertRaisesRegex(configs.ConfigError, r"must set \['max_length', 'kl_target'\]"):
      batchppo.translate(flat, 'mine')

  def test_values_without_a_counterpart_are_refused(self):
    for changes, message in (({'env': lambda: None}, 'must be a Gymnasium id'),
                             ({'optimizer': 'sgd'}, 'must be Adam'),
                             ({'algorithm': 'qrdqn'}, 'must be PPO'),
                             ({'network': 'lstm'}, "'network' must be one of"),
                             ({'steps': 1.5}, "'steps' must be a whole number")):
      with self.subTest(changes=changes), self.assertRaisesRegex(configs.ConfigError, message):
        batchppo.translate(self._flat(**changes), 'mine')

  def test_minibatches_from_batch_size_and_chunk_length(self):
    # BatchPPO's pendulum: 30 episodes of 200 steps in chunks of 50, batches of 20 chunks.
    self.assertEqual(batchppo.translate(self._flat())['algorithm']['num_minibatches'], 6)
    unchunked = self._flat(batch_size=None, chunk_length=None)
    self.assertEqual(batchppo.translate(unchunked)['algorithm']['num_minibatches'], 1)

  def test_gae_lambda_and_entropy_when_given(self):
    translated = batchppo.translate(self._flat(gae_lambda=0.95, entropy_regularization=0.01))
    self.assertEqual(translated['algorithm']['gae_lambda'], 0.95)
    self.assertEqual(translated['algorithm']['entropy_coef'], 0.01)
    self.assertEqual(batchppo.translate(self._flat())['algorithm']['gae_lambda'], 1.0)

  def test_normalize_ranges_reaches_the_algorithm(self):
    self.assertIs(batchppo.translate(self._flat())['algorithm']['normalize_ranges'], True)
    for value in (True, False):
      translated = batchppo.translate(self._flat(normalize_ranges=value))
      self.assertIs(translated['algorithm']['normalize_ranges'], value)

  def test_batchppo_networks(self):
    network = batchppo.translate(self._flat())['network']
    self.assertEqual((network['mean_activation'], network['std_transform'],
                      network['initializer'], network['init_output_factor']),
                     ('tanh', 'softplus', 'glorot', 0.1))
    self.assertEqual(batchppo.translate(self._flat(init_output_factor=0.5))['network']
                     ['init_output_factor'], 0.5)

  def test_recurrent_network(self):
    from agents.scripts import networks
    translated = batchppo.translate(self._flat(network=networks.recurrent_gaussian))
    self.assertEqual(translated['network']['kind'], 'recurrent')


class NamedConfigsTest(unittest.TestCase):

  def test_batchppo_configs_resolve_on_mujoco_v5(self):
    expected = {'reacher': ('Reacher-v5', 5_000_000, 0.985, 2000),
                'cheetah': ('HalfCheetah-v5', 10_000_000, 0.99, 1000),
                'walker': ('Walker2d-v5', 10_000_000, 0.995, 1000),
                'hopper': ('Hopper-v5', 10_000_000, 0.995, 2000),
                'ant': ('Ant-v5', 20_000_000, 0.995, 1000),
                'humanoid': ('Humanoid-v5', 50_000_000, 0.995, 2000)}
    for name, (env_id, steps, discount, segment_length) in expected.items():
      with self.subTest(name=name):
        config = configs.resolve(name)
        self.assertEqual(config['environment']['id'], env_id)
        self.assertEqual(config['environment']['max_episode_steps'], 1000)
        self.assertEqual(config['environment']['num_agents'], 30)
        self.assertEqual(config['loop']['steps'], steps)
        self.assertEqual(config['algorithm']['discount'], discount)
        self.assertEqual(config['algorithm']['segment_length'], segment_length)
        self.assertEqual(config['algorithm']['update_epochs'], 25)
        self.assertEqual(config['network']['policy_layers'], [200, 100])
        self.assertEqual(config['network']['init_std'], 0.35)
        self.assertEqual(config['network']['mean_activation'], 'tanh')
        self.assertIs(config['environment']['processes'], False)

  def test_batchppo_pendulum_by_path(self):
    config = configs.resolve('agents.scripts.configs:pendulum')
    self.assertEqual(config['environment']['id'], 'Pendulum-v1')
    self.assertEqual(config['loop']['steps'], 1_000_000)

  def test_the_docs_table_names_every_key(self):
    with open(os.path.join(_REPOSITORY, 'docs', 'coming_from_batchppo.md')) as file:
      documented = set(re.findall(r'^\| `(\w+)` \|', file.read(), re.MULTILINE))
    self.assertEqual(sorted(set(batchppo.KEYS) - documented), [])


if __name__ == '__main__':
  unittest.main()
