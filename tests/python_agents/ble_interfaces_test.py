"""BLE names beyond the guide's snippets: `eval_agent` on the env it is given, short
results, BLE's mutable suites, `combine_eval_shards`, `agent_registry.REGISTRY`, the
collectors' checks and accounting, BLE's agent classes by name, and `run_training_loop`
on an env with BLE's spaces."""

import contextlib
import io
import json
import os
import tempfile
import unittest
from unittest import mock

import gymnasium
import numpy as np

import agents.env  # noqa: F401 - registers the balloon
from agents.python_agents import agent as agent_lib
from agents.python_agents import (
  agent_registry,
  collectors,
  combine_eval_shards,
  eval_lib,
  perciatelli44,
  random_walk_agent,
  run_helpers,
  station_seeker_agent,
  suites,
  train_lib,
)


def station_seeker():
  return run_helpers.create_agent('station_seeker', 3, (1099,))


class EvalAgentTest(unittest.TestCase):

  def test_the_env_given_is_flown_with_its_wind(self):
    suite = eval_lib.EvaluationSuite(range(2), max_episode_length=6)
    static_env = gymnasium.make('BalloonLearningEnvironment-v0', wind='static')
    on_env = eval_lib.eval_agent(station_seeker(), static_env, suite)
    static = eval_lib.eval_agent(station_seeker(), None, suite.replace(options={
        'wind': 'static'}))
    default = eval_lib.eval_agent(station_seeker(), None, suite)
    rewards = [[result.cumulative_reward for result in results]
               for results in (on_env, static, default)]
    self.assertEqual(rewards[0], rewards[1])
    self.assertNotEqual(rewards[0], rewards[2])

  def test_printed_results_are_short(self):
    suite = eval_lib.EvaluationSuite(range(3), max_episode_length=30)
    results = eval_lib.eval_agent(station_seeker(), None, suite)
    self.assertEqual(len(results[0].flight_path), 30)
    text = str(results)
    self.assertLess(len(text), 1500, text)
    self.assertIn('flight_path=<30 states>', text)
    self.assertIn('time_within_radius=', text)

  def test_a_suite_is_cut_as_bles_eval_shards_it(self):
    suite = suites.get_eval_suite('tiny_eval')
    self.assertEqual(suite.seeds, list(range(10)))
    suite.seeds = suite.seeds[0:2]
    suite.max_episode_length = 4
    results = eval_lib.eval_agent(station_seeker(), None, suite)
    self.assertEqual([(result.seed, result.final_timestep) for result in results],
                     [(0, 4), (1, 4)])
    self.assertEqual(len(suites.get_eval_suite('tiny_eval').seeds), 10)  # a fresh copy


class CombineEvalShardsTest(unittest.TestCase):

  def write(self, folder, name, seeds):
    with open(os.path.join(folder, name), 'w') as file:
      json.dump([{'seed': seed, 'flight_path': [{'x': 1.0}]} for seed in seeds], file)

  def test_shards_join_sorted_by_seed_without_flight_paths(self):
    folder = tempfile.mkdtemp()
    self.write(folder, 'quantile_1.json', [3, 2])
    self.write(folder, 'quantile_0.json', [1, 0])
    written = combine_eval_shards.combine_eval_shards(folder, ['quantile'])
    with open(written['quantile']) as file:
      combined = json.load(file)
    self.assertEqual([result['seed'] for result in combined], [0, 1, 2, 3])
    self.assertEqual({len(result['flight_path']) for result in combined}, {0})
    combine_eval_shards.combine_eval_shards(folder, ['quantile'], flight_paths=True)
    with open(written['quantile']) as file:
      self.assertEqual(len(json.load(file)[0]['flight_path']), 1)

  def test_the_command_refuses_what_does_not_combine_in_one_line(self):
    folder = tempfile.mkdtemp()
    self.write(folder, 'a_0.json', [0, 1])
    self.write(folder, 'a_1.json', [1])
    for argv, message in (([f'--path={folder}', '--models=a'], 'seed 1 of model .a. is in two'),
                          ([f'--path={folder}', '--models=b'], "model 'b': no shard"),
                          ([f'--path={folder}'], '--models must have a value'),
                          (['--models=a'], '--path must have a value')):
      stderr = io.StringIO()
      with contextlib.redirect_stderr(stderr), self.assertRaises(SystemExit) as exit_:
        combine_eval_shards.main(argv)
      self.assertEqual(exit_.exception.code, 2)
      self.assertRegex(stderr.getvalue(), message)
      self.assertEqual(len(stderr.getvalue().strip().splitlines()), 1)
    self.assertEqual(sorted(os.listdir(folder)), ['a_0.json', 'a_1.json'])


