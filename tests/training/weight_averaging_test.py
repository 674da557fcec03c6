"""Tests of agents/training/weight_averaging.py and the --average_last flags of export, evaluate."""

import json
import os
import shutil
import tempfile
import unittest
from unittest import mock

import numpy as np
import tensorflow as tf

from agents.configs import ConfigError
from agents.run import checkpoints, policy_record
from agents.scripts import export
from agents.training import builders, weight_averaging
from tests.helpers import tiny_run
from tests.helpers.evaluate_cli import run_cli


def _run_copy():
  """A copy of the tiny CartPole run (checkpoints ckpt-64 and ckpt-128) to write into."""
  run_dir = os.path.join(tempfile.mkdtemp(), 'run')
  shutil.copytree(tiny_run.tiny_run()[0], run_dir)
  return run_dir


def _restored(run_dir, name):
  """(trainable weights, all other variables) of a run's checkpoint, as numpy arrays."""
  path = name if os.path.dirname(name) else os.path.join(run_dir, 'checkpoints', name)
  _, algorithm, _, _ = builders.restore_algorithm(run_dir, path, is_training=False)
  trainable = {id(variable) for variable in algorithm.trainable_variables}
  others = [variable.numpy() for variable in algorithm.variables
            if id(variable) not in trainable]
  return [variable.numpy() for variable in algorithm.trainable_variables], others


class AverageCheckpointsTest(unittest.TestCase):

  def test_weights_are_the_mean_and_the_rest_is_the_newest(self):
    run_dir = _run_copy()
    averaged = weight_averaging.average_checkpoints(run_dir, 2)
    self.assertEqual(averaged.prefix, os.path.join(run_dir, 'averaged', 'avg2-ckpt-128'))
    self.assertEqual([os.path.basename(path) for path in averaged.sources],
                     ['ckpt-64', 'ckpt-128'])
    self.assertEqual(averaged.step, 128)
    old, _ = _restored(run_dir, 'ckpt-64')
    new, new_others = _restored(run_dir, 'ckpt-128')
    mean, mean_others = _restored(run_dir, averaged.prefix)
    self.assertFalse(all(np.array_equal(a, b) for a, b in zip(old, new)))
    for a, b, got in zip(old, new, mean):
      np.testing.assert_allclose(got, (a + b) / 2, rtol=1e-6, atol=1e-7)
    for expected, got in zip(new_others, mean_others):
      np.testing.assert_array_equal(got, expected)

  def test_the_returned_algorithm_holds_what_was_written(self):
    run_dir = _run_copy()
    averaged, (config, algorithm, _, _) = weight_averaging.average_and_restore(run_dir, 2)
    self.assertEqual(config['algorithm']['name'], 'ppo')
    written, _ = _restored(run_dir, averaged.prefix)
    for expected, variable in zip(written, algorithm.trainable_variables):
      np.testing.assert_array_equal(variable.numpy(), expected)

  def test_one_checkpoint_copies_the_newest(self):
    run_dir = _run_copy()
    averaged = weight_averaging.average_checkpoints(run_dir, 1)
    for expected, got in zip(_restored(run_dir, 'ckpt-128')[0],
                             _restored(run_dir, averaged.prefix)[0]):
      np.testing.assert_array_equal(got, expected)

  def test_the_average_stays_out_of_the_checkpoints_a_resume_reads(self):
    run_dir = _run_copy()
    weight_averaging.average_checkpoints(run_dir, 2)
    self.assertEqual([os.path.basename(path) for path in
                      checkpoints.candidates(os.path.join(run_dir, 'checkpoints'))],
                     ['ckpt-128', 'ckpt-64'])

  def test_the_average_is_renamed_into_place_data_before_index(self):
    # Shards run as separate commands average into the same prefix at once: each writes
    # under a private name and renames, the index last, so a reader that finds the index
    # finds its data.
    run_dir = _run_copy()
    moves, replace = [], os.replace

    def recording_replace(source, destination):
      if destination.endswith('.index'):
        self.assertTrue(os.path.exists(destination[:-len('.index')]
                                       + '.data-00000-of-00001'))
      moves.append((os.path.basename(source), os.path.basename(destination)))
      replace(source, destination)

    with mock.patch.object(weight_averaging.os, 'replace', recording_replace):
      weight_averaging.average_checkpoints(run_dir, 2)
    self.assertEqual([destination for _, destination in moves],
                     ['avg2-ckpt-128.data-00000-of-00001', 'avg2-ckpt-128.index'])
    self.assertTrue(all('.tmp' in source for source, _ in moves))

  def test_averaging_again_leaves_one_readable_checkpoint(self):
    # A second shard writes the same bytes over the first's and leaves nothing else.
    run_dir = _run_copy()
    first = weight_averaging.average_checkpoints(run_dir, 2)
    with open(first.prefix + '.index', 'rb') as stream:
      index = stream.read()
    second = weight_averaging.average_checkpoints(run_dir, 2)  # as a second shard would
    self.assertEqual(second.prefix, first.prefix)
    with open(second.prefix + '.index', 'rb') as stream:
      self.assertEqual(stream.read(), index)
    self.assertEqual(sorted(os.listdir(os.path.dirname(first.prefix))),
                     ['avg2-ckpt-128.data-00000-of-00001', 'avg2-ckpt-128.index'])

  def test_more_checkpoints_than_the_run_keeps_are_refused(self):
    with self.assertRaisesRegex(ConfigError, r'keeps 2 checkpoint\(s\) \(ckpt-128, ckpt-64\)'
                                r'; averaging the last 3 needs 3'):
      weight_averaging.average_checkpoints(tiny_run.tiny_run()[0], 3)

  def test_a_count_below_one_is_refused(self):
    for bad in (0, -2, 1.5, True):
      with self.assertRaisesRegex(ConfigError, 'whole number of checkpoints'):
        weight_averaging.average_checkpoints(tiny_run.tiny_run()[0], bad)

  def test_a_damaged_checkpoint_is_named(self):
    run_dir = _run_copy()
    old = os.path.join(run_dir, 'checkpoints', 'ckpt-64')
    for data in tf.io.gfile.glob(old + '.data-*'):
      os.truncate(data, 10)
    with self.assertRaisesRegex(ConfigError, 'ckpt-64 does not read'):
      weight_averaging.average_checkpoints(run_dir, 2)


