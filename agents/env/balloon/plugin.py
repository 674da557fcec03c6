"""The balloon's registrations in the framework's extension points (`agents.plugins`).

setup.py declares `register` as the balloon's `agents.plugins` entry point, so the core
finds the balloon's network, configs, collectors, evaluation and search without
importing it.
"""

from agents import plugins


def register():
  """Registers the balloon's entries; calling it again changes nothing."""
  # Entries are added here as the balloon's pieces move out of the core.
  assert plugins.ENTRY_POINT_GROUP
