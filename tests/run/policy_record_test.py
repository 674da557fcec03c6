"""Tests of agents/run/policy_record.py: an exported policy's policy.yaml, written and validated."""

import os
import tempfile
import unittest

from agents import configs
from agents.configs import yaml_io
from agents.run import model_card, policy_record

SUMMARY = {
    'agent': 'savedmodel:x', 'env_id': 'CartPole-v1', 'metric': 'cumulative_reward',
    'suite': {'name': 'tiny_eval', 'num_seeds': 10, 'episode_length': 500},
    'num_seeds': 10, 'final_timestep': {'mean': 480.0},
    'cumulative_reward': {'mean': 480.0, 'mean_ci95': [470.0, 490.0], 'iqm': 490.0,
                          'iqm_ci95': [480.0, 500.0], 'median': 500.0, 'std': 20.0},
}


def fake_saved_model(weights=b'weights'):
  """A folder holding what the digest reads of a SavedModel (no TensorFlow needed)."""
  directory = tempfile.mkdtemp()
  os.makedirs(os.path.join(directory, 'variables'))
  with open(os.path.join(directory, 'saved_model.pb'), 'wb') as file:
    file.write(b'graph')
  with open(os.path.join(directory, 'variables', 'variables.data-00000-of-00001'), 'wb') as file:
    file.write(weights)
  return directory


def written_record(directory=None):
  """A record of a CartPole policy written into a fake SavedModel folder; (folder, record)."""
  directory = directory or fake_saved_model()
  config = configs.resolve('cartpole')
  training = policy_record.training_of(None, config, step=1000)
  record = policy_record.new_record(directory, 'cartpole_ppo', config, 'CartPole-v1', (4,),
                                    training)
  policy_record.write(directory, record)
  return directory, record


class PolicyRecordTest(unittest.TestCase):

  def test_written_record_reads_back_with_its_card(self):
    directory, record = written_record()
    loaded = policy_record.load(directory)
    self.assertEqual(loaded, record)
    self.assertEqual((loaded['format'], loaded['training']['steps'], loaded['evaluations']),
                     (policy_record.FORMAT, 1000, []))
    self.assertEqual(loaded['weights_sha256'], policy_record.weights_digest(directory))
    self.assertEqual(configs.from_saved(loaded['config'], 'x'), configs.resolve('cartpole'))
    self.assertTrue(os.path.exists(model_card.path_in(directory)))
    self.assertEqual(policy_record.describe(loaded)[:40],
                     'cartpole_ppo: ppo on CartPole-v1, 1,000 ')

  def test_folder_without_record_reads_as_none(self):
    self.assertIsNone(policy_record.load(fake_saved_model()))

  def test_damaged_records_name_the_file_and_the_field(self):
    directory, record = written_record()
    path = policy_record.path_in(directory)
    cases = [
        (dict(record, training=dict(record['training'], steps='many')),
         'field training.steps must be int or null'),
        ({key: value for key, value in record.items() if key != 'env_id'},
         'field env_id is missing'),
        (dict(record, format=2), 'field format is 2'),
        (dict(record, observation_shape=[4, 0]), 'field observation_shape'),
        (dict(record, evaluations=[dict(policy_record.evaluation_of(SUMMARY, 'cmd', directory),
                                        suite={'name': 'tiny_eval', 'num_seeds': True,
                                               'episode_length': 500})]),
         r'field evaluations\[0\].suite.num_seeds must be int'),
    ]
    for data, message in cases:
      yaml_io.save_yaml(data, path)
      with self.assertRaisesRegex(policy_record.PolicyRecordError,
                                  f'{path}: {message}'):
        policy_record.load(directory)
    with open(path, 'w', encoding='utf-8') as file:
      file.write('name: [unclosed\n')
    with self.assertRaisesRegex(policy_record.PolicyRecordError, f'{path}.*not valid YAML'):
      policy_record.load(directory)

  def test_an_evaluation_is_added_for_its_suite_and_replaces_an_older_one(self):
    directory, _ = written_record()
    first = policy_record.evaluation_of(SUMMARY, 'first command', directory)
    self.assertEqual(set(first['statistics']), {'cumulative_reward'})
    policy_record.add_evaluation(directory, first)
    second = policy_record.evaluation_of(SUMMARY, 'second command', directory)
    other_suite = policy_record.evaluation_of(
        dict(SUMMARY, suite=dict(SUMMARY['suite'], name='small_eval', num_seeds=100)),
        'third command', directory)
    policy_record.add_evaluation(directory, second)
    record = policy_record.add_evaluation(directory, other_suite)
    self.assertEqual([entry['command'] for entry in record['evaluations']],
                     ['second command', 'third command'])
    self.assertEqual(policy_record.load(directory), record)
    with open(model_card.path_in(directory), encoding='utf-8') as file:
      self.assertIn('third command', file.read())

  def test_an_evaluation_of_other_weights_is_refused(self):
    directory, record = written_record()
    measured = policy_record.evaluation_of(SUMMARY, 'command', fake_saved_model(b'other'))
    with self.assertRaisesRegex(policy_record.PolicyRecordError, 'weights_sha256'):
      policy_record.add_evaluation(directory, measured)
    self.assertEqual(policy_record.load(directory), record)
    with self.assertRaisesRegex(policy_record.PolicyRecordError, 'has no policy.yaml'):
      policy_record.add_evaluation(fake_saved_model(), measured)

  def test_training_of_a_run_reads_its_manifest_and_checkpoint_name(self):
    from tests.helpers import tiny_run
    run_dir, result = tiny_run.tiny_run()
    config = configs.load_yaml(os.path.join(run_dir, 'config.yaml'))
    training = policy_record.training_of(run_dir, config,
                                         checkpoint=os.path.join(run_dir, 'checkpoints',
                                                                 'ckpt-128'))
    self.assertEqual((training['steps'], training['checkpoint'], training['seed']),
                     (128, 'ckpt-128', config['seed']))
    self.assertEqual(training['project_version'], __import__('agents').__version__)
    self.assertGreater(training['seconds'], 0)
    self.assertLess(training['seconds'], 600)
    # The policy/ that training exported carries the same record.
    record = policy_record.load(os.path.join(run_dir, 'policy'))
    self.assertEqual(record['training']['steps'], result['step'])
    self.assertEqual(record['config'], config)


if __name__ == '__main__':
  unittest.main()
