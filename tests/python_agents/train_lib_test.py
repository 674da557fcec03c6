"""Tests for agents/python_agents/train_lib.py: BLE's training loop, on one env and a batch."""

import contextlib
import importlib.util
import io
import json
import logging
import os
import signal
import sys
import tempfile
import unittest

import gymnasium
import numpy as np

import agents.env  # noqa: F401 - registers the balloon, as importing BLE's env does
from agents.python_agents import agent as agent_lib
from agents.python_agents import collectors, train_lib
from agents.tools.batch_env import BatchEnv

BALLOON = 'BalloonLearningEnvironment-v0'
HELPERS = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'helpers')


class Balancer(agent_lib.Agent):
  """A deterministic CartPole agent: pushes towards the pole's lean. Checkpoints a count."""

  def __init__(self, num_actions=2, observation_shape=(4,), raise_at=None, action=None,
               interrupt_at=None):
    super().__init__(num_actions, observation_shape)
    self.calls = 0
    self.episodes = 0
    self.raise_at, self.action, self.interrupt_at = raise_at, action, interrupt_at
    self.interrupt_signal = signal.SIGINT

  def begin_episode(self, observation):
    return self._act(observation)

  def step(self, reward, observation):
    return self._act(observation)

  def end_episode(self, reward, terminal=True):
    self.episodes += 1

  def save_checkpoint(self, checkpoint_dir, iteration_number):
    with open(os.path.join(checkpoint_dir, f'balancer_{iteration_number}.json'), 'w') as file:
      json.dump({'episodes': self.episodes}, file)

  def load_checkpoint(self, checkpoint_dir, iteration_number):
    with open(os.path.join(checkpoint_dir, f'balancer_{iteration_number}.json')) as file:
      self.episodes = json.load(file)['episodes']

  def _act(self, observation):
    self.calls += 1
    if self.calls == self.raise_at:
      raise ZeroDivisionError('the agent failed')
    if self.calls == self.interrupt_at:
      os.kill(os.getpid(), self.interrupt_signal)  # Ctrl-C, as the user would press it.
    if self.action is not None and self.calls >= 3:
      return self.action
    return int(observation[2] > 0)


class OtherAgent(Balancer):
  """Another agent class, for the checkpoint mismatch."""


class RaisingCollector(collectors.Collector):
  """Raises at the end of its second episode."""

  def get_name(self):
    return 'raising'

  def pre_training(self):
    pass

  def begin_episode(self):
    pass

  def step(self, statistics):
    pass

  def end_episode(self, statistics):
    if self.current_episode == 1:
      raise RuntimeError('disk full')
    self.current_episode += 1

  def end_training(self):
    pass


def cartpole():
  return gymnasium.make('CartPole-v1')


def train(base_dir, agent, iterations, env=None, **kwargs):
  kwargs.setdefault('collector_constructors', [collectors.JsonLinesCollector])
  kwargs.setdefault('episodes_per_iteration', None)  # One round: one episode per env.
  return train_lib.run_training_loop(base_dir, env or cartpole(), agent, iterations,
                                     max_episode_length=kwargs.pop('length', 60),
                                     progress=False, **kwargs)


def episodes(base_dir):
  with open(os.path.join(base_dir, 'metrics', 'jsonl', 'episodes.jsonl')) as file:
    return [json.loads(line) for line in file]


def listing(directory):
  return sorted((os.path.relpath(os.path.join(root, name), directory),
                 os.path.getmtime(os.path.join(root, name)))
                for root, _, names in os.walk(directory) for name in names)


