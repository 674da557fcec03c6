"""Registers the balloon environment with Gymnasium: its id, its entry points (the
single environment and the vectorised slab) and its 960-step TimeLimit.

Called by `agents.env.registration.register_all` (on `import agents.env`) and by the
balloon's plug-in, for processes that never import `agents.env`.
"""

import gymnasium

from agents.env.balloon import constants


def register():
  """Registers `BalloonLearningEnvironment-v0`; calling it again changes nothing."""
  if constants.BALLOON_ENV_ID in gymnasium.registry:
    return
  gymnasium.register(
      id=constants.BALLOON_ENV_ID,
      entry_point='agents.env.balloon.env:BalloonEnv',
      vector_entry_point='agents.env.balloon.env:BalloonVectorEnv',
      max_episode_steps=constants.EPISODE_STEPS,
  )
