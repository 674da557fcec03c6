"""Speed of Python agents on the balloon: BLE's loop, ours, batched, in-graph; JSON lines.

    OPENBLAS_NUM_THREADS=1 python -m bench.python_agents_speed [--quick]
        [--ble_python=/path/to/ble-venv/bin/python]

Side by side in one run, balloon steps per second (wall clock) of:

- `ble`: BLE 1.0.1's own `train_lib.run_training_loop` with its `station_seeker` agent
  (`run_helpers.create_agent`), one balloon, in a subprocess of `--ble_python` (a Python
  with `balloon-learning-environment==1.0.1` installed; the row is skipped without it);
- `single`: the station seeker as a BLE `Agent` (one balloon), through
  `agents.python_agents.train_lib.run_training_loop` on `gymnasium.make`;
- `single_per_row`: the same single-balloon agent, one instance per balloon of a batch
  (`make_batch_env`: worker processes, each stepping a slab of balloons);
- `batched`: the station seeker as a `BatchedAgent` over the same batch;
- `in_graph`: the in-graph path's environment throughput: the same batch stepped by
  `FusedStep` inside `tf.function` with a no-op algorithm (bench.in_graph_overhead),
  as training steps it.

Every row flies whole episodes of `--episode_length` steps from a reset (the in-graph row
resets at the same length), without collectors, after a warm-up that compiles the
numba kernels. Our rows are timed in turns (`--rounds`) and report the median, so load
from other processes spreads over them evenly; BLE's row runs first, once. The ratios to
the targets of issue 22 end the output: `single` at least 50x `ble`, `batched` within
20 % of `in_graph`.

BLE 1.0.1 installs on Python 3.10 (its dataclasses fail on 3.11) with numpy < 2, scipy <
1.14 (it uses `interp2d`), scikit-learn 1.0.2 (later versions change the shape of the GP's
standard deviation), tf-keras and opencv; its agent registry needs a flax with
`flax.optim`, so without one the bench builds `StationSeekerAgent`, the class the registry
names 'station_seeker', directly.

`--quick` flies short episodes on a small batch (a minute or so; the numbers are
indicative only); the full run flies 960-step episodes on 2 x 128 balloons.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402

import agents.env  # noqa: E402, F401 - registers the balloon
from agents.env.balloon.controllers import baselines  # noqa: E402
from agents.python_agents import agent, train_lib  # noqa: E402

BALLOON = 'BalloonLearningEnvironment-v0'

# BLE's side, run by --ble_python: its loop, its station seeker, steps counted by a wrapper.
BLE_SCRIPT = r'''
import json, sys, tempfile, time
import gym
from balloon_learning_environment import train_lib
from balloon_learning_environment.env import balloon_env  # noqa: F401 - registers
length, episodes = int(sys.argv[1]), int(sys.argv[2])
try:
  from balloon_learning_environment.utils import run_helpers
  def make_agent(num_actions, observation_shape):
    return run_helpers.create_agent('station_seeker', num_actions, observation_shape)
except ImportError:  # Its registry imports flax.optim, which later flax versions dropped.
  from balloon_learning_environment.agents import station_seeker_agent
  make_agent = station_seeker_agent.StationSeekerAgent  # The registry's 'station_seeker'.

class Counting(gym.Wrapper):
  steps = 0
  def step(self, action):
    Counting.steps += 1
    return self.env.step(action)

env = Counting(gym.make('BalloonLearningEnvironment-v0'))
agent = make_agent(env.action_space.n, env.observation_space.shape)
train_lib.run_training_loop(tempfile.mkdtemp(), env, agent, 1, 5, [],
                            episodes_per_iteration=1)  # warm-up
Counting.steps = 0
start = time.perf_counter()
train_lib.run_training_loop(tempfile.mkdtemp(), env, agent, 1, length, [],
                            episodes_per_iteration=episodes)
seconds = time.perf_counter() - start
print(json.dumps({'steps': Counting.steps, 'seconds': seconds}))
'''


class StationSeekerAgent(agent.Agent):
  """BLE's station seeker as a single-balloon BLE agent (one observation per call)."""

  def begin_episode(self, observation):
    return int(baselines.station_seeker(observation[None])[0])

  def step(self, reward, observation):
    return int(baselines.station_seeker(observation[None])[0])

  def end_episode(self, reward, terminal=True):
    pass


