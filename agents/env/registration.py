"""Registers the balloon environment with Gymnasium.

`register_all()` runs on `import agents.env` and through the `gymnasium.envs` entry
point declared in setup.py, so `gymnasium.make('BalloonLearningEnvironment-v0')` works
either way, and `gymnasium.make_vec('BalloonLearningEnvironment-v0', num_envs=B)` builds
the vectorised slab (`BalloonVectorEnv`) directly.
"""

import gymnasium

from agents.env.balloon import constants

BALLOON_ENV_ID = 'BalloonLearningEnvironment-v0'


def register_all():
  """Registers every environment of the package; calling it again changes nothing."""
  if BALLOON_ENV_ID in gymnasium.registry:
    return
  gymnasium.register(
      id=BALLOON_ENV_ID,
      entry_point='agents.env.balloon.env:BalloonEnv',
      vector_entry_point='agents.env.balloon.env:BalloonVectorEnv',
      max_episode_steps=constants.EPISODE_STEPS,
  )