class RegistryTest(unittest.TestCase):

  def test_bles_names_with_their_gin_files_and_a_users_agent(self):
    for name in ('random', 'mlp', 'dqn', 'perciatelli44', 'quantile', 'finetune_perciatelli',
                 'station_seeker', 'random_walk'):
      self.assertIn(name, agent_registry.REGISTRY)
    self.assertEqual(agent_registry.REGISTRY['random'], (agent_lib.RandomAgent, None))
    self.assertTrue(agent_registry.REGISTRY['mlp'][1].endswith('configs/mlp.gin'))

  def test_gin_gets_the_registrys_path_then_the_extra_files_and_the_bindings(self):
    # What BLE's own tests check of bind_gin_variables, with this package's path.
    import gin
    path = agent_registry.get_default_gin_config('dqn')
    self.assertTrue(os.path.isabs(path) and os.path.isfile(path), path)
    self.assertEqual(run_helpers.get_agent_gin_file('dqn', None), path)
    with mock.patch.object(gin, 'parse_config_files_and_bindings', autospec=True) as parse:
      run_helpers.bind_gin_variables('dqn', additional_gin_files=['extra.gin'])
      parse.assert_called_with([path, 'extra.gin'], bindings=(), skip_unknown=False)
      run_helpers.bind_gin_variables('random', gin_bindings=['A.b = 1'])
      parse.assert_called_with([], bindings=['A.b = 1'], skip_unknown=False)
    agent_registry.REGISTRY['mine'] = (agent_lib.RandomAgent, None)
    try:
      self.assertIsInstance(run_helpers.create_agent('mine', 3, (4,)), agent_lib.RandomAgent)
    finally:
      del agent_registry.REGISTRY['mine']
    self.assertNotIn('mine', agent_registry.REGISTRY)
    with self.assertRaisesRegex(TypeError, r"REGISTRY\['bad'\] must be"):
      agent_registry.REGISTRY['bad'] = agent_lib.RandomAgent


class WindFieldFactoryTest(unittest.TestCase):

  def test_bles_names_give_factories_gym_make_takes(self):
    factory = run_helpers.get_wind_field_factory('simple')
    env = gymnasium.make('BalloonLearningEnvironment-v0', wind_field_factory=factory)
    self.assertEqual(env.unwrapped.wind, 'static')
    with self.assertRaisesRegex(ValueError, "unknown wind field 'breezy'"):
      run_helpers.get_wind_field_factory('breezy')


class ConsoleCollectorTest(unittest.TestCase):

  def test_an_action_out_of_range_is_refused(self):
    console = collectors.ConsoleCollector(None, 3, 0)
    console.pre_training()
    console.begin_episode()
    for action in (-1, 3):
      with self.assertRaisesRegex(ValueError, f'invalid action {action} at step 0'):
        console.step(collectors.StatisticsInstance(0, action, 0.0, False))
    console.step(collectors.StatisticsInstance(0, 2, 0.0, False))

  def test_bles_caller_gets_bles_lines_through_absl_logging_one_per_line_in_the_log(self):
    # BLE's loop calls `step` for every step, then `end_episode` with the last one again,
    # which BLE's collector counts once more; a BLE user's log parsing relies on the line.
    with tempfile.TemporaryDirectory() as base_dir:
      console = collectors.ConsoleCollector(base_dir, 3, 7, fine_grained_logging=True,
                                            fine_grained_frequency=2)
      with self.assertLogs('absl', 'INFO') as logs:
        console.pre_training()
        console.begin_episode()
        for step, action in enumerate((0, 2, 2)):
          console.step(collectors.StatisticsInstance(step, action, 1.0, step == 2))
        console.end_episode(collectors.StatisticsInstance(3, 2, 1.0, True))
        console.end_training()
      with open(os.path.join(base_dir, 'metrics', 'console', 'console.log')) as file:
        lines = file.read().splitlines()
    episode = (f'Episode 7: reward: 0004.00, episode length: 3, action distribution: '
               f'{np.array([1, 0, 3]) / 4}')
    self.assertEqual([record.getMessage() for record in logs.records], [
        'Step: 0, action: 0, reward: 1.0, terminal: False\n',
        'Step: 2, action: 2, reward: 1.0, terminal: True\n', episode])
    self.assertEqual(lines, ['Step: 0, action: 0, reward: 1.0, terminal: False',
                             'Step: 2, action: 2, reward: 1.0, terminal: True', episode])
    self.assertEqual(console.current_episode, 8)


class _Scalars:
  """A summary writer that records its scalars."""

  def __init__(self):
    self.scalars, self.flushes = [], 0

  def scalar(self, tag, value, step):
    self.scalars.append((tag, value, step))

  def flush(self):
    self.flushes += 1


