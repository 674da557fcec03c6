"""Imported by the forkserver only (`launch.FORKSERVER_PRELOAD`): loads the plug-ins once,
so every worker it forks starts with them instead of loading them itself.

Loading them reads every installed distribution's entry points and imports the
plug-ins' modules: a quarter of a second or more per worker otherwise.
"""

from agents.tools.transport import worker

worker.load_plugins()