class SingleEnvironmentTest(unittest.TestCase):

  def test_checkpoints_every_iteration_and_records_it(self):
    with tempfile.TemporaryDirectory() as base_dir:
      result = train(base_dir, Balancer(), 3, episodes_per_iteration=2)
      self.assertEqual(result, dict(iteration=2, episodes=6, interrupted=False, signal=None))
      records = train_lib.read_records(os.path.join(base_dir, 'checkpoints'))
      self.assertEqual(sorted(records), [0, 1, 2])
      self.assertEqual(records[2]['agent_class'], 'Balancer')
      self.assertEqual(records[2]['episodes'], 6)
      self.assertTrue(os.path.exists(os.path.join(base_dir, 'checkpoints', 'balancer_2.json')))
      rows = episodes(base_dir)
      self.assertEqual([row['episode'] for row in rows], list(range(6)))
      self.assertEqual([row['iteration'] for row in rows], [0, 0, 1, 1, 2, 2])

  def test_a_resumed_run_continues_the_same_seeded_episodes(self):
    with tempfile.TemporaryDirectory() as whole, tempfile.TemporaryDirectory() as parts:
      train(whole, Balancer(), 3)
      train(parts, Balancer(), 2)
      resumed = Balancer()
      result = train(parts, resumed, 3)
      self.assertEqual(resumed.episodes, 3)  # 2 loaded from the checkpoint, 1 flown.
      self.assertEqual(result['episodes'], 3)
      self.assertEqual(episodes(whole), episodes(parts))
      self.assertEqual(train(parts, Balancer(), 3)['iteration'], 2)  # Nothing left to do.

  def test_falls_back_to_an_older_checkpoint_when_the_newest_does_not_load(self):
    with tempfile.TemporaryDirectory() as base_dir:
      train(base_dir, Balancer(), 2)
      with open(os.path.join(base_dir, 'checkpoints', 'balancer_1.json'), 'w') as file:
        file.write('{cut')
      with self.assertLogs('agents.python_agents.train_lib', 'WARNING'):
        result = train(base_dir, Balancer(), 3)
      self.assertEqual(result['iteration'], 2)
      self.assertEqual([row['iteration'] for row in episodes(base_dir)], [0, 1, 2])

  def test_the_agent_sees_bles_calls(self):
    calls = []

    class Recording(Balancer):
      def begin_episode(self, observation):
        calls.append(('begin', observation.shape))
        return 0

      def step(self, reward, observation):
        calls.append(('step', type(reward).__name__))
        return 0

      def end_episode(self, reward, terminal=True):
        calls.append(('end', terminal))

    with tempfile.TemporaryDirectory() as base_dir:
      train(base_dir, Recording(), 1, length=4)
    self.assertEqual(calls, [('begin', (4,))] + [('step', 'float')] * 3 + [('end', False)])

  def test_the_console_lines_print_above_the_progress_bar_and_absl_is_left_as_it_was(self):
    absl_logger = logging.getLogger('absl')
    # absl as a fresh process has it (an earlier test in this process may have set a level).
    self.addCleanup(absl_logger.setLevel, absl_logger.level)
    absl_logger.setLevel(logging.NOTSET)
    before = absl_logger.level, absl_logger.propagate, list(absl_logger.handlers)
    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as base_dir:
      with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        train_lib.run_training_loop(base_dir, cartpole(), Balancer(), 1, 5,
                                    [collectors.ConsoleCollector], episodes_per_iteration=2)
    lines = out.getvalue().splitlines()
    self.assertEqual([line.split(':')[0] for line in lines], ['Episode 0', 'Episode 1'])
    self.assertIn('episode length: 5, action distribution: [', lines[0])
    self.assertNotIn('Episode', err.getvalue())  # The bar's stream: the bar only.
    self.assertEqual((absl_logger.level, absl_logger.propagate, absl_logger.handlers), before)

  def test_ctrl_c_and_sigterm_cut_the_episode_save_and_stop(self):
    for signum in (signal.SIGINT, signal.SIGTERM):
      name = signal.Signals(signum).name
      with self.subTest(signal=name), tempfile.TemporaryDirectory() as base_dir:
        agent = Balancer(interrupt_at=70)
        agent.interrupt_signal = signum
        with _QuietStderr(), self.assertLogs('agents.python_agents.train_lib',
                                             'WARNING') as logs:
          result = train(base_dir, agent, 5, length=60)
        self.assertIn(f'{name}: stopped in iteration 1', logs.output[0])
        self.assertEqual((result['interrupted'], result['signal'], result['iteration']),
                         (True, name, 1))
        records = train_lib.read_records(os.path.join(base_dir, 'checkpoints'))
        self.assertEqual((records[0]['complete'], records[1]['complete']), (True, False))
        self.assertFalse(episodes(base_dir)[-1]['terminal'])
        self.assertEqual(train(base_dir, Balancer(), 3)['iteration'], 2)

  def test_seed_none_leaves_the_seeding_to_the_environment(self):
    with tempfile.TemporaryDirectory() as base_dir:
      self.assertEqual(train(base_dir, Balancer(), 2, seed=None)['episodes'], 2)
      self.assertIsNone(train_lib.read_records(os.path.join(base_dir, 'checkpoints'))[1]['seed'])

  def test_no_loadable_checkpoint_is_an_error_naming_each_iteration(self):
    with tempfile.TemporaryDirectory() as base_dir:
      train(base_dir, Balancer(), 2)
      for iteration in (0, 1):
        os.remove(os.path.join(base_dir, 'checkpoints', f'balancer_{iteration}.json'))
      with self.assertLogs('agents.python_agents.train_lib', 'WARNING'):
        with self.assertRaisesRegex(agent_lib.CheckpointLoadError,
                                    'iteration 1: FileNotFoundError.*iteration 0: '):
          train(base_dir, Balancer(), 3)