class AverageLastFlagsTest(unittest.TestCase):

  def test_export_builds_the_run_once(self):
    run_dir = _run_copy()
    outdir = os.path.join(tempfile.mkdtemp(), 'exported')
    with mock.patch.object(builders, 'restore_algorithm',
                           wraps=builders.restore_algorithm) as restore:
      self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir,
                                    '--average_last', '2']), 0)
    self.assertEqual(restore.call_count, 1)

  def test_export_records_that_the_weights_are_averaged(self):
    run_dir = _run_copy()
    outdir = os.path.join(tempfile.mkdtemp(), 'exported')
    self.assertEqual(export.main(['--logdir', run_dir, '--outdir', outdir,
                                  '--average_last', '2']), 0)
    record = policy_record.load(outdir)
    self.assertEqual((record['training']['steps'], record['training']['checkpoint']),
                     (128, 'avg2-ckpt-128'))
    self.assertIn('mean weights of the last 2 checkpoint(s) (ckpt-64 ... ckpt-128)',
                  record['notes'])

  def test_export_refuses_a_checkpoint_and_an_average_together(self):
    with self.assertRaises(SystemExit):
      export.main(['--logdir', 'run', '--checkpoint', 'ckpt-1', '--average_last', '2'])

  def test_evaluate_flies_the_averaged_weights(self):
    run_dir = _run_copy()
    output = tempfile.mkdtemp()
    code, out, err = run_cli('--agent', f'run:{run_dir}', '--average_last', '2',
                             '--suite', 'custom:seeds=0-1,episode_length=20',
                             '--output_dir', output, '--workers', '0', '--quiet',
                             '--nogallery')
    self.assertEqual(code, 0, err)
    self.assertIn('Flying the mean weights of the last 2 checkpoint(s)', out)
    self.assertTrue(os.path.exists(os.path.join(run_dir, 'averaged', 'avg2-ckpt-128.index')))
    with open(os.path.join(output, 'summary.json')) as file:
      self.assertEqual(json.load(file)['agent_info']['checkpoint'], 'avg2-ckpt-128')

  def test_evaluate_refuses_an_average_of_an_agent_without_checkpoints(self):
    code, _, err = run_cli('--agent', 'random', '--average_last', '2', '--env', 'CartPole-v1',
                           '--suite', 'custom:seeds=0-1,episode_length=20',
                           '--output_dir', tempfile.mkdtemp())
    self.assertEqual(code, 2)
    self.assertIn('--average_last averages the checkpoints of a run:<RUN_DIR> agent', err)


if __name__ == '__main__':
  unittest.main()
