"""Tests of the algorithm interface and of the example in its module docstring."""

import re
import unittest

import gymnasium
import numpy as np
import tensorflow as tf

from agents.algorithms import algorithm
from agents.tools import batch_env as batch_env_lib
from agents.tools import in_graph_batch_env, mock_environment, simulate


def _docstring_example():
  """Executes the CountingAgent example from algorithm.py's docstring and returns the class."""
  match = re.search(r'\n( +class CountingAgent.*?)(?:\n"""|\Z)', algorithm.__doc__, re.S)
  lines = match.group(1).splitlines()
  indent = len(lines[0]) - len(lines[0].lstrip())
  source = '\n'.join(line[indent:] for line in lines)
  namespace = {'tf': tf, 'InGraphAlgorithm': algorithm.InGraphAlgorithm}
  exec(source, namespace)  # noqa: S102 - our own docstring, to keep the example working.
  return namespace['CountingAgent']


class AlgorithmTest(unittest.TestCase):

  def test_subclass_must_implement_all_four_methods(self):

    class Incomplete(algorithm.InGraphAlgorithm):

      def perform(self, agent_indices, observ):
        return observ

    with self.assertRaisesRegex(TypeError, 'begin_episode'):
      Incomplete()

  def test_docstring_example_runs_in_the_fused_step(self):
    counting_agent = _docstring_example()
    envs = [mock_environment.MockEnvironment([2]), mock_environment.MockEnvironment([3])]
    batch = in_graph_batch_env.InGraphBatchEnv(
        batch_env_lib.BatchEnv(envs), info_specs=mock_environment.INFO_SPECS)
    agent = counting_agent(len(batch), gymnasium.spaces.Box(-1, 1, (1,), np.float32))
    self.assertIsInstance(agent, algorithm.InGraphAlgorithm)
    simulate.FusedStep(batch, agent)(False, 6)
    # Finished within 6 steps: three episodes of 2 steps and two of 3.
    self.assertEqual(int(agent.finished_lengths.numpy()), 12)


if __name__ == '__main__':
  unittest.main()
