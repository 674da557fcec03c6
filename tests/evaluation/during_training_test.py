"""Tests for agents/evaluation/during_training.py: loop.eval_suite and loop.select_suite on
any environment."""

import json
import os
import tempfile
import unittest

from agents import plugins
from agents.evaluation import during_training
from agents.run import export
from tests.helpers import tiny_experiment, tiny_run

_EVAL_SUITE = 'custom:seeds=0-3,episode_length=40'
_SELECT_SUITE = 'custom:seeds=100-103,episode_length=40'


def _config():
  """A CartPole run of 96 steps with an eval phase every 32, flying both suites (the linear
  softmax policy: the suites' evaluator is checked, whatever learns; a balloon PPO run's
  phases are checked by trained_policy_test)."""
  return tiny_run.tiny_config('cartpole', **{
      'algorithm.name': tiny_experiment.LINEAR_SOFTMAX,
      'loop.eval_every': 32, 'loop.eval_steps': 16, 'loop.steps': 96,
      'loop.eval_suite': _EVAL_SUITE, 'loop.select_suite': _SELECT_SUITE})


class SuiteEvaluatorTest(unittest.TestCase):
  """One run with `loop.eval_suite` and `loop.select_suite`, read by several tests."""

  @classmethod
  def setUpClass(cls):
    from agents.training import trainer
    cls.run_dir = tempfile.mkdtemp()
    trainer.train(_config(), cls.run_dir, quiet=True)

  def test_training_finds_it_in_the_registry(self):
    self.assertIs(plugins.TRAINING_EVALUATORS.get('suite'), during_training.SuiteEvaluator)

  def test_a_cartpole_run_logs_its_mean_return_with_an_interval(self):
    config, run_dir = _config(), self.run_dir
    self.assertEqual(during_training.check(config).episode_length, 40)
    with open(os.path.join(run_dir, 'metrics.jsonl')) as file:
      rows = [json.loads(line) for line in file if '"eval_suite"' in line]
    self.assertEqual(len(rows), 3)  # three eval phases in 96 training steps, one every 32
    for row in rows:
      self.assertEqual(row['episodes'], 4)
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
    self.assertEqual([result.seed for result in results], list(range(4)))
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
    random_dir = os.path.join(tempfile.mkdtemp(), 'random')
    evaluate('random', during_training.check(config), random_dir,
             workers=0, env_id=config['environment']['id'], progress=False, artifacts=False)
    pairs = compare([random_dir, last])['pairs']
    self.assertEqual(len(pairs), 1)

  def test_select_suite_exports_the_weights_that_scored_best_on_it(self):
    from agents.evaluation import evaluate
    config, run_dir, select = _config(), self.run_dir, _SELECT_SUITE
    with open(os.path.join(run_dir, 'metrics.jsonl')) as file:
      rows = [json.loads(line) for line in file]
    eval_steps = [row['step'] for row in rows if row['phase'] == 'eval']
    selection_rows = [row for row in rows if row['phase'] == 'select_suite']
    self.assertEqual([row['step'] for row in selection_rows], eval_steps)
    self.assertEqual(len(eval_steps), 3)
    self.assertEqual(sorted(os.listdir(os.path.join(run_dir, 'select_suite'))),
                     sorted(f'step-{step}' for step in eval_steps))
    # The earliest of the phases with the highest mean return (ties keep the earlier).
    values = [row['cumulative_reward'] for row in selection_rows]
    best = selection_rows[values.index(max(values))]
    selection = export.BestPolicy.read(run_dir)
    self.assertEqual(selection, dict(step=best['step'], suite=select,
                                     metric='cumulative_reward',
                                     value=best['cumulative_reward']))
    # The folder holds those weights: flown again on the suite, they score the same.
    best_policy = os.path.join(run_dir, 'best_policy')
    outcome = evaluate(f'savedmodel:{best_policy}', during_training.check(config,
                                                                           'select_suite'),
                       os.path.join(tempfile.mkdtemp(), 'again'), workers=0,
                       env_id=config['environment']['id'], progress=False, artifacts=False)
    self.assertAlmostEqual(outcome['summary']['cumulative_reward']['mean'],
                           best['cumulative_reward'])
    from agents.run import policy_record
    record = policy_record.load(best_policy)
    self.assertEqual(record['training']['steps'], best['step'])
    self.assertIn(f"cumulative_reward {best['cumulative_reward']:.4f}", record['notes'])
    self.assertTrue(os.path.isdir(os.path.join(run_dir, 'policy')))  # the last weights too

  def test_an_unknown_suite_key_or_select_suite_suite_is_refused_by_name(self):
    config = tiny_run.tiny_config('cartpole', **{
        'loop.eval_every': 32, 'loop.select_suite': 'no_such_suite'})
    with self.assertRaisesRegex(ValueError, "'loop.select_suite'.*no_such_suite"):
      during_training.check(config, 'select_suite')
    with self.assertRaisesRegex(ValueError, "Unknown suite key 'train_suite'"):
      during_training.check(config, 'train_suite')


if __name__ == '__main__':
  unittest.main()
