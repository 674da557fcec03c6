"""Tests for flying trained policies: run:<RUN_DIR> and savedmodel:<DIR> (a tiny balloon run)."""

import functools
import os
import tempfile
import unittest

import numpy as np

from agents.env.balloon.env import BalloonVectorEnv
from agents.evaluation import policies, runner, suites
from agents.evaluation.errors import EvaluationError
from agents.scripts import evaluate
from tests.scripts import tiny_run


@functools.cache
def tiny_balloon_run():
  """A balloon run of a few dozen steps with a checkpoint and policy/ (built once)."""
  from agents import training
  config = tiny_run.tiny_config('balloon', **{
      'environment.num_agents': 2, 'environment.processes': False, 'loop.steps': 32,
      'algorithm.segment_length': 16, 'loop.steps_per_call': 16})
  run_dir = tempfile.mkdtemp(prefix='tiny-balloon-')
  training.train(config, run_dir, quiet=True)
  return run_dir


class TrainedPolicyTest(unittest.TestCase):

  def test_run_and_its_savedmodel_fly_the_same_episodes(self):
    run_dir = tiny_balloon_run()
    suite = suites.Suite('three', range(3), episode_length=8)
    from_run = runner.fly(f'run:{run_dir}', suite, suite.seeds, workers=0)
    from_export = runner.fly(f'savedmodel:{os.path.join(run_dir, "policy")}', suite,
                             suite.seeds, workers=0)
    self.assertEqual(from_run, from_export)
    self.assertEqual(sorted(r.seed for r in from_run), [0, 1, 2])

  def test_the_batch_acts_as_the_training_graph_does(self):
    run_dir = tiny_balloon_run()
    slab = BalloonVectorEnv(2)
    observations, _ = slab.reset(seed=suites.get_suite('tiny_eval').episode_seeds([5, 6]))
    batched = policies.make_policy(f'run:{run_dir}', 8)
    trained = evaluate.DeterministicPolicy(run_dir)  # algorithm.perform, as in training
    trained.begin_episode([0, 1])
    np.testing.assert_array_equal(batched(np.tile(observations, (4, 1)))[:2],
                                  trained(observations))

  def test_a_run_of_another_environment_is_refused(self):
    run_dir, _ = tiny_run.tiny_run()  # CartPole
    with self.assertRaisesRegex(EvaluationError, 'trained on CartPole-v1'):
      policies.make_policy(f'run:{run_dir}', 2)
    with self.assertRaisesRegex(EvaluationError, r'shape \(None, 4\)'):
      policies.make_policy(f'savedmodel:{os.path.join(run_dir, "policy")}', 2)

  def test_a_named_checkpoint_that_does_not_exist(self):
    with self.assertRaisesRegex(EvaluationError, 'ckpt-999.* does not exist'):
      policies.make_policy(f'run:{tiny_balloon_run()}', 2, checkpoint='ckpt-999')


if __name__ == '__main__':
  unittest.main()
