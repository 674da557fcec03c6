"""Agents written in Python against BLE's Agent interface, and what trains and flies them.

The Balloon Learning Environment's guide names two ways to work: write an agent against
its `Agent` interface and use its scripts, or use the Gymnasium environment in your own
framework. This package is the first way, name for name, on this project's faster
balloon (and on any Gymnasium environment with discrete actions):

- `agent`: `Agent`, `AgentMode`, `RandomAgent` (BLE's `agents/agent.py`), and
  `BatchedAgent`, the same interface over a batch of environments, with `AgentPerRow`
  wrapping single-environment agents into it.
"""
