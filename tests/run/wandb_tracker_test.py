"""Tests of agents/run/wandb_tracker.py in W&B's offline mode (no account, no network).

A tiny QR-DQN CartPole run with `loop.track: [wandb]` and WANDB_MODE=offline writes an offline
run under `<run_dir>/wandb/`; its `run-<id>.wandb` file (the records `wandb sync` would
upload) is read back here: the run's name, group and config, every row as history
against `global_step`, and the policy and config.yaml artifacts. A tracker that cannot
start: tracker_failures_test.
"""

import glob
import json
import os
import struct
import tempfile
import unittest
from unittest import mock

from agents.run import metrics_writer, run_manifest
from agents.training import trainer
from tests.helpers import tiny_run

try:
  from wandb.proto import wandb_internal_pb2
except ImportError:  # The `wandb` extra is not installed.
  wandb_internal_pb2 = None

_OFFLINE = {'WANDB_MODE': 'offline', 'WANDB_SILENT': 'true'}


def _records(path):
  """The protobuf `Record`s of an offline run's `.wandb` file.

  The file is W&B's LevelDB-style log: a 7-byte header (':W&B', magic, version), then
  32 KiB blocks of chunks, each with a 7-byte header (CRC-32, length, type: 1 whole,
  2 first, 3 middle, 4 last).
  """
  with open(path, 'rb') as file:
    data = file.read()
  if data[:4] != b':W&B':
    raise ValueError(f'{path} is not a W&B run file (header {data[:7]!r}).')
  block, position, pending = 32768, 7, b''
  while position + 7 <= len(data):
    left = block - position % block
    if left < 7:  # The rest of a block too short for a header is padding.
      position += left
      continue
    _, length, kind = struct.unpack('<IHB', data[position:position + 7])
    payload = data[position + 7:position + 7 + length]
    position += 7 + length
    if kind == 0:
      position += left - 7 - length
      continue
    pending = payload if kind in (1, 2) else pending + payload
    if kind in (1, 4):
      record = wandb_internal_pb2.Record()
      record.ParseFromString(pending)
      yield record


def _offline_run(run_dir):
  """The records of the one offline run under `run_dir/wandb/`, by kind."""
  paths = glob.glob(os.path.join(run_dir, 'wandb', 'offline-run-*', 'run-*.wandb'))
  records = {}
  for path in paths:
    for record in _records(path):
      records.setdefault(record.WhichOneof('record_type'), []).append(record)
  return paths, records


def _history(records):
  """[{key: value}] of the logged history rows."""
  return [{item.key or '/'.join(item.nested_key): json.loads(item.value_json)
           for item in record.history.item} for record in records.get('history', [])]


@unittest.skipIf(wandb_internal_pb2 is None, "needs the 'wandb' extra")
class WandbTrackerTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.run_dir = os.path.join(tempfile.mkdtemp(), 'run')
    with mock.patch.dict(os.environ, _OFFLINE):
      trainer.train(tiny_run.tiny_qrdqn_config(track=['wandb']), cls.run_dir, quiet=True,
                     run_name='tiny-fit00', run_group='tiny')
    # `finish` returns before W&B's service has written every record; ending the service
    # (as the end of the process does) writes them all.
    import wandb
    wandb.teardown()
    cls.paths, cls.records = _offline_run(cls.run_dir)

  def test_the_offline_run_is_in_the_run_directory(self):
    self.assertEqual(len(self.paths), 1)
    run_id = run_manifest.read(self.run_dir)['trackers']['wandb']['id']
    self.assertTrue(self.paths[0].endswith(f'run-{run_id}.wandb'), self.paths[0])

  def test_the_run_is_named_grouped_and_carries_the_config(self):
    run = self.records['run'][0].run
    self.assertEqual((run.display_name, run.run_group, run.project),
                     ('tiny-fit00', 'tiny', 'agents'))
    config = {item.key: json.loads(item.value_json) for item in run.config.update}
    expected = tiny_run.tiny_qrdqn_config(track=['wandb'])
    self.assertEqual(config['algorithm'], expected['algorithm'])
    self.assertEqual(config['seed'], expected['seed'])

  def test_every_row_of_metrics_jsonl_is_history_at_its_step(self):
    rows = metrics_writer.read_metrics(os.path.join(self.run_dir, 'metrics.jsonl'))
    history = _history(self.records)
    for phase, name in (('train', 'mean_score'), ('update', 'loss')):
      expected = [(row['step'], row[name]) for row in rows
                  if row['phase'] == phase and row.get(name) is not None]
      logged = [(entry['global_step'], entry[f'{phase}/{name}']) for entry in history
                if f'{phase}/{name}' in entry]
      self.assertEqual(logged, expected)
      self.assertTrue(expected)

  def test_the_policy_and_config_yaml_are_artifacts(self):
    artifacts = {record.artifact.type: [entry.path for entry in
                                        record.artifact.manifest.contents]
                 for record in self.records['artifact']}
    self.assertIn('saved_model.pb', artifacts['model'])
    self.assertEqual(artifacts['config'], ['config.yaml'])
    self.assertEqual(self.records['exit'][0].exit.exit_code, 0)


if __name__ == '__main__':
  unittest.main()
