"""Tests for agents/evaluation/during_training.py: loop.eval_suite on any environment."""

import json
import os
import tempfile
import unittest

from agents import plugins
from agents.evaluation import during_training
from tests.helpers import tiny_run


class SuiteEvaluatorTest(unittest.TestCase):

  def test_training_finds_it_in_the_registry(self):
    self.assertIs(plugins.TRAINING_EVALUATORS.get('suite'), during_training.SuiteEvaluator)

  def test_a_cartpole_run_logs_its_mean_return_with_an_interval(self):
    from agents import training
    config = tiny_run.tiny_config('cartpole', **{
        'loop.eval_every': 64, 'loop.eval_steps': 16,
        'loop.eval_suite': 'custom:seeds=0-2,episode_length=40'})
    self.assertEqual(during_training.check(config).episode_length, 40)
    run_dir = tempfile.mkdtemp()
    training.train(config, run_dir, quiet=True)
    with open(os.path.join(run_dir, 'metrics.jsonl')) as file:
      rows = [json.loads(line) for line in file if '"eval_suite"' in line]
    self.assertEqual(len(rows), 2)  # two eval phases in 128 training steps, one every 64
    for row in rows:
      self.assertEqual(row['episodes'], 3)
      self.assertTrue(row['cumulative_reward_ci95_low'] <= row['cumulative_reward']
                      <= row['cumulative_reward_ci95_high'], row)
      self.assertEqual(row['mean_score'], row['cumulative_reward'])
      self.assertNotIn('twr50', row)


if __name__ == '__main__':
  unittest.main()
