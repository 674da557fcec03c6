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
  of balloons in worker processes (`make_batch_env`), checkpointing every iteration
  (the iteration records: `run_records`);
- `collectors`: BLE's `Collector` interface, `CollectorDispatcher`, `StatisticsInstance`
  and the console, TensorBoard, JSON-lines (and opt-in pickle) collectors;
- `episode_statistics`: each episode's TWR50 and failure flags (any environment's
  per-episode statistics) for the collectors;
- `eval_lib`: `eval_agent`, `get_eval_suite`, `EvaluationResult` (BLE's `eval/eval_lib.py`
  and `eval/suites.py`), over `agents.evaluation`'s runner;
- `suites`: BLE's `eval/suites.py` names (`get_eval_suite`), from `eval_lib`;
- `run_helpers`: `bind_gin_variables` and `create_agent` (BLE's `utils/run_helpers.py`);
- `agent_registry`: BLE 1.0.1's agent names (`random`, `mlp`, `dqn`, `perciatelli44`,
  `quantile`, `finetune_perciatelli`, `station_seeker`, `random_walk`) and the
  project's (`balloon_ppo`), with their gin files (`configs/*.gin`);
- `train`, `eval`: BLE's launch commands with BLE 1.0.1's flags
  (`python -m agents.python_agents.train`, `... .eval`), over `ble_flags` (absl-style
  flags) and `command_setup`;
- `quantile_agent`: `QuantileAgent`, the project's QR-DQN as a `BatchedAgent`;
- `mlp_agent`: `MLPAgent`, BLE's SARSA MLP agent in NumPy;
- `policy_agents`: the environments' baselines and exported policies as agents;
- `station_seeker_agent`, `random_walk_agent`, `perciatelli44`: BLE's modules of those
  agents, with their class names;
- `tf_checkpoint`: per-iteration checkpoints of an agent's TensorFlow state.
"""
