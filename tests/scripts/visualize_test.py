"""Tests of agents/scripts/visualize.py on the tiny CartPole run."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from agents.configs import yaml_io
from agents.evaluation import recording
from agents.run import policy_record
from agents.scripts import visualize
from tests.helpers import tiny_run


class VisualizeTest(unittest.TestCase):

  def test_writes_video_and_episode_returns(self):
    run_dir, _ = tiny_run.tiny_run()
    outdir = tempfile.mkdtemp()
    code = visualize.main(['--logdir', run_dir, '--outdir', outdir, '--num_episodes', '2',
                           '--max_steps', '20', '--format', 'gif'])
    self.assertEqual(code, 0)
    with open(os.path.join(outdir, 'episodes.json'), encoding='utf-8') as file:
      result = json.load(file)
    self.assertEqual(len(result['episodes']), 2)
    for record in result['episodes']:
      # CartPole pays 1 per step, so the return equals the length.
      self.assertEqual(record['return'], record['length'])
      self.assertLessEqual(record['length'], 20)
      self.assertGreater(os.path.getsize(os.path.join(outdir, record['video'])), 1000)

  def test_deterministic_policy_repeats_returns(self):
    # The returns are compared, not the videos: a frame every 10 steps.
    run_dir, _ = tiny_run.tiny_run()
    first = recording.visualize(run_dir, tempfile.mkdtemp(), num_episodes=1, max_steps=50,
                                video_format='gif', seed=5, frame_every=10)
    second = recording.visualize(run_dir, tempfile.mkdtemp(), num_episodes=1, max_steps=50,
                                 video_format='gif', seed=5, frame_every=10)
    self.assertEqual(first['episodes'][0]['return'], second['episodes'][0]['return'])

  def test_saved_model_flies_like_its_run(self):
    run_dir, _ = tiny_run.tiny_run()
    # The returns are compared, not the videos: a frame every 10 steps.
    from_run = recording.visualize(run_dir, tempfile.mkdtemp(), num_episodes=2, max_steps=60,
                                   video_format='gif', seed=3, frame_every=10)
    outdir = tempfile.mkdtemp()
    # No --config: the policy's record (policy.yaml) says it flies CartPole.
    code = visualize.main(['--savedmodel', os.path.join(run_dir, 'policy'), '--outdir',
                           outdir, '--num_episodes', '2', '--max_steps', '60', '--format',
                           'gif', '--seed', '3', '--frame_every', '10'])
    self.assertEqual(code, 0)
    with open(os.path.join(outdir, 'episodes.json'), encoding='utf-8') as file:
      from_saved_model = json.load(file)
    self.assertEqual([record['return'] for record in from_saved_model['episodes']],
                     [record['return'] for record in from_run['episodes']])
    self.assertEqual(from_saved_model['savedmodel'], os.path.abspath(
        os.path.join(run_dir, 'policy')))

  def test_needs_exactly_one_policy(self):
    run_dir, _ = tiny_run.tiny_run()
    outdir = tempfile.mkdtemp()
    self.assertEqual(visualize.main(['--outdir', outdir]), 2)
    self.assertEqual(visualize.main(['--logdir', run_dir, '--savedmodel',
                                     os.path.join(run_dir, 'policy'), '--outdir', outdir]), 2)
    self.assertEqual(visualize.main(['--savedmodel', run_dir, '--outdir', outdir]), 2)
    self.assertEqual(os.listdir(outdir), [])

  def test_missing_run_is_exit_2(self):
    self.assertEqual(visualize.main(['--logdir', tempfile.mkdtemp(), '--outdir',
                                     tempfile.mkdtemp()]), 2)


  def test_a_folder_without_record_flies_the_config_given_with_one_line(self):
    policy = tiny_run.policy_copy()
    os.remove(policy_record.path_in(policy))
    argv = ['--savedmodel', policy, '--outdir', tempfile.mkdtemp(), '--num_episodes', '1',
            '--max_steps', '5', '--format', 'gif']
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
      self.assertEqual(visualize.main(argv + ['--config', 'cartpole']), 0)
      # Without --config it flies the balloon, whose observations it does not take.
      self.assertEqual(visualize.main(argv), 2)
    self.assertIn(f'visualize: {policy} has no policy.yaml (exported before policy records)',
                  out.getvalue())
    self.assertIn("the environment of config 'balloon'", err.getvalue())

  def test_a_damaged_record_is_exit_2_naming_the_file_and_field(self):
    policy = tiny_run.policy_copy()
    record = policy_record.load(policy)
    del record['config']
    yaml_io.save_yaml(record, policy_record.path_in(policy))
    err = io.StringIO()
    outdir = tempfile.mkdtemp()
    with contextlib.redirect_stderr(err):
      self.assertEqual(visualize.main(['--savedmodel', policy, '--outdir', outdir]), 2)
    self.assertIn(f'{policy_record.path_in(policy)}: field config is missing', err.getvalue())
    self.assertEqual(os.listdir(outdir), [])


if __name__ == '__main__':
  unittest.main()
