"""Agents written in Python against BLE's Agent interface, and what trains and flies them.

The Balloon Learning Environment's guide names two ways to work: write an agent against
its `Agent` interface and use its scripts, or use the Gymnasium environment in your own
framework. This package is the first way, name for name, on this project's faster
balloon (and on any Gymnasium environment with discrete actions):

- `agent`: `Agent`, `AgentMode`, `RandomAgent` (BLE's `agents/agent.py`), and
  `BatchedAgent`, the same interface over a batch of environments, with `AgentPerRow`
  wrapping single-environment agents into it; the typed errors of bad agents and bad
  runs;
- `train_lib`: `run_training_loop` (BLE's `train_lib.py`) on one environment or a batch
  of balloons in worker processes (`make_batch_env`), checkpointing every iteration;
- `collectors`: BLE's `Collector` interface, `CollectorDispatcher`, `StatisticsInstance`
  and the console, TensorBoard, JSON-lines (and opt-in pickle) collectors;
- `episode_statistics`: each episode's TWR50 and failure flags (any environment's
  per-episode statistics) for the collectors.
"""
