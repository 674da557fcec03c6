"""In-graph algorithms: the interface, the registry of names, PPO and the random agent.

    from agents.algorithms import algorithm, registry
    class MyAgent(algorithm.InGraphAlgorithm): ...
    registry.lookup('ppo')   # or 'package.module:Class'
"""