class BatchedStationSeeker(agent.BatchedAgent):
  """The station seeker for a batch: one compiled pass over the rows that act."""

  def begin_episode(self, observations, rows):
    return baselines.station_seeker(observations)

  def step(self, rewards, observations, rows):
    return baselines.station_seeker(observations)

  def end_episode(self, rewards, terminals, rows):
    pass


def _load():
  return round(os.getloadavg()[0], 2)


class LoopRunner:
  """Times `run_training_loop` of one agent on one environment, a fresh run each time."""

  def __init__(self, name, env, agent_or_agents, length, iterations, close):
    self.name, self.env, self.agent = name, env, agent_or_agents
    self.length, self.iterations, self._close = length, iterations, close
    self.balloons = len(agent_or_agents) if isinstance(agent_or_agents, list) else getattr(
        agent_or_agents, 'batch_size', 1)
    with tempfile.TemporaryDirectory() as base_dir:  # Warm-up: numba, the workers' caches.
      train_lib.run_training_loop(base_dir, env, agent_or_agents, 1, 3, progress=False,
                                  episodes_per_iteration=None)

  def measure(self):
    """(balloon steps, seconds) of one timed run."""
    with tempfile.TemporaryDirectory() as base_dir:
      start = time.perf_counter()
      result = train_lib.run_training_loop(base_dir, self.env, self.agent, self.iterations,
                                           self.length, progress=False,
                                           episodes_per_iteration=None)
      seconds = time.perf_counter() - start
    return result['episodes'] * self.length, seconds

  def close(self):
    self._close()


