"""Registers the package's environments with Gymnasium (each registers itself; today the
balloon, in `agents/env/balloon/registration.py`).

`register_all()` runs on `import agents.env`; setup.py also declares it as the
`gymnasium.envs` entry point for tools that load Gymnasium plugins (Gymnasium 1.x itself
no longer does so on import). So after `import agents.env`, or with the module-prefixed
id `gymnasium.make('agents.env:BalloonLearningEnvironment-v0')`, the environment is
made with its 960-step TimeLimit, and `gymnasium.make_vec(..., num_envs=B)` builds the
vectorised slab (`BalloonVectorEnv`) directly through the vector entry point.
"""

from agents.env.balloon import registration as balloon_registration
from agents.env.balloon.constants import BALLOON_ENV_ID

__all__ = ['BALLOON_ENV_ID', 'register_all']


def register_all():
  """Registers every environment of the package; calling it again changes nothing."""
  # Each environment registers itself, so that its plug-in needs nothing from here.
  balloon_registration.register()
