"""Registers `CrashingPendulum-v0`: a valid config's environment whose reset raises.

A fit of it passes every config check and crashes only when it runs, which is
what the tests of crash reporting need. Configs name this module in
`environment.imports`.
"""

import gymnasium
from gymnasium.envs.classic_control import pendulum

ENV_ID = 'CrashingPendulum-v0'
MESSAGE = 'CrashingPendulum refuses to reset'


class CrashingPendulum(pendulum.PendulumEnv):
  """Pendulum whose reset raises RuntimeError."""

  def reset(self, *, seed=None, options=None):
    raise RuntimeError(MESSAGE)


if ENV_ID not in gymnasium.registry:
  gymnasium.register(ENV_ID, entry_point=CrashingPendulum, max_episode_steps=200)

CRASHING_OVERRIDES = {'environment.id': ENV_ID,
                      'environment.imports': ['tests.helpers.crashing_env']}
