"""Tests of agents/run/model_card.py: the Markdown card says only what the record holds."""

import unittest

from agents.run import model_card, policy_record
from tests.run.policy_record_test import SUMMARY, written_record


class ModelCardTest(unittest.TestCase):

  def test_a_card_without_evaluations_claims_no_results(self):
    _, record = written_record()
    card = model_card.render(record)
    self.assertTrue(card.startswith('# cartpole_ppo: a PPO policy for CartPole-v1'))
    self.assertIn('Not evaluated', card)
    self.assertIn('- Environment steps: 1,000', card)
    self.assertIn('- Wall-clock training time: unknown', card)
    self.assertIn(record['load']['evaluate'], card)
    self.assertNotIn('| suite |', card)

  def test_evaluations_are_a_table_with_their_suite_and_command(self):
    directory, _ = written_record()
    record = policy_record.add_evaluation(
        directory, policy_record.evaluation_of(SUMMARY, 'python -m agents.scripts.evaluate X',
                                               directory))
    card = model_card.render(record)
    self.assertIn('| tiny_eval | 10 | 500 | cumulative_reward | 480.000 [470.000, 490.000] | '
                  '490.000 [480.000, 500.000] | 500.000 |', card)
    self.assertIn('    python -m agents.scripts.evaluate X', card)
    self.assertIn('for the suites measured (tiny_eval) only', card)

  def test_each_algorithm_says_what_its_deterministic_action_is(self):
    _, record = written_record()
    self.assertIn('deterministic (the mode of its action distribution)',
                  model_card.render(record))
    card = model_card.render(dict(record, algorithm='qrdqn'))
    self.assertIn('a QR-DQN policy', card)
    self.assertIn('deterministic (the greedy action)', card)
    self.assertNotIn('action distribution', card)


if __name__ == '__main__':
  unittest.main()
