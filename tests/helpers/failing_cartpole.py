"""Registers `FailingCartPole-v0`: CartPole that fails at its third step, as a user's
environment might.

`fault='nan'` returns a NaN observation there; `fault='raise'` raises in its own `step`
(the line the user must see). Configs name this module in `environment.imports`.
"""

import gymnasium
import numpy as np
from gymnasium.envs.classic_control import cartpole

ENV_ID = 'FailingCartPole-v0'


class FailingCartPole(cartpole.CartPoleEnv):
  """CartPole whose third step returns a NaN observation or raises."""

  def __init__(self, fault='nan', **kwargs):
    super().__init__(**kwargs)
    self.fault, self.steps = fault, 0

  def step(self, action):
    observ, reward, terminated, truncated, info = super().step(action)
    self.steps += 1
    if self.steps == 3 and self.fault == 'nan':
      observ = np.full_like(observ, np.nan)
    if self.steps == 3 and self.fault == 'raise':
      raise RuntimeError('the user environment broke')
    return observ, reward, terminated, truncated, info


if ENV_ID not in gymnasium.registry:
  gymnasium.register(ENV_ID, entry_point=FailingCartPole, max_episode_steps=500)
