"""User policies for the tests, importable as `tests.helpers.fake_agents:<factory>`."""

import numpy as np

LOG = []


class CountingStay:
  """A batched policy that always stays, recording the seeds it begins."""

  def __init__(self, batch_size):
    self.batch_size = batch_size

  def begin_episode(self, indices, seeds=None):
    LOG.extend(seeds)

  def __call__(self, observations):
    return np.ones(len(observations), np.int64)


def counting_stay(batch_size):
  return CountingStay(batch_size)


def wrong_shape(batch_size):
  del batch_size
  return WrongShape()


class WrongShape:

  def begin_episode(self, indices):
    del indices

  def __call__(self, observations):
    return np.ones((len(observations), 2), np.int64)


class BLEStyleAgent:
  """An agent with BLE's Agent interface that goes up for 3 steps, then stays."""

  def __init__(self, num_actions, observation_shape):
    assert num_actions == 3 and tuple(observation_shape) == (1099,)
    self.calls = []

  def begin_episode(self, observation):
    self.calls.append('begin')
    self.steps = 0
    return 2

  def step(self, reward, observation):
    self.calls.append('step')
    self.steps += 1
    return 2 if self.steps < 3 else 1

  def end_episode(self, reward, terminal):
    self.calls.append(('end', terminal))


def not_a_policy():
  return 42