class BadInputTest(unittest.TestCase):

  def test_num_iterations_must_be_positive_and_nothing_is_written(self):
    with tempfile.TemporaryDirectory() as parent:
      base_dir = os.path.join(parent, 'run')
      for bad in (0, -1, 1.5, True):
        with self.assertRaisesRegex(ValueError, 'num_iterations must be a positive int'):
          train(base_dir, Balancer(), bad)
      self.assertFalse(os.path.exists(base_dir))

  def test_an_agent_missing_a_method_is_named(self):
    class NoStep:
      def begin_episode(self, observation):
        return 0

      def end_episode(self, reward, terminal=True):
        pass

    with tempfile.TemporaryDirectory() as parent:
      base_dir = os.path.join(parent, 'run')
      with self.assertRaisesRegex(agent_lib.AgentError, r'NoStep has no callable step\(\)'):
        train(base_dir, NoStep(), 1)
      self.assertFalse(os.path.exists(base_dir))

  def test_bad_actions_name_the_action_the_row_and_the_range(self):
    cases = ((5, r'action 5 for balloon \(row\) 0 at iteration 0: out of range; '
                 r'expected an int in \[0, 2\)'),
             (1.5, r'action 1\.5 .*of type float'),
             (np.array([1, 0]), r'an array of shape \(2,\)'),
             ('1', r"action '1'.*of type str"))
    for action, message in cases:
      with self.subTest(action=action), tempfile.TemporaryDirectory() as base_dir:
        with self.assertRaisesRegex(agent_lib.AgentActionError, message) as caught:
          train(base_dir, Balancer(action=action), 1)
        self.assertEqual(caught.exception.row, 0)
        self.assertEqual(os.listdir(os.path.join(base_dir, 'checkpoints'))
                         if os.path.isdir(os.path.join(base_dir, 'checkpoints')) else [], [])

  def test_a_checkpoint_of_another_agent_class_is_refused_untouched(self):
    with tempfile.TemporaryDirectory() as base_dir:
      train(base_dir, Balancer(), 1)
      before = listing(base_dir)
      with self.assertRaisesRegex(agent_lib.CheckpointMismatchError,
                                  "agent class 'Balancer'.*not of 'OtherAgent'"):
        train(base_dir, OtherAgent(), 2)
      self.assertEqual(listing(base_dir), before)

  def test_a_raising_collector_is_named_with_its_episode(self):
    with tempfile.TemporaryDirectory() as base_dir:
      with self.assertRaisesRegex(agent_lib.CollectorError,
                                  r"collector 'raising \(RaisingCollector\)' raised in "
                                  r'end_episode\(\) at episode 1: RuntimeError: disk full'):
        train(base_dir, Balancer(), 3, collector_constructors=[RaisingCollector])
      self.assertEqual(sorted(train_lib.read_records(os.path.join(base_dir, 'checkpoints'))),
                       [0])

  def test_an_agent_that_raises_names_the_iteration_and_row_and_keeps_the_checkpoint(self):
    with tempfile.TemporaryDirectory() as base_dir:
      train(base_dir, Balancer(), 1)
      before = listing(os.path.join(base_dir, 'checkpoints'))
      agent = Balancer(raise_at=3)
      agent.load_checkpoint(os.path.join(base_dir, 'checkpoints'), 0)
      with self.assertRaisesRegex(agent_lib.AgentStepError,
                                  r"agent's step\(\) raised for balloon \(row\) 0 at "
                                  r'iteration 1: ZeroDivisionError: the agent failed'):
        train(base_dir, agent, 3)
      self.assertEqual(listing(os.path.join(base_dir, 'checkpoints')), before)
      self.assertEqual(train(base_dir, Balancer(), 2)['iteration'], 1)

  def test_a_single_agent_for_a_batch_is_refused(self):
    batch = BatchEnv.from_constructors(cartpole, 2, processes=False)
    with tempfile.TemporaryDirectory() as base_dir:
      with self.assertRaisesRegex(agent_lib.AgentError, 'pass one agent per row'):
        train(base_dir, Balancer(), 1, env=batch)


