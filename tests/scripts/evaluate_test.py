"""Tests for agents/scripts/evaluate.py."""

import contextlib
import io
import json
import os
import tempfile
import unittest

import gymnasium
import numpy as np

from agents import builders
from agents.scripts import evaluate
from tests.scripts import tiny_run


class _ConstantPolicy:

  def __init__(self, action):
    self.action, self.episodes, self.observations = action, 0, []

  def begin_episode(self, indices):
    self.began_row_zero = list(indices) == [0]
    self.episodes += 1

  def __call__(self, observations):
    self.observations.append(observations[0])
    return [self.action] * len(observations)


class PlayEpisodeTest(unittest.TestCase):

  def test_plays_until_done_and_reports_every_step(self):
    env = gymnasium.make('CartPole-v1')
    policy = _ConstantPolicy(1)
    resets = []
    steps = list(evaluate.play_episode(env, policy, seed=3,
                                       on_reset=lambda observ, info: resets.append(observ)))
    self.assertEqual(policy.episodes, 1)
    self.assertTrue(policy.began_row_zero)
    self.assertEqual(len(resets), 1)
    self.assertTrue(steps[-1].done)
    self.assertFalse(any(step.done for step in steps[:-1]))
    self.assertEqual(len(policy.observations), len(steps))
    self.assertTrue((policy.observations[0] == resets[0]).all())
    self.assertEqual(sum(step.reward for step in steps), float(len(steps)))
    # The same seed replays the same episode.
    again = list(evaluate.play_episode(env, _ConstantPolicy(1), seed=3))
    self.assertEqual(len(again), len(steps))
    env.close()

  def test_max_steps_cuts_the_episode(self):
    env = gymnasium.make('CartPole-v1')
    steps = list(evaluate.play_episode(env, _ConstantPolicy(0), seed=0, max_steps=3))
    self.assertEqual(len(steps), 3)
    env.close()


class DeterministicPolicyTest(unittest.TestCase):

  def test_a_batch_acts_row_by_row_like_single_observations(self):
    run_dir, _ = tiny_run.tiny_run()
    policy = evaluate.DeterministicPolicy(run_dir)
    env = builders.make_env(policy.config)
    observations = np.stack([env.reset(seed=seed)[0] for seed in range(policy.num_agents)])
    env.close()
    policy.begin_episode(range(policy.num_agents))
    batch = policy(observations)
    self.assertEqual(len(batch), policy.num_agents)
    singles = [policy(observation[None])[0] for observation in observations]
    np.testing.assert_array_equal(batch, singles)

  def test_a_batch_larger_than_num_agents_is_refused(self):
    run_dir, _ = tiny_run.tiny_run()
    policy = evaluate.DeterministicPolicy(run_dir)
    too_many = np.zeros((policy.num_agents + 1, 4), np.float32)
    with self.assertRaisesRegex(ValueError, 'num_agents'):
      policy(too_many)


SHORT_SUITE = 'custom:seeds=0-3,episode_length=12'


def run_cli(*argv):
  """(exit code, stdout, stderr) of the evaluate command line, run in this process."""
  out, err = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = evaluate.main(list(argv))
  return code, out.getvalue(), err.getvalue()


class CommandLineTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.root = tempfile.mkdtemp()
    cls.seeker = os.path.join(cls.root, 'seeker')
    cls.code, cls.out, _ = run_cli(
        '--agent=station_seeker', f'--suite={SHORT_SUITE}', f'--output_dir={cls.seeker}',
        '--workers=0', '--quiet')

  def test_evaluates_and_writes_the_artifacts(self):
    self.assertEqual(self.code, 0)
    self.assertIn('TWR50 mean [95% CI]', self.out)
    names = set(os.listdir(self.seeker))
    self.assertTrue({'shard-00000-of-00001.json', 'results.json', 'summary.json',
                     'twr50_distribution.png'} <= names, names)
    self.assertTrue(any(name.startswith('gallery-best-seed') for name in names))
    with open(os.path.join(self.seeker, 'summary.json')) as file:
      summary = json.load(file)
    self.assertEqual((summary['agent'], summary['num_seeds'], summary['table_metric']),
                     ('station_seeker', 4, 'twr50'))

  def test_shards_then_combine_then_compare(self):
    sharded = os.path.join(self.root, 'random')
    for index in (1, 0):
      code, out, _ = run_cli('--agent=random', f'--suite={SHORT_SUITE}', '--num_shards=2',
                             f'--shard_index={index}', f'--output_dir={sharded}',
                             '--workers=0', '--quiet', '--nogallery')
      self.assertEqual(code, 0)
    code, out, _ = run_cli('combine', sharded, '--nogallery')
    self.assertEqual(code, 0)
    self.assertIn('random', out)
    comparison_dir = os.path.join(self.root, 'comparison')
    code, out, _ = run_cli('compare', self.seeker, sharded, f'--output_dir={comparison_dir}')
    self.assertEqual(code, 0, out)
    self.assertIn('Wilcoxon', out)
    with open(os.path.join(comparison_dir, 'comparison.json')) as file:
      pair = json.load(file)['pairs'][0]
    self.assertEqual((pair['x'], pair['y'], pair['num_seeds']), ('random', 'station_seeker', 4))
    self.assertTrue(os.path.exists(os.path.join(comparison_dir, 'comparison.png')))

  def test_combine_refuses_missing_seeds(self):
    partial = os.path.join(self.root, 'partial')
    code, _, _ = run_cli('--agent=station_seeker', f'--suite={SHORT_SUITE}', '--num_shards=2',
                         '--shard_index=0', f'--output_dir={partial}', '--workers=0', '--quiet')
    self.assertEqual(code, 0)
    code, _, err = run_cli('combine', partial)
    self.assertEqual(code, 2)
    self.assertIn('seeds [2, 3] (2 in all) of suite', err)

  def test_bad_input_is_one_line_and_exit_code_2(self):
    empty_run = tempfile.mkdtemp()
    base = [f'--suite={SHORT_SUITE}', '--workers=0', '--quiet']
    cases = [
        (['--agent=station_keeper', f'--output_dir={self.root}/a'], 'unknown agent'),
        (['--agent=random', '--suite=huge_eval', f'--output_dir={self.root}/b'],
         'unknown suite'),
        ([f'--agent=run:{empty_run}', f'--output_dir={self.root}/c'], 'has no checkpoint'),
        (['--agent=random', '--num_shards=2', '--shard_index=2', f'--output_dir={self.root}/d'],
         r'--shard_index must lie in [0, 2)'),
        (['--agent=random', f'--output_dir={self.seeker}'],
         'already holds results of agent station_seeker'),
        (['--agent=no_such_pkg_xyz:make', f'--output_dir={self.root}/e'], 'cannot import'),
        (['--agent=tests.evaluation.fake_agents:wrong_shape', f'--output_dir={self.root}/f'],
         'returned actions of shape'),
        (['--agent=random'], 'the following arguments are required: --output_dir'),
    ]
    before = {name: os.path.getmtime(os.path.join(self.seeker, name))
              for name in os.listdir(self.seeker)}
    for argv, message in cases:
      code, out, err = run_cli(*base, *argv)  # the last --suite wins
      self.assertEqual(code, 2, (argv, err))
      self.assertIn(message, err, argv)
      self.assertEqual(len(err.strip().splitlines()), 1, err)
    after = {name: os.path.getmtime(os.path.join(self.seeker, name))
             for name in os.listdir(self.seeker)}
    self.assertEqual(before, after)
    self.assertFalse(os.path.exists(os.path.join(self.root, 'f', 'shard-00000-of-00001.json')))


if __name__ == '__main__':
  unittest.main()