class InGraphRunner:
  """Times the in-graph path: `FusedStep` steps the batch, resetting finished balloons."""

  def __init__(self, balloons, processes, length, iterations):
    import tensorflow as tf

    from agents.tools import episode_collectors, in_graph_batch_env, simulate
    from bench.in_graph_overhead import NoOpAgent
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    self.name, self.balloons = 'in_graph', balloons
    self._batch = train_lib.make_batch_env(BALLOON, balloons, processes,
                                           max_episode_steps=length)
    collectors = episode_collectors.for_environment(
        {'id': BALLOON, 'max_episode_steps': length}, balloons)  # As training has them.
    env = in_graph_batch_env.InGraphBatchEnv(self._batch, seed=0, collectors=collectors)
    self._fused_step = simulate.FusedStep(env, NoOpAgent(self._batch.action_space))
    self.steps_per_call = min(length, 64)
    self._calls = -(-length * iterations // self.steps_per_call)
    self._fused_step(False, 3)  # Warm-up: tracing and the first reset.

  def measure(self):
    start = time.perf_counter()
    for _ in range(self._calls):
      self._fused_step(False, self.steps_per_call)
    seconds = time.perf_counter() - start
    return self._calls * self.steps_per_call * self.balloons, seconds

  def close(self):
    self._batch.close()


def make_runners(balloons, processes, length, iterations, single_episodes):
  """The runners of every row but BLE's, each with its own environment."""
  runners = []
  try:
    env = gymnasium.make(BALLOON)
    runners.append(LoopRunner('single', env, StationSeekerAgent(3, (1099,)), length,
                              single_episodes, env.close))
    for name in ('single_per_row', 'batched'):
      batch = train_lib.make_batch_env(BALLOON, balloons, processes, max_episode_steps=length)
      agent_or_agents = (BatchedStationSeeker(3, (1099,), balloons) if name == 'batched' else
                         [StationSeekerAgent(3, (1099,)) for _ in range(balloons)])
      runners.append(LoopRunner(name, batch, agent_or_agents, length, iterations,
                                batch.close))
    runners.append(InGraphRunner(balloons, processes, length, iterations))
  except BaseException:
    for runner in runners:
      runner.close()
    raise
  return runners


def measure_in_rounds(runners, rounds):
  """Round robin over the runners, so other load spreads evenly; rows with the median."""
  rates = {runner.name: [] for runner in runners}
  for _ in range(rounds):
    for runner in runners:
      steps, seconds = runner.measure()
      rates[runner.name].append(steps / seconds)
  rows = []
  for runner in runners:
    row = {'bench': runner.name, 'balloons': runner.balloons,
           'steps_per_s': round(float(np.median(rates[runner.name])), 1),
           'rounds': [round(rate, 1) for rate in rates[runner.name]],
           'load_avg_1min': _load()}
    rows.append(row)
  return rows


def bench_ble(ble_python, length, episodes):
  """BLE 1.0.1's loop in a subprocess of `ble_python`; None when it cannot run."""
  try:
    completed = subprocess.run([ble_python, '-c', BLE_SCRIPT, str(length), str(episodes)],
                               capture_output=True, text=True, timeout=3600, check=False)
  except (OSError, subprocess.TimeoutExpired) as error:
    return {'bench': 'ble', 'error': f'{type(error).__name__}: {error}'}
  lines = [line for line in completed.stdout.splitlines() if line.startswith('{')]
  if completed.returncode or not lines:
    tail = (completed.stderr.strip().splitlines() or ['no output'])[-1]
    return {'bench': 'ble', 'error': f'exit {completed.returncode}: {tail}'}
  measured = json.loads(lines[-1])
  return {'bench': 'ble', 'balloons': 1, 'steps': measured['steps'],
          'steps_per_s': round(measured['steps'] / measured['seconds'], 1),
          'ble_python': ble_python, 'load_avg_1min': _load()}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument('--quick', action='store_true', help='short episodes, a small batch')
  parser.add_argument('--ble_python', default=None,
                      help="a Python with balloon-learning-environment==1.0.1 (BLE's row)")
  parser.add_argument('--episode_length', type=int, default=None)
  parser.add_argument('--balloons', type=int, default=None, help='balloons of the batch')
  parser.add_argument('--processes', type=int, default=2, help='worker processes')
  parser.add_argument('--iterations', type=int, default=None,
                      help='iterations (one episode per balloon) of each batched row')
  parser.add_argument('--rounds', type=int, default=None,
                      help='timed runs of each row, in turns; the median is reported')
  args = parser.parse_args(argv)
  length = args.episode_length or (120 if args.quick else 960)
  balloons = args.balloons or (32 if args.quick else 256)
  iterations = args.iterations or (1 if args.quick else 2)
  single_episodes = 1 if args.quick else 2
  rows = {}

  def emit(row):
    rows[row['bench']] = row
    print(json.dumps(row), flush=True)

  if args.ble_python:
    emit(bench_ble(args.ble_python, length, single_episodes))
  runners = make_runners(balloons, args.processes, length, iterations, single_episodes)
  try:
    for row in measure_in_rounds(runners, args.rounds or (2 if args.quick else 3)):
      if row['balloons'] > 1:
        row['processes'] = args.processes
      emit(row)
  finally:
    for runner in runners:
      runner.close()

  def rate(name):
    return rows.get(name, {}).get('steps_per_s')

  summary = {'bench': 'summary', 'quick': args.quick, 'episode_length': length,
             'cpu_count': os.cpu_count()}
  if rate('ble'):
    summary['single_vs_ble'] = round(rate('single') / rate('ble'), 1)
    summary['single_per_row_vs_ble'] = round(rate('single_per_row') / rate('ble'), 1)
    summary['single_target_50x_met'] = summary['single_vs_ble'] >= 50
  summary['batched_vs_in_graph'] = round(rate('batched') / rate('in_graph'), 3)
  summary['batched_target_within_20pct_met'] = summary['batched_vs_in_graph'] >= 0.8
  print(json.dumps(summary), flush=True)


if __name__ == '__main__':
  sys.exit(main())
