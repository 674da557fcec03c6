"""Registers `CrashOnceCartPole-v0`: CartPole whose process kills itself once, mid-run.

At its `crash_at`-th step the first environment to get there creates the file `marker`
and sends SIGKILL to its own process (a worker process or a Ray actor); the marker keeps
every later instance, the restarted one included, alive. Configs name this module in
`environment.imports`.
"""

import os
import signal

import gymnasium
from gymnasium.envs.classic_control import cartpole

ENV_ID = 'CrashOnceCartPole-v0'


class CrashOnceCartPole(cartpole.CartPoleEnv):
  """CartPole that kills its process at step `crash_at` unless `marker` exists."""

  def __init__(self, marker, crash_at=20, **kwargs):
    super().__init__(**kwargs)
    self._marker, self._crash_at, self._steps = marker, crash_at, 0

  def step(self, action):
    self._steps += 1
    if self._steps == self._crash_at:
      try:
        os.close(os.open(self._marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
      except FileExistsError:
        pass
      else:
        os.kill(os.getpid(), signal.SIGKILL)
    return super().step(action)


if ENV_ID not in gymnasium.registry:
  gymnasium.register(ENV_ID, entry_point=CrashOnceCartPole, max_episode_steps=500)
