"""An agent class written for BLE, as an rlberry agent class: `fit(budget)` and `eval()`.

`ExperimentManager(agent_class=MyBLEAgent, train_env=..., fit_budget=...)` builds one
`FitAdapter` per fit (`agents.experiment.agent_classes`); users rarely build one:

    adapter = FitAdapter(env, MyBLEAgent, seed=0, output_dir='runs/fit0', learning_rate=1e-3)
    adapter.fit(20_000)        # run_training_loop for whole iterations (see below)
    adapter.eval()             # mean TWR50 on 'tiny_eval' (eval_agent)

`fit(budget)` trains for `budget` more environment steps (rlberry's meaning: a sample
budget, summed over the balloons), as whole iterations of `run_training_loop` (each
charged `balloons x max_episode_length`; see `agent_runs`), in `output_dir`, which is
laid out as an in-graph run (checkpoints, metrics.jsonl, TensorBoard). It resumes from
the checkpoints there, so a fit that was cut off goes on where it stopped. `eval()`
flies an evaluation suite with `eval_agent` and returns the mean of BLE's per-seed
`twr50` (for an environment without it, the mean `cumulative_reward`).

The environment is what the manager builds from `train_env`: one Gymnasium environment
(one balloon, BLE's way) or a batch from `(train_lib.make_batch_env, dict(env_id=...,
num_balloons=B, num_processes=0))`, where a single-environment class becomes B agents,
one per row, and a `BatchedAgent` class one agent for the batch.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.python_agents import agent as agent_lib
from agents.python_agents import agent_runs, eval_lib, train_lib

DEFAULT_SUITE = 'tiny_eval'


class FitAdapter:
  """A BLE agent class with rlberry's `fit`/`eval`/`save`/`load`."""

  def __init__(self, env: Any, agent_class: type, seed: int | None = None,
               output_dir: str | None = None,
               eval_suite: str | eval_lib.EvaluationSuite = DEFAULT_SUITE,
               max_episode_length: int | None = None, **agent_kwargs: Any) -> None:
    """Builds the agent(s) for `env`.

    Args:
      env: a Gymnasium environment or a `BatchEnv` (`train_lib.make_batch_env`).
      agent_class: a class with BLE's Agent interface (or a `BatchedAgent` class).
      seed: the episode seeds' seed (the fit's seed); None: 0.
      output_dir: the run directory; None: a new temporary one.
      eval_suite: the suite `eval` flies by default.
      max_episode_length: steps after which an episode is cut; None: the environment's
        evaluation episode length (the balloon's 960).
      **agent_kwargs: the agent constructor's keyword arguments.
    """
    self.env = env
    self.agent_class = agent_class
    self.seed = 0 if seed is None else int(seed)
    self.output_dir = output_dir or tempfile.mkdtemp(prefix='fit-adapter-')
    self.eval_suite = eval_suite
    self.env_id = _env_id(env)
    self.max_episode_length = max_episode_length or agent_runs.episode_length(self.env_id)
    self.batch_size = len(env) if hasattr(env, '__len__') else 1
    self.agent_kwargs = dict(agent_kwargs)
    self.source = agent_runs.AgentSource(agent_runs.class_spec(agent_class), agent_class)
    self.agent = agent_runs.make_agent(
        self.source, int(env.action_space.n), tuple(env.observation_space.shape),
        self.batch_size, self.agent_kwargs)
    self.budget = 0  # Environment steps fitted so far.
    self.last_result: dict[str, Any] | None = None

  @staticmethod
  def check_init_kwargs(agent_class: type, init_kwargs: Mapping[str, Any]) -> None:
    """Checks the agent class's constructor against the kwargs meant for it.

    Raises:
      ValueError: naming the class and the argument refused or missing.
    """
    own = ('agent_class', 'seed', 'output_dir', 'eval_suite', 'max_episode_length', 'env')
    agent_runs.check_kwargs(
        agent_runs.AgentSource(agent_runs.class_spec(agent_class), agent_class),
        {key: value for key, value in init_kwargs.items() if key not in own})

  def fit(self, budget: int, **kwargs: Any) -> dict[str, Any]:
    """Trains for `budget` more environment steps (whole iterations, rounded up).

    Args:
      budget: environment steps, summed over the balloons.
      **kwargs: `collector_constructors` (BLE collectors) and `quiet` (default True).

    Returns:
      The run's summary (`agent_runs.train_agent`).
    """
    self.budget += int(budget)
    iterations = agent_runs.iterations_for(self.budget, self.batch_size,
                                           self.max_episode_length)
    self.last_result = agent_runs.train_agent(
        self.output_dir, self.env, self.agent, iterations, self.max_episode_length,
        seed=self.seed, quiet=kwargs.get('quiet', True),
        collector_constructors=kwargs.get('collector_constructors', ()))
    return self.last_result

  def eval(self, eval_suite: str | eval_lib.EvaluationSuite | None = None,
           **kwargs: Any) -> float:
    """The mean TWR50 over the seeds of `eval_suite` (default: the adapter's).

    Args:
      eval_suite: a suite name or suite of `eval_lib.get_eval_suite`.
      **kwargs: passed to `eval_lib.eval_agent` (e.g. `workers`).
    """
    results = eval_lib.eval_agent(agent_lib.as_batched(self.agent), self.env_id,
                                  eval_suite or self.eval_suite,
                                  calculate_flight_path=False, **kwargs)
    values = [result.twr50 if result.twr50 is not None else result.cumulative_reward
              for result in results]
    return float(np.mean(values))

  def save(self, filename: str) -> str:
    """Writes `<filename>.json` (the budget fitted; the agent's own files are the run's
    checkpoints) and returns its path."""
    path = f'{filename}.json'
    with open(path, 'w', encoding='utf-8') as file:
      json.dump(dict(budget=self.budget, output_dir=os.path.abspath(self.output_dir)), file)
    return path

  @classmethod
  def load(cls, filename: str, **kwargs: Any) -> FitAdapter:
    """The adapter `save` wrote, its agent loaded from the newest checkpoint of its run.

    Args:
      filename: the path `save` returned.
      **kwargs: the constructor's arguments (`env`, `agent_class`, ...).
    """
    with open(filename, encoding='utf-8') as file:
      saved = json.load(file)
    kwargs.setdefault('output_dir', saved['output_dir'])
    adapter = cls(**kwargs)
    adapter.budget = int(saved['budget'])
    checkpoint_dir = os.path.join(adapter.output_dir, 'checkpoints')
    records = train_lib.read_records(checkpoint_dir)
    if records:
      agent_lib.as_batched(adapter.agent).load_checkpoint(checkpoint_dir, max(records))
    return adapter


def _env_id(env: Any) -> str | None:
  env_id = getattr(env, 'env_id', None)
  spec = getattr(env, 'spec', None)
  return env_id or getattr(spec, 'id', None)
