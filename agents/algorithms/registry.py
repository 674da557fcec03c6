"""Maps algorithm names to classes: the built-in ones, or any `pkg.module:Class`.

    registry.lookup('ppo')                      # agents.algorithms.ppo.ppo.PPO
    registry.lookup('mypackage.agents:MyAgent')  # a user's subclass, no edit here

Built-ins are imported only when looked up, so reading a config does not import
every algorithm.
"""

import importlib

from agents.config_fields import ConfigError

ALGORITHMS = {
    'ppo': 'agents.algorithms.ppo.ppo:PPO',
    'random': 'agents.algorithms.random_agent:RandomAgent',
}


def lookup(name):
  """Returns the algorithm class named `name`.

  Args:
    name: a key of `ALGORITHMS`, or 'package.module:ClassName'.

  Returns:
    A subclass of `agents.algorithms.algorithm.InGraphAlgorithm`.

  Raises:
    ConfigError: unknown name, module or class, or not an `InGraphAlgorithm`.
  """
  from agents.algorithms import algorithm
  path = ALGORITHMS.get(name, name)
  if not isinstance(name, str) or ':' not in path:
    raise ConfigError(f"Config key 'algorithm.name' must be one of {sorted(ALGORITHMS)} or "
                      f"'package.module:Class', got {name!r}.")
  module_name, class_name = path.split(':', 1)
  try:
    module = importlib.import_module(module_name)
  except ImportError as error:
    raise ConfigError(f"Config key 'algorithm.name' = {name!r}: cannot import "
                      f'{module_name!r} ({error}).') from error
  cls = getattr(module, class_name, None)
  if not (isinstance(cls, type) and issubclass(cls, algorithm.InGraphAlgorithm)):
    raise ConfigError(f"Config key 'algorithm.name' = {name!r}: {module_name} has no "
                      f'InGraphAlgorithm subclass named {class_name!r}.')
  return cls
