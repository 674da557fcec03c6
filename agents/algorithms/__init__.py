"""In-graph algorithms: the interface, the registry of names, PPO and the random agent.

    from agents.algorithms import algorithm, registry
    class MyAgent(algorithm.InGraphAlgorithm): ...
    registry.lookup('ppo')   # or 'package.module:Class'
"""

import importlib


def __getattr__(name):
  """`algorithms.PPO` (BatchPPO's name for its algorithm class), imported at first use;
  submodules by attribute."""
  if name == 'PPO':
    return importlib.import_module(f'{__name__}.ppo.ppo').PPO
  try:
    return importlib.import_module(f'{__name__}.{name}')
  except ModuleNotFoundError as error:
    if error.name != f'{__name__}.{name}':
      raise
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}') from None
