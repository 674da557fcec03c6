"""Tests for agents/scripts/evaluate.py."""

import json
import os
import tempfile
import unittest

from agents.configs import yaml_io
from agents.run import policy_record
from tests.helpers import tiny_run
from tests.helpers.evaluate_cli import run_cli

SHORT_SUITE = 'custom:seeds=0-3,episode_length=12'
# The balloon's runs name the wind that needs no weights.
BALLOON_SUITE = f'{SHORT_SUITE},wind=procedural'


class CommandLineTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.root = tempfile.mkdtemp()
    cls.seeker = os.path.join(cls.root, 'seeker')
    cls.code, cls.out, _ = run_cli(
        '--agent=station_seeker', f'--suite={BALLOON_SUITE}', f'--output_dir={cls.seeker}',
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
      code, out, _ = run_cli('--agent=random', f'--suite={BALLOON_SUITE}', '--num_shards=2',
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
    code, _, _ = run_cli('--agent=station_seeker', f'--suite={BALLOON_SUITE}', '--num_shards=2',
                         '--shard_index=0', f'--output_dir={partial}', '--workers=0', '--quiet')
    self.assertEqual(code, 0)
    code, _, err = run_cli('combine', partial)
    self.assertEqual(code, 2)
    self.assertIn('seeds [2, 3] (2 in all) of suite', err)

  def test_bad_input_is_one_line_and_exit_code_2(self):
    empty_run = tempfile.mkdtemp()
    base = [f'--suite={BALLOON_SUITE}', '--workers=0', '--quiet']
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
        (['--agent=tests.helpers.fake_agents:wrong_shape', f'--output_dir={self.root}/f'],
         'returned actions of shape'),
        (['--agent=random'], 'the following arguments are required: --output_dir'),
        (['--agent=perciatelli44:/nonexistent/p44.pb', f'--output_dir={self.root}/g'],
         "Perciatelli44's weights /nonexistent/p44.pb: no such file; fetch them with"),
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


class CartPoleTest(unittest.TestCase):
  """Any Gymnasium environment: a CartPole run on a suite, its mean return with intervals."""

  def test_a_cartpole_run_on_tiny_eval(self):
    run_dir, _ = tiny_run.tiny_run()
    output_dir = os.path.join(tempfile.mkdtemp(), 'cartpole')
    code, out, err = run_cli(f'--agent=run:{run_dir}', '--suite=tiny_eval',
                             f'--output_dir={output_dir}', '--workers=0', '--quiet')
    self.assertEqual(code, 0, err)
    self.assertIn('return mean [95% CI]', out)
    self.assertIn('no flight renderer', out)
    with open(os.path.join(output_dir, 'summary.json')) as file:
      summary = json.load(file)
    self.assertEqual((summary['env_id'], summary['num_seeds'], summary['table_metric']),
                     ('CartPole-v1', 10, 'cumulative_reward'))
    self.assertEqual(summary['suite']['episode_length'], 500)
    stats = summary['cumulative_reward']
    self.assertTrue(stats['mean_ci95'][0] <= stats['mean'] <= stats['mean_ci95'][1])
    self.assertTrue(stats['iqm_ci95'][0] <= stats['iqm'] <= stats['iqm_ci95'][1])
    self.assertIn(f'{stats["mean"]:.3f} [{stats["mean_ci95"][0]:.3f}, '
                  f'{stats["mean_ci95"][1]:.3f}]', out)
    self.assertTrue(os.path.exists(os.path.join(output_dir,
                                                'cumulative_reward_distribution.png')))
    # The random agent on the same seeds, then the paired comparison on the return.
    random_dir = os.path.join(os.path.dirname(output_dir), 'random')
    code, _, err = run_cli('--agent=random', '--env=CartPole-v1', '--suite=tiny_eval',
                           f'--output_dir={random_dir}', '--workers=0', '--quiet')
    self.assertEqual(code, 0, err)
    code, out, err = run_cli('compare', output_dir, random_dir)
    self.assertEqual(code, 0, err)
    with open(os.path.join(output_dir, 'comparison.json')) as file:
      comparison = json.load(file)
    self.assertEqual((comparison['metric'], comparison['pairs'][0]['num_seeds']),
                     ('cumulative_reward', 10))

  def test_a_balloon_baseline_on_cartpole_is_refused(self):
    code, _, err = run_cli('--agent=station_seeker', '--env=CartPole-v1', '--suite=micro_eval',
                           f'--output_dir={tempfile.mkdtemp()}', '--workers=0', '--quiet')
    self.assertEqual(code, 2)
    self.assertIn("'station_seeker' is a baseline of BalloonLearningEnvironment-v0", err)



class SavedModelRecordTest(unittest.TestCase):
  """`savedmodel:DIR` reads the policy's record (policy.yaml); --record adds to it."""

  def evaluate(self, policy, *extra):
    return run_cli(f'--agent=savedmodel:{policy}', f'--suite={SHORT_SUITE}',
                   f'--output_dir={tempfile.mkdtemp()}/eval', '--workers=0', '--quiet',
                   '--nogallery', *extra)

  def test_flies_the_environment_of_its_record_and_says_what_it_is(self):
    policy = tiny_run.policy_copy()
    code, out, err = self.evaluate(policy)
    self.assertEqual(code, 0, err)
    self.assertIn(f'Flying {policy_record.describe(policy_record.load(policy))}.', out)
    self.assertIn('CartPole', out.splitlines()[0])
    self.assertIn('return mean [95% CI]', out)  # CartPole's table, not the balloon's
    self.assertEqual(policy_record.load(policy)['evaluations'], [])  # not asked to record

  def test_record_adds_the_results_with_the_command(self):
    policy = tiny_run.policy_copy()
    code, out, err = self.evaluate(policy, '--record')
    self.assertEqual(code, 0, err)
    self.assertIn('Added the custom:seeds=0-3,episode_length=12 results to', out)
    [evaluation] = policy_record.load(policy)['evaluations']
    self.assertEqual(evaluation['suite']['num_seeds'], 4)
    self.assertTrue(evaluation['command'].startswith(
        f'python -m agents.scripts.evaluate --agent=savedmodel:{policy} '))

  def test_combine_record_adds_the_results_of_the_shards(self):
    policy = tiny_run.policy_copy()
    output_dir = f'{tempfile.mkdtemp()}/eval'
    for index in range(2):
      code, _, err = run_cli(f'--agent=savedmodel:{policy}', f'--suite={SHORT_SUITE}',
                             f'--output_dir={output_dir}', '--num_shards=2',
                             f'--shard_index={index}', '--workers=0', '--quiet',
                             '--nogallery')
      self.assertEqual(code, 0, err)
    self.assertEqual(policy_record.load(policy)['evaluations'], [])  # not asked to record
    code, out, err = run_cli('combine', output_dir, '--nogallery', '--record')
    self.assertEqual(code, 0, err)
    self.assertIn('Combining the results of', out)
    [evaluation] = policy_record.load(policy)['evaluations']
    self.assertEqual(evaluation['suite']['num_seeds'], 4)
    self.assertTrue(evaluation['command'].startswith('python -m agents.scripts.evaluate combine'))

  def test_combine_record_refuses_shards_of_another_agent_and_writes_nothing(self):
    output_dir = f'{tempfile.mkdtemp()}/eval'
    code, _, err = run_cli('--agent=random', '--env=CartPole-v1', f'--suite={SHORT_SUITE}',
                           f'--output_dir={output_dir}', '--workers=0', '--quiet',
                           '--nogallery', '--num_shards=1', '--shard_index=0')
    self.assertEqual(code, 0, err)
    before = sorted(os.listdir(output_dir))
    code, _, err = run_cli('combine', output_dir, '--nogallery', '--record')
    self.assertEqual(code, 2)
    self.assertIn('is not savedmodel:<DIR>', err)
    self.assertEqual(sorted(os.listdir(output_dir)), before)

  def test_a_folder_without_record_still_flies_with_one_line(self):
    policy = tiny_run.policy_copy()
    os.remove(policy_record.path_in(policy))
    code, out, err = self.evaluate(policy, '--env=CartPole-v1')
    self.assertEqual(code, 0, err)
    self.assertEqual(out.splitlines()[0], f'{policy} has no policy.yaml (exported before '
                     'policy records); flying it on CartPole-v1.')
    code, _, err = self.evaluate(policy, '--env=CartPole-v1', '--record')
    self.assertEqual(code, 2)
    self.assertIn('has no policy.yaml to add the results to', err)

  def test_a_damaged_record_is_one_line_naming_the_file_and_field(self):
    policy = tiny_run.policy_copy()
    record = policy_record.load(policy)
    yaml_io.save_yaml(dict(record, training=dict(record['training'], steps=-0.5)),
                      policy_record.path_in(policy))
    code, _, err = self.evaluate(policy)
    self.assertEqual(code, 2)
    self.assertIn(f'{policy_record.path_in(policy)}: field training.steps must be int', err)
    self.assertEqual(len(err.strip().splitlines()), 1, err)

  def test_record_refuses_other_weights_and_other_agents(self):
    policy = tiny_run.policy_copy()
    with open(os.path.join(policy, 'saved_model.pb'), 'ab') as file:
      file.write(b'\0')  # The SavedModel changed since its record was written.
    code, _, err = self.evaluate(policy, '--record')
    self.assertEqual(code, 2)
    self.assertIn('describes other weights', err)
    code, _, err = run_cli('--agent=random', '--env=CartPole-v1', f'--suite={SHORT_SUITE}',
                           f'--output_dir={tempfile.mkdtemp()}/eval', '--record')
    self.assertEqual(code, 2)
    self.assertIn('is not savedmodel:<DIR>', err)

  def test_another_environment_than_the_records_is_refused(self):
    code, _, err = self.evaluate(tiny_run.policy_copy(), '--env=Pendulum-v1')
    self.assertEqual(code, 2)
    self.assertIn('was trained on CartPole-v1 (its policy.yaml), not Pendulum-v1', err)


if __name__ == '__main__':
  unittest.main()
