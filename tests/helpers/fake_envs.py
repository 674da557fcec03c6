"""Small deterministic environments for the tests of agents/tools.

They live in an importable module (not in a test file) so that worker processes can
import them when the constructor is unpickled.
"""

import os
import signal
import time

import gymnasium
import numpy as np

# How long the child left behind by FaultyEnv('orphan') keeps the pipes open.
ORPHAN_SECONDS = 5.0


class CountingEnv(gymnasium.Env):
  """Seeded random walk: observation float32[3], reward depends on the action.

  Attributes:
    length: Steps until the episode terminates.
  """

  def __init__(self, length=5, info=False):
    self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (3,), np.float32)
    self.action_space = gymnasium.spaces.Discrete(3)
    self.length = length
    self._info = info
    self._steps = 0
    self._state = np.zeros(3, np.float32)

  def reset(self, *, seed=None, options=None):
    super().reset(seed=seed)
    self._steps = 0
    self._state = self.np_random.normal(size=3).astype(np.float32)
    return self._state.copy(), ({'steps': 0} if self._info else {})

  def step(self, action):
    self._steps += 1
    self._state = self._state + self.np_random.normal(size=3).astype(np.float32)
    reward = float(action) + float(self._state[0])
    info = {'steps': self._steps} if self._info else {}
    return self._state.copy(), reward, self._steps >= self.length, False, info

  def double(self, value):
    return 2 * value


class FaultyEnv(CountingEnv):
  """CountingEnv that misbehaves at one step: raises, dies, hangs, spins, is slow, or
  returns a NaN observation or an infinite reward.

  The fault 'orphan' dies but leaves a child process that holds the worker's pipes open
  for `ORPHAN_SECONDS`, so the parent cannot see the death as the pipe closing.
  """

  def __init__(self, fault, at_step=2, length=100):
    super().__init__(length=length)
    self.fault = fault
    self.at_step = at_step

  def step(self, action):
    observ, reward, terminated, truncated, info = super().step(action)
    if self._steps == self.at_step:
      if self.fault == 'raise':
        raise ValueError(f'boom at step {self._steps}')
      if self.fault == 'sigkill':
        os.kill(os.getpid(), signal.SIGKILL)
      if self.fault == 'exit':
        os._exit(3)
      if self.fault == 'hang':
        time.sleep(600)
      if self.fault == 'slow':
        time.sleep(0.3)
      if self.fault == 'orphan':
        if os.fork() == 0:
          time.sleep(ORPHAN_SECONDS)
        os._exit(3)
      if self.fault == 'spin':
        while True:  # Busy in Python, holding the GIL between switches.
          pass
      if self.fault == 'nan':
        observ[1] = np.nan
      if self.fault == 'inf_reward':
        reward = float('inf')
    return observ, reward, terminated, truncated, info


class ResetFaultyEnv(CountingEnv):
  """CountingEnv whose reset misbehaves: raises for one seed, or dies once.

  Attributes:
    fault: 'raise' raises ValueError when reset with `seed`; 'exit' ends the process in
      reset if the file `marker` exists, deleting it first (so a restarted worker lives).
  """

  def __init__(self, fault, seed=13, marker=None, info=False):
    super().__init__(length=100, info=info)
    self.fault = fault
    self.fault_seed = seed
    self.marker = marker

  def reset(self, *, seed=None, options=None):
    if self.fault == 'raise' and seed == self.fault_seed:
      raise ValueError(f'boom in reset with seed {seed}')
    if self.fault == 'exit' and self.marker and os.path.exists(self.marker):
      os.remove(self.marker)
      os._exit(3)
    return super().reset(seed=seed, options=options)


class DictObservationEnv(gymnasium.Env):
  """Environment with a Dict observation, which cannot use shared memory."""

  def __init__(self):
    self.observation_space = gymnasium.spaces.Dict({
        'position': gymnasium.spaces.Box(-10, 10, (2,), np.float32),
        'count': gymnasium.spaces.Discrete(100)})
    self.action_space = gymnasium.spaces.Box(-1, 1, (2,), np.float32)
    self._position = np.zeros(2, np.float32)
    self._count = 0

  def reset(self, *, seed=None, options=None):
    super().reset(seed=seed)
    self._position = self.np_random.uniform(-1, 1, 2).astype(np.float32)
    self._count = 0
    return self._observ(), {}

  def step(self, action):
    self._position = self._position + np.asarray(action, np.float32)
    self._count += 1
    return self._observ(), float(self._position.sum()), False, self._count >= 50, {}

  def _observ(self):
    return {'position': self._position.copy(), 'count': self._count}


class SpaceEnv(gymnasium.Env):
  """Zero observations and any action space; steps accept any action in the space."""

  def __init__(self, action_space):
    self.observation_space = gymnasium.spaces.Box(-1, 1, (2,), np.float32)
    self.action_space = action_space

  def reset(self, *, seed=None, options=None):
    super().reset(seed=seed)
    return np.zeros(2, np.float32), {}

  def step(self, action):
    assert self.action_space.contains(np.asarray(action, self.action_space.dtype)), action
    return np.zeros(2, np.float32), 0.0, False, False, {}


class InfoEnv(CountingEnv):
  """CountingEnv whose every step returns the same given info dict."""

  def __init__(self, info):
    super().__init__(length=100)
    self.step_info = info

  def step(self, action):
    return (*super().step(action)[:4], self.step_info)


def make_counting(length=5, info=False):
  return CountingEnv(length=length, info=info)
