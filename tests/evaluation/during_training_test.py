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
        'loop.eval_suite': 'custom:seeds=0-7,episode_length=40'})
    self.assertEqual(during_training.check(config).episode_length, 40)
    run_dir = tempfile.mkdtemp()
    training.train(config, run_dir, quiet=True)
    with open(os.path.join(run_dir, 'metrics.jsonl')) as file:
      rows = [json.loads(line) for line in file if '"eval_suite"' in line]
    self.assertEqual(len(rows), 2)  # two eval phases in 128 training steps, one every 64
    for row in rows:
      self.assertEqual(row['episodes'], 8)
      self.assertTrue(row['cumulative_reward_ci95_low'] <= row['cumulative_reward']
                      <= row['cumulative_reward_ci95_high'], row)
      self.assertEqual(row['mean_score'], row['cumulative_reward'])
      self.assertNotIn('twr50', row)
    # Each phase keeps its per-seed results as `evaluate` writes them, so it pairs with
    # any evaluation of the suite.
    phases = sorted(os.listdir(os.path.join(run_dir, 'eval_suite')),
                    key=lambda name: int(name.split('-')[1]))
    self.assertEqual(phases, [f'step-{row["step"]}' for row in rows])
    from agents.evaluation import combine, compare, evaluate
    last = os.path.join(run_dir, 'eval_suite', phases[-1])
    header, results = combine(last)
    self.assertEqual([result.seed for result in results], list(range(8)))
    self.assertEqual(header['agent'], f'run:{run_dir} at step {rows[-1]["step"]}')
    self.assertEqual(header['agent_info'], {'kind': 'training', 'run_dir': run_dir,
                                            'step': rows[-1]['step']})
    with open(os.path.join(last, 'summary.json')) as file:
      summary = json.load(file)
    self.assertAlmostEqual(summary['cumulative_reward']['mean'], rows[-1]['cumulative_reward'])
    # The summary is the one `evaluate` would write for these results (same order, same
    # bootstrap intervals).
    from agents.evaluation import suite_runs
    self.assertEqual(summary, json.loads(json.dumps(suite_runs.summarize_dir(last))))
    evaluate('random', during_training.check(config), os.path.join(run_dir, 'random'),
             workers=0, env_id=config['environment']['id'], progress=False, artifacts=False)
    pairs = compare([os.path.join(run_dir, 'random'), last])['pairs']
    self.assertEqual(len(pairs), 1)


if __name__ == '__main__':
  unittest.main()
