"""Tests of agents/env/balloon/search.py: the balloon's default search objective."""

import unittest

import pandas as pd

from agents.env.balloon import search


class _Manager:
  """Records the suite it is asked to fly; each of its two fits scores 0.2 and 0.4."""

  def __init__(self):
    self.suites = []

  def eval_agents(self, suite):
    self.suites.append(suite)
    return pd.DataFrame({'twr50': [0.2, 0.4]})


class Twr50ObjectiveTest(unittest.TestCase):

  def test_flies_the_configs_eval_suite_or_the_one_given(self):
    for config, suite, expected in (({'loop': {'eval_suite': 'small_eval'}}, None, 'small_eval'),
                                    ({'loop': {'eval_suite': None}}, None, 'tiny_eval'),
                                    ({'loop': {'eval_suite': 'small_eval'}}, 'big_eval',
                                     'big_eval')):
      manager = _Manager()
      objective = search.twr50_objective(config, suite)
      self.assertAlmostEqual(objective(manager), 0.3)
      self.assertEqual(manager.suites, [expected])
      self.assertEqual(objective.__name__, f'twr50_on_{expected}')


if __name__ == '__main__':
  unittest.main()
