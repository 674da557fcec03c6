"""Perciatelli44's released weights in QR-DQN's network, the `balloon_finetune_perciatelli`
config and the `finetune_perciatelli` agent.

The tests that need the weights skip, saying why, on a machine without them; those of a
missing file run everywhere.
"""

import os
import unittest
from unittest import mock

import gymnasium
import numpy as np

from agents.algorithms.qrdqn import qrdqn
from agents.config_fields import ConfigError
from agents.configs import resolution
from agents.env.balloon import constants
from agents.env.balloon.controllers import perciatelli44
from agents.python_agents import run_helpers

SIZE = constants.OBSERVATION_SIZE
OBSERV = gymnasium.spaces.Box(-np.inf, np.inf, (SIZE,), np.float32)


def _fixed_batch():
  """8 observations: zeros, halves, and 6 uniform draws in [0, 1.2) (seeded)."""
  draws = np.random.default_rng(44).uniform(0.0, 1.2, (6, SIZE)).astype(np.float32)
  return np.concatenate([np.zeros((1, SIZE), np.float32),
                         np.full((1, SIZE), 0.5, np.float32), draws])


def _released_weights_or_skip():
  """The released weights' path; skips the test (or class) on a machine without them."""
  try:
    path = perciatelli44.find_weights()
  except perciatelli44.WeightsError:
    raise unittest.SkipTest('no Perciatelli44 weights on this machine (python -m '
                            'agents.env.balloon.controllers.perciatelli44 fetch)') from None
  if perciatelli44.sha256_of(path) != perciatelli44.SHA256:
    raise unittest.SkipTest(f'{path} is not the weights BLE 1.0.1 ships')
  return path


def _finetune_qrdqn(**overrides):
  # A small replay memory: the test is of the weights, not of a run.
  config = resolution.resolve('balloon_finetune_perciatelli',
                              {'network.matmul_dtype': 'float32',
                               'algorithm.replay_capacity': 2_048, **overrides})
  return qrdqn.QRDQN.from_config(config, OBSERV, gymnasium.spaces.Discrete(3))


class ReleasedWeightsTest(unittest.TestCase):
  """QR-DQN's network with the released weights gives the frozen graph's Q-values."""

  @classmethod
  def setUpClass(cls):
    # The frozen graph is loaded once; its Q-values of the fixed batch are what each
    # network built from the weights must give.
    cls.path = _released_weights_or_skip()
    cls.batch = _fixed_batch()
    cls.frozen = perciatelli44.load(cls.path).q_values(cls.batch)

  def test_same_q_values_and_actions_as_the_frozen_graph(self):
    algorithm = _finetune_qrdqn()
    batch, frozen = self.batch, self.frozen
    for network in (algorithm.online_network, algorithm.target_network):
      np.testing.assert_allclose(algorithm.q_values(batch, network).numpy(), frozen,
                                 rtol=1e-5, atol=2e-4)
    np.testing.assert_array_equal(algorithm.greedy_action(batch).numpy(),
                                  np.argmax(frozen, axis=1))
    self.assertEqual(tuple(algorithm.quantiles(batch).shape), (8, 3, 51))

  def test_the_layers_read_from_the_graph(self):
    layers = perciatelli44.layer_weights(self.path)
    self.assertEqual([kernel.shape for kernel, _ in layers],
                     [(SIZE, 600)] + [(600, 600)] * 6 + [(600, 153)])

  def test_the_agent_starts_from_them(self):
    # The agent finds the weights itself, where `find_weights` found them.
    agent = run_helpers.create_agent('finetune_perciatelli', 3, (SIZE,), num_envs=2,
                                     matmul_dtype='float32', replay_capacity=512)
    np.testing.assert_allclose(agent.batched_agent.qrdqn.q_values(self.batch).numpy(),
                               self.frozen, rtol=1e-5, atol=2e-4)


class MissingWeightsTest(unittest.TestCase):
  """Without the weights, the config and the agent fail in one line naming the fetch."""

  def setUp(self):
    patcher = mock.patch.dict(os.environ, {perciatelli44.ENV_VAR: '/nonexistent/p44.pb'})
    patcher.start()
    self.addCleanup(patcher.stop)

  def _assert_one_line_fetch(self, error):
    message = str(error)
    self.assertNotIn('\n', message)
    self.assertIn(perciatelli44.FETCH_COMMAND, message)
    self.assertIn("'network.initial_weights'", message)

  def test_the_config_resolves_but_does_not_build(self):
    with self.assertRaises(ConfigError) as caught:
      _finetune_qrdqn()
    self._assert_one_line_fetch(caught.exception)

  def test_the_agent(self):
    with self.assertRaises(ConfigError) as caught:
      run_helpers.create_agent('finetune_perciatelli', 3, (SIZE,), num_envs=2,
                               replay_capacity=512)
    self._assert_one_line_fetch(caught.exception)


if __name__ == '__main__':
  unittest.main()
