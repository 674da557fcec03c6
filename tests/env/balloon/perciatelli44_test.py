"""Tests of agents/env/balloon/controllers/perciatelli44.py on a small synthetic frozen graph.

The graph has Perciatelli44's tensor names (`observation` [None, 1099] -> `q_values`
[None, 3]) and Q-values that are the observation's first three features, so the greedy
action is their argmax. No network and no real weights; the one test of the real
weights runs only where they are found ($AGENTS_PERCIATELLI44 or the user cache).
"""

import contextlib
import hashlib
import importlib
import io
import os
import sys
import tempfile
import unittest
import zipfile
from unittest import mock

import numpy as np

from agents.env.balloon import ble_models, constants
from agents.env.balloon.controllers import perciatelli44
from agents.evaluation import policies
from agents.evaluation.errors import EvaluationError
from agents.python_agents import run_helpers

SIZE = constants.OBSERVATION_SIZE


def graph_bytes(observation='observation', q_values='q_values', num_actions=3, size=SIZE):
  """A frozen GraphDef: q_values = observation[:, :num_actions] (a constant matmul)."""
  import tensorflow as tf
  weights = np.zeros((size, num_actions), np.float32)
  weights[np.arange(num_actions), np.arange(num_actions)] = 1.0
  with tf.Graph().as_default() as graph:
    inputs = tf.compat.v1.placeholder(tf.float32, [None, size], name=observation)
    outputs = tf.identity(tf.matmul(inputs, tf.constant(weights)), name=q_values)
    tf.argmax(outputs, axis=1, name='sleepwalk_action')
  return graph.as_graph_def().SerializeToString()


def write(directory, name, data):
  path = os.path.join(directory, name)
  with open(path, 'wb') as file:
    file.write(data)
  return path


@contextlib.contextmanager
def no_weights_anywhere():
  """No $AGENTS_PERCIATELLI44, an empty cache, no BLE package."""
  with tempfile.TemporaryDirectory() as cache, \
      mock.patch.dict(os.environ, {'XDG_CACHE_HOME': cache}), \
      mock.patch.object(ble_models, 'PACKAGE', 'no_ble_package_here'):
    os.environ.pop(perciatelli44.ENV_VAR, None)
    yield cache


class PerciatelliTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls._directory = tempfile.TemporaryDirectory()
    cls.directory = cls._directory.name
    cls.graph = graph_bytes()
    cls.path = write(cls.directory, 'p44.pb', cls.graph)

  @classmethod
  def tearDownClass(cls):
    cls._directory.cleanup()

  def observations(self, count):
    return np.random.default_rng(count).uniform(0, 1, (count, SIZE)).astype(np.float32)


class NetworkTest(PerciatelliTest):

  def test_q_values_and_greedy_actions_of_any_batch(self):
    network = perciatelli44.load(self.path)
    for count in (1, 5, 64):
      observations = self.observations(count)
      q_values = network.q_values(observations)
      np.testing.assert_allclose(q_values, observations[:, :3], rtol=1e-6)
      actions = network(observations)
      self.assertEqual(actions.dtype, np.int64)
      np.testing.assert_array_equal(actions, np.argmax(observations[:, :3], axis=1))

  def test_a_tie_takes_the_first_action_and_rows_are_independent(self):
    observations = self.observations(4)
    observations[0, :3] = (0.5, 0.5, 0.5)
    network = perciatelli44.load(self.path)
    self.assertEqual(network(observations)[0], 0)
    np.testing.assert_array_equal(
        network(observations), [network(observations[row:row + 1])[0] for row in range(4)])

  def test_loaded_once_per_file(self):
    self.assertIs(perciatelli44.load(self.path), perciatelli44.load(self.path))

  def test_describe_names_the_weights_by_their_digest(self):
    self.assertEqual(perciatelli44.describe(self.path),
                     {'weights_sha256': hashlib.sha256(self.graph).hexdigest()})


