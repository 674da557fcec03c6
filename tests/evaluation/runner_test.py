"""Tests for agents/evaluation/runner.py and policies.py: the batched episode loop."""

import os
import tempfile
import unittest

import numpy as np

from agents.env.balloon import evaluation as balloon_evaluation
from agents.env.balloon.controllers import baselines
from agents.evaluation import policies, results, runner, suites
from agents.evaluation.errors import EvaluationError
from tests.helpers import fake_agents

SHORT = suites.Suite('short', range(6), episode_length=20, wind='procedural')


def by_seed(items):
  return {result.seed: result for result in items}


class FlyTest(unittest.TestCase):

  # The layout tests fly the agents that draw random numbers: their streams must follow the
  # seed, not the slab or the fleet (a deterministic agent would hide a stream shared by a
  # slab; the environment's seeding is checked by every agent alike).
  def test_results_do_not_depend_on_the_batch_layout(self):
    for agent in ('random', 'random_walk'):
      one_slab = by_seed(runner.fly(agent, SHORT, SHORT.seeds, workers=0, slab_size=6))
      # Two worker processes with slabs of 2: balloons are refilled with later seeds.
      refilled = by_seed(runner.fly(agent, SHORT, SHORT.seeds, workers=2, slab_size=2))
      self.assertEqual(one_slab, refilled, agent)
      self.assertEqual(sorted(one_slab), list(SHORT.seeds))

  def test_two_fleets_fly_the_same_results_as_one(self):
    one = by_seed(runner.fly('random_walk', SHORT, SHORT.seeds, workers=2, slab_size=2,
                             fleets=1))
    two = by_seed(runner.fly('random_walk', SHORT, SHORT.seeds, workers=2, slab_size=2,
                             fleets=2))
    self.assertEqual(one, two)
    self.assertEqual(sorted(two), list(SHORT.seeds))

  def test_reports_every_step_and_every_seed_once(self):
    reported = {'seeds': [], 'steps': 0}

    def on_results(new, steps):
      reported['seeds'].extend(result.seed for result in new)
      reported['steps'] += steps

    runner.fly('station_seeker', SHORT, SHORT.seeds, workers=2, slab_size=2,
               on_results=on_results)
    self.assertEqual(sorted(reported['seeds']), list(SHORT.seeds))
    self.assertEqual(reported['steps'], len(SHORT.seeds) * SHORT.episode_length)

  def test_results_match_the_environment_flown_directly(self):
    flown = by_seed(runner.fly('station_seeker', SHORT, SHORT.seeds, workers=0))
    direct = balloon_evaluation.fly(baselines.StationSeekerPolicy(),
                                [suites.episode_seed(seed) for seed in SHORT.seeds],
                                wind='procedural', steps=SHORT.episode_length)
    for index, seed in enumerate(SHORT.seeds):
      # BatchEnv carries rewards as float32.
      self.assertAlmostEqual(flown[seed].cumulative_reward, direct['reward'][index], places=4)
      self.assertEqual(flown[seed].final_timestep, 20)
      self.assertEqual(flown[seed].twr50, flown[seed].time_within_radius)

  def test_flight_paths(self):
    flown = runner.fly('station_seeker', SHORT, [0, 1], workers=0, flight_paths=True)
    for result in flown:
      self.assertEqual(set(result.flight_path), set(balloon_evaluation.FLIGHT_PATH_KEYS))
      self.assertEqual(len(result.flight_path['x']), result.final_timestep)
      distance = np.hypot(result.flight_path['x'], result.flight_path['y']) / 1000.0
      self.assertAlmostEqual(float((distance <= 50.0).mean()), result.time_within_radius)

  def test_any_gymnasium_environment(self):
    suite = suites.Suite('cartpole', range(7))
    one_slab = by_seed(runner.fly('random', suite, suite.seeds, workers=0, slab_size=3,
                                  env_id='CartPole-v1'))
    # Slabs of Gymnasium environments cannot step an ended episode: idle rows are reset.
    refilled = by_seed(runner.fly('random', suite, suite.seeds, workers=2, slab_size=2,
                                  env_id='CartPole-v1'))
    self.assertEqual(one_slab, refilled)
    self.assertEqual(sorted(one_slab), list(suite.seeds))
    for result in one_slab.values():
      # CartPole pays 1 per step; the generic result has no environment metrics.
      self.assertEqual((result.cumulative_reward, result.metrics),
                       (float(result.final_timestep), {}))
      self.assertLess(result.final_timestep, 500)
    with self.assertRaisesRegex(EvaluationError, 'keeps no flight paths'):
      runner.fly('random', suite, [0], workers=0, flight_paths=True, env_id='CartPole-v1')

  def test_random_draws_any_action_space(self):
    import gymnasium
    box = gymnasium.spaces.Box(-2.0, 2.0, (3,), np.float32)
    policy = policies.RandomPolicy(box, 2, episode_length=4)
    policy.begin_episode([0, 1], seeds=[5, 5])
    actions = policy(np.zeros((2, 1)))
    self.assertEqual(actions.shape, (2, 3))
    np.testing.assert_array_equal(actions[0], actions[1])  # same seed, same stream
    self.assertTrue(np.all(np.abs(actions) <= 2.0))

  def test_ble_agent_through_the_adapter(self):
    adapter = policies.make_policy('tests.helpers.fake_agents:BLEStyleAgent', 2)
    self.assertIsInstance(adapter, policies.BLEAgentAdapter)
    suite = suites.Suite('two', range(2), episode_length=5, wind='procedural')
    flown = runner.fly('ble', suite, suite.seeds, workers=0, policy=adapter)
    self.assertEqual(len(flown), 2)
    for agent in adapter._agents:
      self.assertEqual(agent.calls, ['begin', 'step', 'step', 'step', 'step', ('end', False)])

  def test_wrong_actions_name_the_agent(self):
    with self.assertRaisesRegex(EvaluationError, r'fake_agents:wrong_shape returned actions of '
                                r'shape \(3, 2\).*expected \(3,\)'):
      runner.fly('tests.helpers.fake_agents:wrong_shape', SHORT, [0, 1, 2], workers=0)

  def test_factories_that_do_not_import_or_do_not_return_a_policy(self):
    for spec, pattern in (('no_such_module_xyz:make', "cannot import module 'no_such_module_xyz'"),
                          ('tests.helpers.fake_agents:missing', "no callable 'missing'"),
                          ('tests.helpers.fake_agents:not_a_policy', 'returned a int')):
      with self.assertRaisesRegex(EvaluationError, pattern):
        policies.make_policy(spec, 2)
    with self.assertRaisesRegex(EvaluationError, 'unknown agent'):
      policies.make_policy('station_keeper', 2)

  def test_run_dir_without_checkpoint(self):
    with self.assertRaisesRegex(EvaluationError, 'has no checkpoint'):
      policies.make_policy(f'run:{tempfile.mkdtemp()}', 2)


class RunShardTest(unittest.TestCase):

  def test_a_killed_shard_resumes_skipping_finished_seeds(self):
    output_dir = tempfile.mkdtemp()
    agent = 'tests.helpers.fake_agents:counting_stay'
    header = results.header(agent, SHORT, 2, 1, policies.describe_agent(agent))
    # What a killed run leaves: the shard file with the seeds finished so far.
    first = runner.fly(agent, SHORT, [3], workers=0)
    results.write_shard(output_dir, header, first, complete=False)
    del fake_agents.LOG[:]
    shard = runner.run_shard(agent, SHORT, output_dir, 2, 1, workers=0, progress=False)
    self.assertEqual(fake_agents.LOG, [4, 5])
    self.assertEqual([r.seed for r in shard], [3, 4, 5])
    data, saved = results.load_shard(os.path.join(output_dir, results.shard_filename(2, 1)))
    self.assertTrue(data['complete'])
    self.assertEqual(saved, shard)


if __name__ == '__main__':
  unittest.main()
