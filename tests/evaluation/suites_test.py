"""Tests for agents/evaluation/suites.py, including the seed space training never flies.

The balloon's suites (wind, strata, seed offset) come from its evaluation plug-in
(agents/env/balloon/evaluation.py); other environments have BLE's names with their own
episode length.
"""

import unittest

import numpy as np

from agents.env.balloon import env as env_lib
from agents.env.balloon import evaluation as balloon_evaluation
from agents.env.balloon.episode_start import EVALUATION_SEED_BASE
from agents.evaluation import suites
from agents.evaluation.errors import EvaluationError


class NamedSuitesTest(unittest.TestCase):

  def test_ble_names_sizes_and_length(self):
    for name, size in (('micro_eval', 1), ('tiny_eval', 10), ('small_eval', 100),
                       ('medium_eval', 1000), ('big_eval', 10000)):
      suite = suites.get_suite(name)
      self.assertEqual(suite.seeds, tuple(range(size)), name)
      self.assertEqual((suite.episode_length, suite.wind), (960, 'generative'))

  def test_strata_partition_big_eval_hardest_first(self):
    strata = [suites.get_suite(name) for name in balloon_evaluation.STRATA]
    self.assertEqual([len(s.seeds) for s in strata], [2000] * 5)
    every = suites.get_suite('all_strata').seeds
    self.assertEqual(sum((s.seeds for s in strata), ()), every)
    self.assertEqual(sorted(every), list(range(10000)))
    means = [info['station_seeker_twr50_mean']
             for info in balloon_evaluation.strata_ranking()['strata'].values()]
    self.assertEqual(means, sorted(means))

  def test_any_environment_has_bles_names_with_its_own_episode_length(self):
    suite = suites.get_suite('tiny_eval', 'CartPole-v1')
    self.assertEqual((suite.seeds, suite.episode_length, suite.options),
                     (tuple(range(10)), 500, {}))
    self.assertNotIn('hardest_strata', suites.suite_names('CartPole-v1'))
    self.assertEqual(suites.episode_seed(7, 'CartPole-v1'), 7)
    with self.assertRaisesRegex(EvaluationError, 'CartPole-v1: option wind=static is not'):
      suites.get_suite('custom:wind=static', 'CartPole-v1')
    with self.assertRaisesRegex(EvaluationError, 'unknown suite .*hardest_strata'):
      suites.get_suite('hardest_strata', 'CartPole-v1')

  def test_suites_compare_and_pickle_by_value(self):
    import pickle
    suite = suites.Suite('mine', range(3), 40, wind='static')
    self.assertEqual(pickle.loads(pickle.dumps(suite)), suite)
    self.assertEqual(suites.Suite.from_dict(suite.to_dict()), suite)
    self.assertNotEqual(suite, suites.Suite('mine', range(3), 40))
    with self.assertRaises(AttributeError):
      suite.name = 'other'

  def test_unknown_suite_is_named(self):
    with self.assertRaisesRegex(EvaluationError, "unknown suite 'huge_eval'.*small_eval"):
      suites.get_suite('huge_eval')


class CustomSuiteTest(unittest.TestCase):

  def test_range_list_length_and_wind(self):
    suite = suites.get_suite('custom:seeds=5-9,episode_length=30,wind=static')
    self.assertEqual((suite.seeds, suite.episode_length, suite.wind),
                     ((5, 6, 7, 8, 9), 30, 'static'))
    self.assertEqual(suites.parse_suite('custom:seeds=3;1;2').seeds, (3, 1, 2))
    self.assertEqual(suites.Suite('mine', range(3)).seeds, (0, 1, 2))

  def test_bad_custom_suites_name_the_culprit(self):
    for text, pattern in (('custom:seeds=9-5', 'empty'), ('custom:wind=gusty', 'wind'),
                          ('custom:episode_length=0', 'episode_length'),
                          ('custom:speed=3', 'speed=3'), ('custom:seeds=1;1', 'repeats')):
      with self.assertRaisesRegex(EvaluationError, pattern, msg=text):
        suites.get_suite(text)
    with self.assertRaisesRegex(EvaluationError, r'\[0, 2\*\*62\)'):
      suites.Suite('big', [2 ** 62])


class ShardTest(unittest.TestCase):

  def test_shards_are_contiguous_and_partition_the_suite(self):
    suite = suites.get_suite('small_eval')
    shards = [suite.shard(7, index) for index in range(7)]
    self.assertEqual(sum(shards, ()), suite.seeds)
    self.assertLessEqual(max(map(len, shards)) - min(map(len, shards)), 1)

  def test_shard_index_out_of_range(self):
    with self.assertRaisesRegex(EvaluationError, r'--shard_index must lie in \[0, 4\)'):
      suites.get_suite('tiny_eval').shard(4, 4)
    with self.assertRaisesRegex(EvaluationError, '--num_shards'):
      suites.get_suite('tiny_eval').shard(0, 0)


class TrainingNeverFliesASuiteSeedTest(unittest.TestCase):
  """Suite episodes live at and above 2**62; everything training does lies below."""

  def test_every_named_suite_flies_reserved_episode_seeds(self):
    for name in suites.suite_names():
      seeds = np.array([suites.episode_seed(seed) for seed in suites.get_suite(name).seeds],
                       dtype=object)
      self.assertTrue(all(EVALUATION_SEED_BASE <= seed < 2 ** 63 for seed in seeds), name)
    self.assertEqual(suites.episode_seed(7), 2 ** 62 + 7)

  def test_unseeded_episodes_draw_below_the_reserved_space(self):
    # Before the split, half of these draws would have landed in the reserved space.
    slab = env_lib.BalloonVectorEnv(64, seed=3, wind='procedural')
    _, infos = slab.reset()
    self.assertTrue((infos['episode_seed'] < EVALUATION_SEED_BASE).all())
    single = env_lib.BalloonEnv(wind='procedural')
    single.reset(seed=None)
    for _ in range(16):
      _, info = single.reset()
      self.assertLess(info['episode_seed'], EVALUATION_SEED_BASE)

  def test_explicit_training_seeds_are_far_below(self):
    # Training seeds the first reset of environment i with config seed + i.
    from agents import configs
    config = configs.resolve('balloon')
    num_agents = config['environment']['num_agents']
    self.assertLess(config['seed'] + num_agents, EVALUATION_SEED_BASE)


if __name__ == '__main__':
  unittest.main()