class FindWeightsTest(PerciatelliTest):

  def test_missing_weights_name_the_fetch_command_in_one_line(self):
    with no_weights_anywhere(), self.assertRaises(perciatelli44.WeightsError) as caught:
      perciatelli44.find_weights()
    message = str(caught.exception)
    self.assertIn(perciatelli44.FETCH_COMMAND, message)
    self.assertNotIn('\n', message)

  def test_an_explicit_path_or_the_variable_must_exist(self):
    with no_weights_anywhere():
      with self.assertRaisesRegex(perciatelli44.WeightsError,
                                  'nope.pb: no such file; fetch them with'):
        perciatelli44.find_weights('/nonexistent/nope.pb')
      with mock.patch.dict(os.environ, {perciatelli44.ENV_VAR: '/nonexistent/env.pb'}), \
          self.assertRaisesRegex(perciatelli44.WeightsError,
                                 r'\$AGENTS_PERCIATELLI44=/nonexistent/env.pb: no such file'):
        perciatelli44.find_weights()

  def test_order_path_variable_package_cache(self):
    with no_weights_anywhere() as cache:
      cached = os.path.join(cache, 'agents', 'perciatelli44.pb')
      os.makedirs(os.path.dirname(cached))
      write(os.path.dirname(cached), 'perciatelli44.pb', self.graph)
      self.assertEqual(perciatelli44.find_weights(), cached)
      with tempfile.TemporaryDirectory() as site:
        models = os.path.join(site, 'fake_ble', 'models')
        os.makedirs(models)
        write(os.path.join(site, 'fake_ble'), '__init__.py', b'')
        packaged = write(models, 'perciatelli44.pb', self.graph)
        with mock.patch.object(ble_models, 'PACKAGE', 'fake_ble'), \
            mock.patch.object(sys, 'path', [site, *sys.path]):
          importlib.invalidate_caches()
          self.assertEqual(os.path.realpath(perciatelli44.find_weights()),
                           os.path.realpath(packaged))
          with mock.patch.dict(os.environ, {perciatelli44.ENV_VAR: self.path}):
            self.assertEqual(perciatelli44.find_weights(), self.path)
            self.assertEqual(perciatelli44.find_weights(cached), cached)


class BadWeightsTest(PerciatelliTest):

  def assert_refused(self, data, message):
    path = write(self.directory, f'bad{abs(hash(data))}.pb', data)
    with self.assertRaisesRegex(perciatelli44.WeightsError, message):
      perciatelli44.load(path)

  def test_not_a_graph(self):
    self.assert_refused(b'\xff\xff\xff\xff not a graph',
                        'is not a frozen TensorFlow graph')

  def test_other_tensor_names(self):
    self.assert_refused(graph_bytes(observation='x', q_values='y'),
                        "not Perciatelli44's graph: it has no tensor observation, q_values")

  def test_other_shapes(self):
    self.assert_refused(graph_bytes(num_actions=4), r'shape \(1, 4\), not \(1, 3\)')
    self.assert_refused(graph_bytes(size=10), "not Perciatelli44's graph")


class AgentSpecTest(PerciatelliTest):

  def test_the_spec_with_and_without_a_path(self):
    self.assertEqual(policies.split_spec('perciatelli44'), ('baseline', 'perciatelli44'))
    spec = f'perciatelli44:{self.path}'
    self.assertEqual(policies.split_spec(spec), ('baseline', spec))
    self.assertEqual(policies.baseline_parts(spec), ('perciatelli44', self.path))
    self.assertEqual(policies.baseline_parts('perciatelli44'), ('perciatelli44', None))
    self.assertEqual(policies.resolve_env_id(spec), constants.BALLOON_ENV_ID)
    self.assertEqual(policies.split_spec('tests.helpers.ble_agents:CountingAgent')[0],
                     'factory')
    with self.assertRaisesRegex(EvaluationError, r'perciatelli44\[:PATH\]'):
      policies.split_spec('perciatelli45')

  def test_flies_batched_and_is_described_by_its_weights(self):
    spec = f'perciatelli44:{self.path}'
    policy = policies.make_policy(spec, 6)
    observations = self.observations(6)
    policies.begin_episode(policy, [0, 1], [3, 4])
    np.testing.assert_array_equal(policy(observations), np.argmax(observations[:, :3], axis=1))
    self.assertEqual(policies.describe_agent(spec)['weights_sha256'],
                     hashlib.sha256(self.graph).hexdigest())
    self.assertEqual(policies.describe_agent('station_seeker'), {'kind': 'baseline'})

  def test_missing_or_bad_weights_are_one_evaluation_error(self):
    with no_weights_anywhere():
      for build in (lambda: policies.make_policy('perciatelli44', 2),
                    lambda: policies.describe_agent('perciatelli44')):
        with self.assertRaisesRegex(EvaluationError, '^--agent perciatelli44: .*fetch them'):
          build()
    bad = write(self.directory, 'bad.pb', b'\xff\xff\xff\xff')
    with self.assertRaisesRegex(EvaluationError, f'--agent perciatelli44:{bad}: .*GraphDef'):
      policies.make_policy(f'perciatelli44:{bad}', 2)

  def test_create_agent_flies_it_through_bles_interface(self):
    self.assertIn('perciatelli44', run_helpers.agent_names())
    agent = run_helpers.create_agent('perciatelli44', 3, (SIZE,), path=self.path)
    observations = self.observations(4)
    actions = [agent.begin_episode(observations[0])]
    actions += [agent.step(0.0, observation) for observation in observations[1:]]
    self.assertEqual(actions, np.argmax(observations[:, :3], axis=1).tolist())
    with no_weights_anywhere(), self.assertRaisesRegex(ValueError, 'fetch them'):
      run_helpers.create_agent('perciatelli44', 3, (SIZE,))


