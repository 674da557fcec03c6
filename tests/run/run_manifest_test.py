"""Tests of agents/run/run_manifest.py: run.yaml, the versions that ran a run and its trackers."""

import os
import platform
import tempfile
import unittest
from unittest import mock

import agents
from agents.run import run_manifest


class RunManifestTest(unittest.TestCase):

  def setUp(self):
    self.run_dir = tempfile.mkdtemp()

  def test_each_start_is_a_session_with_the_project_version(self):
    run_manifest.record_session(self.run_dir)
    data = run_manifest.record_session(self.run_dir)
    self.assertEqual(data['format'], run_manifest.FORMAT)
    self.assertEqual(data['project_version'], agents.__version__)
    self.assertEqual(len(data['sessions']), 2)
    self.assertEqual(data['sessions'][0]['project_version'], agents.__version__)
    self.assertEqual(data['sessions'][0]['python'], platform.python_version())
    self.assertEqual(run_manifest.read(self.run_dir), data)

  def test_a_session_records_where_its_environments_step(self):
    record = {'processes': False, 'rule': 'auto', 'workers': 2, 'step_us': 9.3}
    data = run_manifest.record_session(self.run_dir, record)
    run_manifest.record_session(self.run_dir)
    sessions = run_manifest.read(self.run_dir)['sessions']
    self.assertEqual(data['sessions'][0]['environments'], record)
    self.assertEqual((sessions[0]['environments'], 'environments' in sessions[1]),
                     (record, False))

  def test_a_session_records_the_commit_of_this_source_tree(self):
    import subprocess
    data = run_manifest.record_session(self.run_dir)
    head = subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.dirname(agents.__file__))).stdout.strip()
    self.assertEqual(data['sessions'][0]['commit'].removesuffix('-dirty'), head)
    self.assertEqual(run_manifest.source_commit(), data['sessions'][0]['commit'])

  def test_a_reader_may_leave_an_unreadable_manifest_in_place(self):
    path = run_manifest.path_in(self.run_dir)
    with open(path, 'w', encoding='utf-8') as file:
      file.write('sessions: [unclosed\n')
    with self.assertLogs('agents.run.run_manifest', 'WARNING'):
      self.assertEqual(run_manifest.read(self.run_dir, set_aside=False), {})
    self.assertTrue(os.path.exists(path))

  def test_the_first_version_is_kept_when_another_resumes(self):
    run_manifest.record_session(self.run_dir)
    path = run_manifest.path_in(self.run_dir)
    with open(path, encoding='utf-8') as file:
      text = file.read()
    with open(path, 'w', encoding='utf-8') as file:
      file.write(text.replace(f'project_version: {agents.__version__}',
                              'project_version: 0.0.1'))
    data = run_manifest.record_session(self.run_dir)
    self.assertEqual(data['project_version'], '0.0.1')
    self.assertEqual(data['sessions'][-1]['project_version'], agents.__version__)

  def test_tracker_states_are_kept_and_empty_ones_left_out(self):
    seen = []

    def start_trackers(previous):
      seen.append(previous)
      return {'mlflow': {'run_id': 'abc'}, 'other': None}

    run_manifest.record_session(self.run_dir, start_trackers=start_trackers)
    self.assertEqual(run_manifest.read(self.run_dir)['trackers'], {'mlflow': {'run_id': 'abc'}})
    run_manifest.record_session(self.run_dir, start_trackers=lambda previous: {})
    self.assertEqual(run_manifest.read(self.run_dir)['trackers'], {'mlflow': {'run_id': 'abc'}})
    run_manifest.record_session(self.run_dir, start_trackers=start_trackers)
    self.assertEqual(seen, [{}, {'mlflow': {'run_id': 'abc'}}])

  def test_one_write_per_start_and_the_session_is_kept_when_trackers_fail(self):
    with mock.patch.object(run_manifest.yaml_io, 'save_yaml',
                           wraps=run_manifest.yaml_io.save_yaml) as save:
      run_manifest.record_session(self.run_dir, start_trackers=lambda previous: {'a': {'b': 1}})
    self.assertEqual(save.call_count, 1)

    def failing(previous):
      raise RuntimeError('tracker crashed')

    with self.assertRaisesRegex(RuntimeError, 'tracker crashed'):
      run_manifest.record_session(self.run_dir, start_trackers=failing)
    data = run_manifest.read(self.run_dir)
    self.assertEqual((len(data['sessions']), data['trackers']), (2, {'a': {'b': 1}}))

  def test_an_unreadable_manifest_is_set_aside_with_one_warning(self):
    path = run_manifest.path_in(self.run_dir)
    with open(path, 'w', encoding='utf-8') as file:
      file.write('sessions: [unclosed\n')
    with self.assertLogs('agents.run.run_manifest', 'WARNING') as logs:
      data = run_manifest.record_session(self.run_dir)
    self.assertEqual(len(logs.output), 1)
    self.assertEqual(len(data['sessions']), 1)
    self.assertTrue(os.path.exists(path + '.unreadable'))

  def test_a_run_without_a_manifest_reads_as_empty(self):
    self.assertEqual(run_manifest.read(self.run_dir), {})


if __name__ == '__main__':
  unittest.main()
