"""Measures what stepping a batch from inside a TensorFlow graph costs over plain Python.

Both paths step the same in-process `BatchEnv` of cheap environments with
zero actions, resetting the environments that finished:

- python: a Python loop calling `batch.step` and `batch.reset` directly;
- in_graph: `FusedStep` (simulate in one `tf.function`) with a no-op
  algorithm, running K batch steps per call in its `tf.while_loop`.

Configurations are measured in turns (round robin) and the median over repeats
is reported, which keeps the comparison fair on a machine shared with other
work; the JSON records the load average so readers can judge the numbers.

The environments cost almost nothing, so the difference is the in-graph
machinery itself: the function call, `tf.numpy_function` round trips, variable
assignments and control flow. Prints one JSON object.

    .venv/bin/python -m bench.in_graph_overhead --batch_size 8 --steps_per_call 1 10 100
"""

import argparse
import json
import os
import platform
import time

import gymnasium
import numpy as np
import tensorflow as tf

from agents.algorithms import algorithm
from agents.tools import batch_env as batch_env_lib
from agents.tools import in_graph_batch_env, simulate


class CountingEnv(gymnasium.Env):
  """A nearly free environment: the observation counts steps; episodes last `length` steps."""

  def __init__(self, length=100):
    self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (4,), np.float32)
    self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    self._length = length
    self._step = 0

  def reset(self, seed=None, options=None):
    self._step = 0
    return np.zeros(4, np.float32), {}

  def step(self, action):
    self._step += 1
    observ = np.full(4, self._step, np.float32)
    return observ, 1.0, self._step >= self._length, False, {}


class NoOpAgent(algorithm.InGraphAlgorithm):
  """Acts with zeros and learns nothing, so only the in-graph machinery is measured."""

  def __init__(self, action_space):
    super().__init__(name='no_op_agent')
    self._action_shape = tuple(action_space.shape)
    self._action_dtype = tf.as_dtype(action_space.dtype)

  def begin_episode(self, agent_indices):
    return None

  def perform(self, agent_indices, observ):
    shape = tf.concat([tf.shape(agent_indices), self._action_shape], 0)
    return tf.zeros(shape, self._action_dtype)

  def experience(self, agent_indices, observ, action, reward, terminated, truncated,
                 next_observ):
    return None

  def end_episode(self, agent_indices):
    return None


def _make_batch(args):
  if args.env == 'counting':
    envs = [CountingEnv(args.episode_length) for _ in range(args.batch_size)]
  else:
    envs = [gymnasium.make(args.env) for _ in range(args.batch_size)]
  return batch_env_lib.BatchEnv(envs)


def _rate(run_some, seconds):
  """Calls `run_some()` (which returns batch steps done) for about `seconds`; returns rate."""
  batch_steps, start = 0, time.perf_counter()
  while time.perf_counter() - start < seconds:
    batch_steps += run_some()
  return batch_steps / (time.perf_counter() - start)


def python_runner(args):
  """Returns (run_some, close) for a plain Python loop over the batch."""
  batch = _make_batch(args)
  actions = np.zeros((len(batch),) + batch.action_space.shape, batch.action_space.dtype)
  batch.reset()

  def run_some():
    for _ in range(100):
      _, _, terminated, truncated, _ = batch.step(actions)
      done = np.flatnonzero(terminated | truncated)
      if done.size:
        batch.reset(done)
    return 100

  return run_some, batch.close


def in_graph_runner(args, steps_per_call):
  """Returns (run_some, close) for `FusedStep` running `steps_per_call` steps per call."""
  batch = in_graph_batch_env.InGraphBatchEnv(_make_batch(args))
  fused_step = simulate.FusedStep(batch, NoOpAgent(batch.action_space))
  calls = max(1, 100 // steps_per_call)

  def run_some():
    for _ in range(calls):
      fused_step(False, steps_per_call)
    assert fused_step.trace_count == 1, 'the fused step was traced more than once'
    return calls * steps_per_call

  return run_some, batch.close


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument('--batch_size', type=int, default=8, help='environments per batch')
  parser.add_argument('--steps_per_call', type=int, nargs='+', default=[1, 10, 100],
                      help='batch steps per tf.function call (K) to measure')
  parser.add_argument('--seconds', type=float, default=1.5,
                      help='measuring time per configuration and repeat, after a warm-up')
  parser.add_argument('--repeats', type=int, default=5,
                      help='measurements per configuration; the median is reported')
  parser.add_argument('--env', default='counting',
                      help="'counting' (a nearly free environment) or a Gymnasium id")
  parser.add_argument('--episode_length', type=int, default=100,
                      help='episode length of the counting environment')
  parser.add_argument('--tf_threads', type=int, default=1,
                      help='TensorFlow intra- and inter-op threads (training uses 1; 0: default)')
  args = parser.parse_args(argv)
  if args.tf_threads:
    tf.config.threading.set_intra_op_parallelism_threads(args.tf_threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.tf_threads)

  runners = {'python': python_runner(args)}
  for steps_per_call in args.steps_per_call:
    runners[steps_per_call] = in_graph_runner(args, steps_per_call)
  for run_some, _ in runners.values():
    run_some()  # Warm-up: tracing, first resets, caches.
  # Round robin over the configurations, so that load from other processes
  # spreads evenly over them; the median over repeats is reported.
  rates = {name: [] for name in runners}
  for _ in range(args.repeats):
    for name, (run_some, _) in runners.items():
      rates[name].append(_rate(run_some, args.seconds))
  for _, close in runners.values():
    close()
  python_rate = float(np.median(rates['python']))
  rows = []
  for steps_per_call in args.steps_per_call:
    rate = float(np.median(rates[steps_per_call]))
    rows.append(dict(
        steps_per_call=steps_per_call,
        env_steps_per_second=round(rate * args.batch_size),
        # Extra time per batch step over plain Python: the in-graph overhead.
        overhead_us_per_batch_step=round(1e6 * (1 / rate - 1 / python_rate), 1),
        relative_to_python=round(rate / python_rate, 3)))
  print(json.dumps(dict(
      benchmark='in_graph_overhead', env=args.env, batch_size=args.batch_size,
      tf_threads=args.tf_threads,
      seconds_per_measurement=args.seconds, repeats=args.repeats,
      load_average_1min=round(os.getloadavg()[0], 2),
      python=dict(env_steps_per_second=round(python_rate * args.batch_size),
                  us_per_batch_step=round(1e6 / python_rate, 1)),
      in_graph=rows,
      tensorflow=tf.__version__, python_version=platform.python_version(),
      cpu_count=os.cpu_count()), indent=2))


if __name__ == '__main__':
  main()
