"""The balloon's registrations in the framework's extension points (`agents.plugins`).

setup.py declares `register` as the balloon's `agents.plugins` entry point, so the core
finds the balloon's network, configs, collectors, evaluation and search without
importing it.
"""

from agents import plugins
from agents.env.balloon import constants


def register():
  """Registers the balloon's entries; calling it again changes nothing."""
  plugins.EVALUATION.register(constants.BALLOON_ENV_ID,
                              'agents.env.balloon.evaluation:BALLOON_EVALUATION')
