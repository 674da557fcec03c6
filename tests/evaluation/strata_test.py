"""Tests for agents/evaluation/strata.py: the ranking that defines the difficulty strata."""

import json
import os
import tempfile
import unittest

import numpy as np

from agents.env.balloon import evaluation as balloon_evaluation
from agents.evaluation import results, strata, suites
from agents.evaluation.errors import EvaluationError
from tests.helpers.fake_results import balloon_result


def _results(twr):
  return [balloon_result(seed, float(value), value, value) for seed, value in enumerate(twr)]


class StrataTest(unittest.TestCase):

  def test_ranks_hardest_first_with_ties_by_reward_then_seed(self):
    items = _results([0.5, 0.1, 0.5, 0.0])
    items[2].cumulative_reward = 0.4  # same TWR50 as seed 0, less reward: harder
    self.assertEqual(strata.rank(items), [3, 1, 2, 0])

  def test_writes_the_ranking_of_a_station_seeker_big_eval(self):
    output_dir = tempfile.mkdtemp()
    twr = np.random.default_rng(0).uniform(0, 1, 10000)
    suite = suites.get_suite('big_eval')
    header = results.header('station_seeker', suite, 1, 0)
    results.write_shard(output_dir, header, _results(twr), complete=True)
    path = os.path.join(output_dir, 'strata.json')
    self.assertEqual(strata.main([f'--results_dir={output_dir}', f'--path={path}']), 0)
    with open(path) as file:
      data = json.load(file)
    self.assertEqual(data['seeds_hardest_first'], list(np.argsort(twr, kind='stable')))
    means = [info['station_seeker_twr50_mean'] for info in data['strata'].values()]
    self.assertEqual(means, sorted(means))
    self.assertEqual(list(data['strata']), list(balloon_evaluation.STRATA))

  def test_refuses_another_agent(self):
    header = results.header('random', suites.get_suite('big_eval'), 1, 0)
    with self.assertRaisesRegex(EvaluationError, 'ranked by station_seeker on big_eval'):
      strata.ranking(header, _results([0.1]))


if __name__ == '__main__':
  unittest.main()