class FetchTest(PerciatelliTest):

  def wheel(self, directory, data):
    path = os.path.join(directory, 'balloon_learning_environment-1.0.1-py3-none-any.whl')
    with zipfile.ZipFile(path, 'w') as archive:
      archive.writestr(perciatelli44.WHEEL_MEMBER, data)
    return path

  def test_extracts_and_checks_the_digest(self):
    with tempfile.TemporaryDirectory() as directory:
      wheel = self.wheel(directory, self.graph)
      target = os.path.join(directory, 'cache', 'perciatelli44.pb')
      digest = hashlib.sha256(self.graph).hexdigest()
      self.assertEqual(perciatelli44.fetch(target, wheel, expected_sha256=digest), target)
      with open(target, 'rb') as file:
        self.assertEqual(file.read(), self.graph)
      other = os.path.join(directory, 'other.pb')
      with self.assertRaisesRegex(perciatelli44.WeightsError, 'nothing written'):
        perciatelli44.fetch(other, wheel)  # the pinned digest is BLE's, not this graph's
      self.assertFalse(os.path.exists(other))
      with self.assertRaisesRegex(perciatelli44.WeightsError, 'cannot read'):
        perciatelli44.fetch(other, write(directory, 'not.whl', b'zip?'))

  def test_downloads_bles_wheel_without_dependencies(self):
    def pip(command, check, **kwargs):
      del check, kwargs
      self.assertEqual(command[1:4], ['-m', 'pip', 'download'])
      self.assertIn('balloon_learning_environment==1.0.1', command)
      self.assertIn('--no-deps', command)
      self.wheel(command[command.index('--dest') + 1], self.graph)
      return mock.Mock(returncode=0)

    with tempfile.TemporaryDirectory() as directory, \
        mock.patch.object(ble_models.subprocess, 'run', pip):
      target = os.path.join(directory, 'p44.pb')
      perciatelli44.fetch(target, expected_sha256=hashlib.sha256(self.graph).hexdigest())
      self.assertTrue(os.path.isfile(target))

  def test_the_command_line(self):
    with tempfile.TemporaryDirectory() as directory:
      wheel = self.wheel(directory, b'other bytes')
      stderr = io.StringIO()
      with contextlib.redirect_stderr(stderr):
        self.assertEqual(perciatelli44.main(['fetch', f'--wheel={wheel}',
                                             f'--path={directory}/p.pb']), 2)
      self.assertRegex(stderr.getvalue(), '^perciatelli44: error: .*nothing written.\n$')
      self.assertFalse(os.path.exists(f'{directory}/p.pb'))


class RealWeightsTest(unittest.TestCase):
  """BLE's weights, where this machine has them: two observations' Q-values and actions."""

  def test_known_q_values(self):
    try:
      path = perciatelli44.find_weights()
    except perciatelli44.WeightsError:
      self.skipTest('no Perciatelli44 weights on this machine')
    if perciatelli44.sha256_of(path) != perciatelli44.SHA256:
      self.skipTest(f'{path} is not the weights BLE 1.0.1 ships')
    network = perciatelli44.load(path)
    observations = np.stack([np.zeros(SIZE, np.float32), np.full(SIZE, 0.5, np.float32)])
    np.testing.assert_allclose(network.q_values(observations),
                               [[4.571632, 5.200789, 5.150879], [0.477569, 0.548505, 0.199722]],
                               atol=1e-4)
    np.testing.assert_array_equal(network(observations), [1, 1])


if __name__ == '__main__':
  unittest.main()
