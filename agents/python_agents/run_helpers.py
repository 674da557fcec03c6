"""BLE's `run_helpers.create_agent`: the agents the project ships, under BLE's names.

    from agents.python_agents import run_helpers

    agent = run_helpers.create_agent('station_seeker', 3, (1099,))
    run_helpers.agent_names()   # ['balloon_ppo', 'quantile', 'random', 'random_walk', ...]

- `random`: `agent.RandomAgent`, uniform actions (BLE's);
- `station_seeker`, `random_walk`: BLE's two controllers, the baselines of the balloon's
  evaluation plug-in as agents (any environment's baselines are offered the same way,
  except those that act in the slab, such as the balloon's planner `mpc`, which needs the
  simulator's forecast and GP and so is flown by `agents.scripts.evaluate` only);
- `perciatelli44`: BLE's frozen Perciatelli44 network, also a baseline of the balloon's
  plug-in (`agents.env.balloon.controllers.perciatelli44`; `path=` names its weights, else they are
  found as that module says);
- `balloon_ppo`: the balloon policy shipped in `models/balloon_ppo` (a PPO SavedModel),
  flown deterministically;
- `quantile`: `QuantileAgent`, QR-DQN learning through BLE's interface, batched
  (`num_envs` rows);
- `finetune_perciatelli`: a `QuantileAgent` started from Perciatelli44's released
  weights (`agents.python_agents.finetune_perciatelli`).

`create_agent` passes keyword arguments on to the agent's constructor (`quantile`'s
hyperparameters, `balloon_ppo`'s and `perciatelli44`'s `path`), as BLE's gin bindings
would.

The baselines come through the environments' evaluation plug-ins
(`agents.plugins.EVALUATION`), so this module names no environment but for the shipped
balloon model's folder.
"""

import os

import numpy as np

from agents import plugins
from agents.evaluation import environments
from agents.evaluation import policies as policies_lib
from agents.evaluation.errors import EvaluationError
from agents.python_agents import agent as agent_lib

SHIPPED_MODELS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'models')
BALLOON_PPO = os.path.join(SHIPPED_MODELS, 'balloon_ppo')


class UnknownAgentError(ValueError):
  """`create_agent` was asked for a name it does not know (the message lists the names)."""


class PolicyAgent(agent_lib.Agent):
  """One environment's `Agent` over an evaluation policy of one row.

  An evaluation policy (`agents.evaluation.policies`) acts for a batch:
  `begin_episode(indices)` then `policy(observations) -> actions`; here it acts for a
  batch of one, so its per-episode state (the random walk's target, a recurrent
  network's state) is this agent's.
  """

  def __init__(self, num_actions, observation_shape, policy, name):
    """Keeps the one-row `policy`; `name` is what `get_name()` returns."""
    super().__init__(num_actions, observation_shape)
    self._policy = policy
    self._name = name

  def get_name(self):
    return self._name

  def begin_episode(self, observation):
    policies_lib.begin_episode(self._policy, [0], None)
    return self._act(observation)

  def step(self, reward, observation):
    del reward
    return self._act(observation)

  def end_episode(self, reward, terminal=True):
    del reward, terminal

  def _act(self, observation):
    return int(np.asarray(self._policy(np.asarray(observation)[None]))[0])


class SavedModelAgent(PolicyAgent):
  """An exported policy (`agents.scripts.export`'s `policy/` SavedModel) as an `Agent`.

  Raises (at construction):
    EvaluationError: no SavedModel at `path`, or one taking other observations.
  """

  def __init__(self, num_actions, observation_shape, path=BALLOON_PPO, name=None):
    model = policies_lib.load_saved_model(path)
    policies_lib.check_observation_shape(model, path, tuple(observation_shape),
                                         f'observation_shape {tuple(observation_shape)}')
    policy = policies_lib.TensorFlowPolicy(model, 1, hasattr(model, 'initial_state'))
    super().__init__(num_actions, observation_shape, policy,
                     name or os.path.basename(os.path.normpath(path)))


def _baseline_agent(name):
  """A constructor `(num_actions, observation_shape)` of an evaluation baseline's agent."""

  def construct(num_actions, observation_shape, episode_length=None, **kwargs):
    environment = environments.get(environments.baseline_env_id(name))
    length = episode_length or environment.default_episode_length()
    return PolicyAgent(num_actions, observation_shape,
                       environment.baselines[name](1, length, **kwargs), name)
  construct.__name__ = name
  return construct


def _quantile_agent(num_actions, observation_shape, **hyperparameters):
  from agents.python_agents import quantile_agent  # TensorFlow and QR-DQN, when asked
  return quantile_agent.QuantileAgent(num_actions, observation_shape, **hyperparameters)


def _finetune_perciatelli_agent(num_actions, observation_shape, **kwargs):
  """QR-DQN from Perciatelli44's weights (`finetune_perciatelli`), loaded when asked."""
  from agents.python_agents import finetune_perciatelli
  return finetune_perciatelli.create(num_actions, observation_shape, **kwargs)


def _constructors():
  """{name: constructor(num_actions, observation_shape, **kwargs)} of every shipped agent."""
  constructors = {'random': agent_lib.RandomAgent, 'balloon_ppo': SavedModelAgent,
                  'quantile': _quantile_agent,
                  'finetune_perciatelli': _finetune_perciatelli_agent}
  for env_id in plugins.EVALUATION.names():
    environment = environments.get(env_id)
    for name in environment.baselines:
      if not environment.acts_in_slab(name):
        constructors.setdefault(name, _baseline_agent(name))
  return constructors


def agent_names():
  """The names `create_agent` knows, sorted."""
  return sorted(_constructors())


def create_agent(agent_name, num_actions, observation_shape, **kwargs):
  """Creates a shipped agent by BLE's name (see the module docstring for the names).

  Args:
    agent_name: a name of `agent_names()`.
    num_actions: int, the number of discrete actions.
    observation_shape: the shape of one observation.
    **kwargs: passed on to the agent's constructor.

  Returns:
    An `Agent` (a `BatchedAgent` for `quantile`).

  Raises:
    UnknownAgentError: an unknown name (the message lists the names).
    EvaluationError: `balloon_ppo` when the shipped model is missing (an installed wheel
      does not hold `models/`) or takes other observations.
    ValueError: `perciatelli44` when its weights are missing or are not its graph (the
      message names the command that fetches them).
  """
  constructors = _constructors()
  if agent_name not in constructors:
    raise UnknownAgentError(f'unknown agent {agent_name!r}; create_agent knows '
                            f'{", ".join(sorted(constructors))}.')
  if agent_name == 'balloon_ppo' and not os.path.isdir(kwargs.get('path', BALLOON_PPO)):
    raise EvaluationError(f'balloon_ppo flies the model shipped in {BALLOON_PPO}, which is '
                          'not here (a wheel does not hold models/; use a source checkout, or '
                          'pass path=<an exported policy/ folder>).')
  return constructors[agent_name](num_actions, observation_shape, **kwargs)