class TensorboardCollectorTest(unittest.TestCase):

  def fly(self, fine_grained_logging):
    collector = collectors.TensorboardCollector(tempfile.mkdtemp(), 3, 0,
                                                fine_grained_logging=fine_grained_logging,
                                                fine_grained_frequency=2)
    collector.summary_writer = _Scalars()
    collector.pre_training()
    for _ in range(2):
      collector.begin_episode()
      for step in range(3):
        collector.step(collectors.StatisticsInstance(step, 1, float(step), False))
      collector.end_episode(collectors.StatisticsInstance(3, 1, 5.0, True))
    return collector.summary_writer

  def test_without_episode_statistics_the_rewards_given_are_summed(self):
    writer = self.fly(False)
    self.assertEqual(writer.scalars, [('Train/EpisodeReward', 8.0, 0),
                                      ('Train/EpisodeLength', 3, 0),
                                      ('Train/EpisodeReward', 8.0, 1),
                                      ('Train/EpisodeLength', 3, 1)])

  def test_fine_grained_rewards_every_frequency_steps_and_at_the_end(self):
    fine = [scalar for scalar in self.fly(True).scalars
            if scalar[0] == 'Train/FineGrainedReward']
    # Global steps 0-3 (the end counts as one), then 4-7: every second one, and each end.
    self.assertEqual(fine, [('Train/FineGrainedReward', 0.0, 0),
                            ('Train/FineGrainedReward', 2.0, 2),
                            ('Train/FineGrainedReward', 5.0, 3),
                            ('Train/FineGrainedReward', 0.0, 4),
                            ('Train/FineGrainedReward', 2.0, 6),
                            ('Train/FineGrainedReward', 5.0, 7)])


class BleAgentClassesTest(unittest.TestCase):

  def test_station_seeker_and_random_walk_under_bles_class_names(self):
    observations = [np.full(1099, 0.5, np.float32), np.linspace(0, 1, 1099, dtype=np.float32)]
    seeker = station_seeker_agent.StationSeekerAgent(3, (1099,))
    by_name = run_helpers.create_agent('station_seeker', 3, (1099,))
    self.assertEqual(seeker.get_name(), 'StationSeekerAgent')
    self.assertEqual([seeker.begin_episode(observations[0]), seeker.step(0.0, observations[1])],
                     [by_name.begin_episode(observations[0]), by_name.step(0.0, observations[1])])
    walks = []
    for _ in range(2):
      walker = random_walk_agent.RandomWalkAgent(3, (1099,), seed=1)
      walks.append([walker.begin_episode(observations[0])]
                   + [walker.step(0.0, observations[1]) for _ in range(20)])
    self.assertEqual(walks[0], walks[1])
    self.assertEqual(walker.get_name(), 'RandomWalkAgent')
    self.assertTrue(set(walks[0]) <= {0, 1, 2})

  def test_perciatelli44_under_bles_class_name_takes_only_its_networks_shapes(self):
    from tests.env.balloon.perciatelli44_test import graph_bytes  # a stand-in network
    with tempfile.TemporaryDirectory() as directory:
      path = os.path.join(directory, 'p44.pb')
      with open(path, 'wb') as file:
        file.write(graph_bytes())  # Q-values: the observation's first 3 floats.
      agent = perciatelli44.Perciatelli44(3, (1099,), path=path)
      observation = np.zeros(1099, np.float32)
      observation[1] = 1.0
      self.assertEqual((agent.get_name(), agent.begin_episode(observation)),
                       ('Perciatelli44', 1))
      self.assertIsInstance(run_helpers.create_agent('perciatelli44', 3, (1099,), path=path),
                            perciatelli44.Perciatelli44)
      for shapes, culprit in (((4, (1099,)), 'num_actions=4'), ((3, (1100,)), r'\(1100,\)')):
        with self.assertRaisesRegex(ValueError, culprit):
          perciatelli44.Perciatelli44(*shapes, path=path)


class _BleSpaces(gymnasium.Env):
  """An environment with BLE's kind of spaces: an action space with only `n`, and no
  observation space."""

  class ActionSpace:
    n = 3

  def __init__(self):
    self.action_space = self.ActionSpace()
    self.steps = 0

  def reset(self, *, seed=None, options=None):
    self.steps = 0
    return [0.0, 1.0], {}

  def step(self, action):
    self.steps += 1
    return [float(self.steps), 1.0], 1.0, self.steps == 4, False, {}


class _Recorder(agent_lib.Agent):

  def __init__(self, num_actions, observation_shape):
    super().__init__(num_actions, observation_shape)
    self.observations = []

  def begin_episode(self, observation):
    self.observations.append(list(observation))
    return 0

  def step(self, reward, observation):
    self.observations.append(list(observation))
    return 2

  def end_episode(self, reward, terminal=True):
    pass


class TrainingLoopTest(unittest.TestCase):

  def test_an_env_without_an_observation_space_trains(self):
    agent = _Recorder(3, (2,))
    with contextlib.redirect_stderr(io.StringIO()):
      train_lib.run_training_loop(tempfile.mkdtemp(), _BleSpaces(), agent, num_iterations=2,
                                  max_episode_length=10, collector_constructors=[],
                                  episodes_per_iteration=1)
    self.assertEqual(agent.observations[:4], [[0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    self.assertEqual(len(agent.observations), 8)


if __name__ == '__main__':
  unittest.main()
