"""Tests for agents/python_agents/mlp_agent.py: BLE's SARSA MLP agent in NumPy."""

import tempfile
import unittest

import numpy as np

from agents.python_agents import agent as agent_lib
from agents.python_agents.mlp_agent import MLPAgent

OBSERVATIONS = np.random.default_rng(1).uniform(-1, 1, (4, 6))


class MLPAgentTest(unittest.TestCase):

  def test_gradient_matches_finite_differences(self):
    mlp = MLPAgent(3, (6,), seed=0, num_layers=3, hidden_units=5)
    _, grads = mlp._gradient(OBSERVATIONS[0], 2)
    for index in range(len(mlp.weights)):
      for position in [(0,) * mlp.weights[index].ndim, tuple(s - 1 for s in
                                                              mlp.weights[index].shape)]:
        saved = mlp.weights[index][position]
        mlp.weights[index][position] = saved + 1e-6
        above = mlp.q_values(OBSERVATIONS[0])[2]
        mlp.weights[index][position] = saved - 1e-6
        below = mlp.q_values(OBSERVATIONS[0])[2]
        mlp.weights[index][position] = saved
        self.assertAlmostEqual(grads[index][position], (above - below) / 2e-6, places=5)

  def test_sarsa_steps_reduce_bles_loss_and_eval_mode_learns_nothing(self):
    mlp = MLPAgent(3, (6,), seed=0, num_layers=2, hidden_units=8, learning_rate=0.01)

    def loss():
      first = mlp.q_values(OBSERVATIONS[0])
      second = mlp.q_values(OBSERVATIONS[1])
      return (first[action] - (1.0 + 0.9 * second[next_action])) ** 2

    action = mlp.begin_episode(OBSERVATIONS[0])
    next_action = int(np.argmax(mlp.q_values(OBSERVATIONS[1])))
    before = loss()
    self.assertEqual(mlp.step(1.0, OBSERVATIONS[1]), next_action)
    self.assertLess(loss(), before)
    mlp.set_mode(agent_lib.AgentMode.EVAL)
    weights = [weight.copy() for weight in mlp.weights]
    mlp.begin_episode(OBSERVATIONS[0])
    mlp.step(1.0, OBSERVATIONS[1])
    for old, new in zip(weights, mlp.weights):
      np.testing.assert_array_equal(old, new)

  def test_one_layer_is_linear_and_checkpoints_round_trip(self):
    mlp = MLPAgent(3, (6,), seed=0)
    self.assertEqual([weight.shape for weight in mlp.weights], [(6, 3), (3,)])
    directory = tempfile.mkdtemp()
    mlp.save_checkpoint(directory, 4)
    other = MLPAgent(3, (6,), seed=1)
    self.assertEqual(other.reload_latest_checkpoint(directory), 4)
    np.testing.assert_array_equal(other.weights[0], mlp.weights[0])
    with self.assertRaisesRegex(ValueError, 'another network'):
      MLPAgent(3, (6,), num_layers=2).load_checkpoint(directory, 4)

  def test_bad_sizes_are_named(self):
    with self.assertRaisesRegex(ValueError, 'num_layers must be an int >= 1, got 0'):
      MLPAgent(3, (6,), num_layers=0)


if __name__ == '__main__':
  unittest.main()