class BatchTest(unittest.TestCase):

  def test_every_row_flies_one_episode_per_iteration_and_waits_for_the_others(self):
    batch = BatchEnv.from_constructors(cartpole, 3, processes=False)
    agents = [Balancer() for _ in range(3)]
    with tempfile.TemporaryDirectory() as base_dir:
      result = train(base_dir, agents, 2, env=batch, length=200)
      rows = episodes(base_dir)
      self.assertEqual(result['episodes'], 6)
      for iteration in (0, 1):
        flown = [row for row in rows if row['iteration'] == iteration]
        self.assertEqual(sorted(row['row'] for row in flown), [0, 1, 2])
      self.assertGreater(len({row['length'] for row in rows}), 1)  # They end apart.
      self.assertEqual([agent.episodes for agent in agents], [2, 2, 2])
      for row in range(3):
        self.assertTrue(os.path.exists(
            os.path.join(base_dir, 'checkpoints', f'row_{row}', 'balancer_1.json')))

  def test_balloon_batch_in_worker_processes_reports_twr50_and_failure_flags(self):
    batch = train_lib.make_batch_env(BALLOON, 4, num_processes=2, wind='procedural')
    try:
      self.assertEqual(len(batch.workers), 2)
      with tempfile.TemporaryDirectory() as base_dir:
        train(base_dir, StayAgent(3, (1099,), 4), 1, env=batch, length=12)
        rows = episodes(base_dir)
    finally:
      batch.close()
    self.assertEqual(sorted(row['row'] for row in rows), [0, 1, 2, 3])
    for row in rows:
      self.assertEqual(row['length'], 12)
      self.assertTrue(0.0 <= row['twr50'] <= 1.0)
      for flag in ('out_of_power_rate', 'envelope_burst_rate', 'zeropressure_rate'):
        self.assertIn(row[flag], (0.0, 1.0))


  def test_a_vector_environment_with_autoreset_off_is_a_batch(self):
    slab = gymnasium.make_vec(BALLOON, num_envs=2, vectorization_mode='vector_entry_point',
                              wind='procedural')
    try:
      with tempfile.TemporaryDirectory() as base_dir:
        result = train(base_dir, StayAgent(3, (1099,), 2), 2, env=slab, length=5)
        self.assertEqual(result['episodes'], 4)
        self.assertEqual({row['length'] for row in episodes(base_dir)}, {5})
    finally:
      slab.close()


class StayAgent(agent_lib.BatchedAgent):
  """A batched balloon agent that always stays."""

  def begin_episode(self, observations, rows):
    return np.ones(len(rows), np.int64)

  def step(self, rewards, observations, rows):
    return np.ones(len(rows), np.int64)

  def end_episode(self, rewards, terminals, rows):
    pass


