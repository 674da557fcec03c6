"""The names a BatchPPO user imports from `agents.tools`, with BatchPPO's meaning."""

import importlib
import types
import unittest

import tensorflow as tf

from agents import tools
from agents.tools import simulate as simulate_module


class BatchPPONamesTest(unittest.TestCase):

  def test_core_classes(self):
    self.assertIs(tools.wrappers.ExternalProcess,
                  importlib.import_module('agents.tools.wrappers').ExternalProcess)
    for name, module in (('BatchEnv', 'batch_env'), ('InGraphBatchEnv', 'in_graph_batch_env'),
                         ('Loop', 'loop'), ('AttrDict', 'attr_dict'),
                         ('MockEnvironment', 'mock_environment'),
                         ('MockAlgorithm', 'mock_algorithm')):
      self.assertIs(getattr(tools, name),
                    getattr(importlib.import_module(f'agents.tools.{module}'), name))
    self.assertTrue(callable(tools.count_weights))
    self.assertIsInstance(tools.nested, types.ModuleType)
    self.assertIsInstance(tools.mock_environment, types.ModuleType)
    self.assertIsInstance(tools.mock_algorithm, types.ModuleType)

  def test_simulate_is_the_module_and_calls_its_function(self):
    self.assertIs(tools.simulate, simulate_module)
    self.assertTrue(hasattr(tools.simulate, 'FusedStep'))
    envs = [tools.MockEnvironment([2]), tools.MockEnvironment([3])]
    batch_env = tools.InGraphBatchEnv(tools.BatchEnv(envs),
                                      info_specs=tools.mock_environment.INFO_SPECS)
    algorithm = tools.MockAlgorithm(batch_env)
    episodes = tools.simulate.EpisodeStatistics(len(batch_env))

    @tf.function
    def run():
      return tools.simulate(batch_env, algorithm, episodes, steps=3, reset=True)

    result = run()
    # The 2-step episode ended at step 2 (its next began at step 3); the 3-step one at step 3.
    self.assertEqual(int(result.episodes), 2)
    self.assertEqual(result.done.numpy().tolist(), [False, True])
    self.assertEqual(len(algorithm.calls_of('perform')), 3)
    batch_env.close()


if __name__ == '__main__':
  unittest.main()