class BLEAgentFileTest(unittest.TestCase):
  """An agent file written for BLE trains here with its import line changed, nothing else."""

  def _import_agent_module(self, directory):
    with open(os.path.join(HELPERS, 'ble_linear_agent.py')) as file:
      source = file.read()
    ble_import = 'from balloon_learning_environment.agents import agent\n'
    self.assertEqual(source.count(ble_import), 1)
    source = source.replace(ble_import, 'from agents.python_agents import agent\n')
    path = os.path.join(directory, 'ble_linear_agent_here.py')
    with open(path, 'w') as file:
      file.write(source)
    spec = importlib.util.spec_from_file_location('ble_linear_agent_here', path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    self.addCleanup(sys.modules.pop, spec.name, None)
    spec.loader.exec_module(module)
    return module

  def test_trains_checkpoints_resumes_and_evaluates(self):
    from agents.evaluation import policies, runner, suites
    with tempfile.TemporaryDirectory() as directory:
      module = self._import_agent_module(directory)
      env = gymnasium.make(BALLOON, wind='procedural')
      base_dir = os.path.join(directory, 'run')
      first = module.LinearQAgent(env.action_space.n, env.observation_space.shape)
      train_lib.run_training_loop(base_dir, env, first, 2, max_episode_length=10,
                                  progress=False, episodes_per_iteration=None)
      self.assertGreater(np.abs(first.weights).sum(), 0.0)  # It learned.
      saved = np.load(os.path.join(base_dir, 'checkpoints', 'linear_q_1.npy'))
      np.testing.assert_array_equal(saved, first.weights)

      resumed = module.LinearQAgent(env.action_space.n, env.observation_space.shape)
      result = train_lib.run_training_loop(base_dir, env, resumed, 3, max_episode_length=10,
                                           progress=False, episodes_per_iteration=None)
      self.assertEqual((result['iteration'], result['episodes']), (2, 3))
      self.assertFalse(np.array_equal(resumed.weights, saved))  # Loaded, then learned on.
      env.close()

      suite = suites.Suite('tiny', range(2), episode_length=10, wind='procedural')
      evaluated = [module.LinearQAgent(3, (1099,)) for _ in suite.seeds]  # One per row.
      for agent in evaluated:
        agent.load_checkpoint(os.path.join(base_dir, 'checkpoints'), 2)
      results = runner.fly('ble_linear_agent', suite, suite.seeds, workers=0,
                           policy=policies.BLEAgentAdapter(evaluated), env_id=BALLOON)
      self.assertEqual(sorted(result.seed for result in results), [0, 1])
      self.assertTrue(all(result.final_timestep == 10 for result in results))
      for agent in evaluated:  # Eval mode: no learning.
        np.testing.assert_array_equal(agent.weights, resumed.weights)


class _QuietStderr:
  """Hides the one line StopRequest writes on stderr at the first signal."""

  def __enter__(self):
    self._saved = os.dup(2)
    self._null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(self._null, 2)

  def __exit__(self, *exc_info):
    os.dup2(self._saved, 2)
    os.close(self._saved)
    os.close(self._null)


class HelpersTest(unittest.TestCase):

  def test_get_collector_data_names_an_unknown_collector(self):
    self.assertEqual(train_lib.get_collector_data(['console', 'jsonl']),
                     [collectors.ConsoleCollector, collectors.JsonLinesCollector])
    with self.assertRaisesRegex(ValueError, "unknown collector 'csv'"):
      train_lib.get_collector_data(['csv'])

  def test_make_batch_env_checks_its_sizes(self):
    with self.assertRaisesRegex(ValueError, 'num_balloons must be an int >= 1'):
      train_lib.make_batch_env(BALLOON, 0)
    with self.assertRaisesRegex(ValueError, 'num_processes must be an int >= 0'):
      train_lib.make_batch_env(BALLOON, 2, num_processes=-1)

  def test_an_environment_whose_vector_form_autoresets_runs_one_env_per_row(self):
    batch = train_lib.make_batch_env('CartPole-v1', 3, num_processes=0)
    self.addCleanup(batch.close)
    agents = [agent_lib.RandomAgent(2, (4,)) for _ in range(3)]
    summary = train_lib.run_training_loop(tempfile.mkdtemp(), batch, agents, 1,
                                          max_episode_length=8, progress=False,
                                          episodes_per_iteration=None)
    self.assertEqual(summary['episodes'], 3)


if __name__ == '__main__':
  unittest.main()
