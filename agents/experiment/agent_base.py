"""Base classes of an agent the experiment manager fits: `Agent` and `AgentWithSimplePolicy`.

    from agents.experiment import AgentWithSimplePolicy, ExperimentManager

    class RandomAgent(AgentWithSimplePolicy):
      name = 'random'

      def __init__(self, env, **kwargs):
        AgentWithSimplePolicy.__init__(self, env, **kwargs)

      def fit(self, budget, **kwargs):
        observation, info = self.env.reset()
        for step in range(budget):
          observation, reward, terminated, truncated, info = self.env.step(
              self.policy(observation))
          self.writer.add_scalar('reward', reward, step)
          if terminated or truncated:
            observation, info = self.env.reset()

      def policy(self, observation):
        return self.env.action_space.sample()

    manager = ExperimentManager(RandomAgent, ('CartPole-v1', {}), fit_budget=100, n_fit=2)
    manager.fit()
    manager.eval_agents(4)   # four calls of agent.eval(), a list of 4 floats

These carry rlberry's agent contract: `env` and `eval_env` are an environment or a
`(constructor or Gymnasium id, kwargs)` pair, `seeder` seeds `rng` and the
environments, `writer` is a `DefaultWriter`, `save(filename)` pickles the agent and
returns the path, `load(filename, **kwargs)` rebuilds it. A class need not derive from
them to be fitted (see `agent_classes.py`); deriving gives it all of this.
"""

from __future__ import annotations

import abc
import copy
import inspect
import logging
import os
import pathlib
import pickle
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, overload

import gymnasium
import numpy as np

from agents.experiment import writer as writer_lib

if TYPE_CHECKING:
  import optuna
  from typing_extensions import Self

_LOG = logging.getLogger(__name__)


class Seeder:
  """A `numpy.random.SeedSequence` and the generator drawn from it (rlberry's `Seeder`).

  As rlberry's, a new seeder spawns a child of the sequence it is given (so
  `Seeder(seeder)` draws other numbers than `seeder`), unless `spawn_seed_seq=False`.

  Attributes:
    seed_seq: the `SeedSequence`.
    rng: a `numpy.random.Generator` of it.
  """

  def __init__(self, seed_seq: SeedLike = None, spawn_seed_seq: bool = True) -> None:
    """Args:
      seed_seq: None (fresh entropy), an int, a `SeedSequence` or another `Seeder`.
      spawn_seed_seq: use a child of that sequence (rlberry's default) rather than itself.

    Raises:
      TypeError: another kind of seed.
    """
    self._set(seed_seq, spawn_seed_seq)

  def _set(self, seed_seq: SeedLike, spawn: bool) -> None:
    seed_seq = _seed_sequence(seed_seq)
    self.seed_seq = seed_seq.spawn(1)[0] if spawn else seed_seq
    self.rng = np.random.default_rng(self.seed_seq)

  def reseed(self, seed_seq: SeedLike = None) -> None:
    """Starts again from a child of `seed_seq` (None: fresh entropy), as rlberry's."""
    self._set(seed_seq, True)

  @overload
  def spawn(self, n: Literal[1] = 1, squeeze: Literal[True] = True) -> Seeder: ...

  @overload
  def spawn(self, n: int = 1, squeeze: bool = True) -> Seeder | list[Seeder]: ...

  def spawn(self, n: int = 1, squeeze: bool = True) -> Seeder | list[Seeder]:
    """`n` independent child seeders (one, not a list, when `n` is 1 and `squeeze`)."""
    children = [Seeder(child, spawn_seed_seq=False) for child in self.seed_seq.spawn(n)]
    return children[0] if squeeze and n == 1 else children

  def generate_state(self, n: int) -> np.ndarray:
    """`n` 32-bit words of the sequence (`SeedSequence.generate_state`), a NumPy array."""
    return self.seed_seq.generate_state(n)

  def generate_int(self) -> int:
    """A 31-bit int drawn from the sequence (what a Gymnasium `reset(seed=...)` takes)."""
    return int(self.seed_seq.generate_state(1, dtype=np.uint32)[0] >> 1)

  def __str__(self) -> str:
    return f'Seeder object with: {self.seed_seq}'


SeedLike: TypeAlias = int | np.random.SeedSequence | Seeder | None

"""A seed as rlberry's agents take it: None (fresh entropy), an int >= 0, a `SeedSequence`
or a `Seeder`."""


def _seed_sequence(seed: SeedLike) -> np.random.SeedSequence:
  if seed is None:
    return np.random.SeedSequence()
  if isinstance(seed, np.random.SeedSequence):
    return seed
  if isinstance(getattr(seed, 'seed_seq', None), np.random.SeedSequence):
    return seed.seed_seq  # type: ignore[union-attr]  # An object with a seed_seq: a Seeder.
  if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
    return np.random.SeedSequence(int(seed))
  raise TypeError(f'seeder must be None, an int >= 0, a SeedSequence or a Seeder, got {seed!r}.')


def gym_make(id: str, wrap_spaces: bool = False, **kwargs: Any) -> gymnasium.Env:  # noqa: A002
  """`gymnasium.make(id, **kwargs)` (rlberry's `gym_make`, for `train_env=(gym_make, {...})`).

  Args:
    id: a Gymnasium environment id, e.g. 'CartPole-v1'.
    wrap_spaces: accepted for rlberry's signature; Gymnasium's spaces are used as they are.
    **kwargs: the environment's keyword arguments.
  """
  del wrap_spaces
  return gymnasium.make(id, **kwargs)


def make_env(env: Any, seeder: int | Seeder | None = None, copy_env: bool = True) -> Any:
  """An environment from an instance or a `(constructor or Gymnasium id, kwargs)` pair.

  An instance is deep-copied when `copy_env`; the environment is reset with `seeder`
  (an int, or a `Seeder`'s next int) and its action space seeded, when it has them.
  """
  if env is None or (isinstance(env, tuple) and len(env) == 2 and env[0] is None):
    return None
  if isinstance(env, tuple) and len(env) == 2 and (isinstance(env[0], str) or callable(env[0])):
    maker, kwargs = env
    instance = gymnasium.make(maker, **(kwargs or {})) if isinstance(maker, str) \
        else maker(**(kwargs or {}))
  else:
    instance = copy.deepcopy(env) if copy_env else env
  if seeder is not None:
    _reseed(instance, seeder)
  return instance


def _reseed(env: Any, seeder: int | Seeder) -> None:
  seed = int(seeder) if isinstance(seeder, (int, np.integer)) else seeder.generate_int()
  if 'seed' in _parameters(getattr(env, 'reset', None)):
    env.reset(seed=seed)
  if callable(getattr(getattr(env, 'action_space', None), 'seed', None)):
    env.action_space.seed(seed)


def _parameters(function: Any) -> Mapping[str, inspect.Parameter]:
  try:
    return inspect.signature(function).parameters
  except (TypeError, ValueError):
    return {}


class WriterWrapper(gymnasium.Wrapper):
  """Logs each step's reward and/or action into a writer (rlberry's `WriterWrapper`).

      self.env = WriterWrapper(self.env, self.writer, write_scalar='reward')
  """

  CHOICES = ('reward', 'action', 'action_and_reward')

  def __init__(self, env: gymnasium.Env, writer: Any, write_scalar: str = 'reward') -> None:
    """Args:
      env: the environment to wrap.
      writer: a writer (`add_scalar(tag, value, global_step)`), or an `Agent`, whose
        current `writer` is used at each step.
      write_scalar: 'reward', 'action' or 'action_and_reward'.

    Raises:
      ValueError: another `write_scalar`.
    """
    if write_scalar not in self.CHOICES:
      raise ValueError(f'write_scalar must be one of {self.CHOICES}, got {write_scalar!r}.')
    super().__init__(env)
    self._writer_source, self._what, self._steps = writer, write_scalar, 0

  @property
  def writer(self) -> Any:
    """The writer the steps are logged into (None: nothing is logged)."""
    source = self._writer_source
    return source.writer if isinstance(source, Agent) else source

  def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
    observation, reward, terminated, truncated, info = self.env.step(action)
    writer = self.writer
    if writer is not None:
      if self._what in ('reward', 'action_and_reward'):
        writer.add_scalar('reward', float(reward), self._steps)
      if self._what in ('action', 'action_and_reward') and np.size(action) == 1:
        writer.add_scalar('action', float(np.asarray(action).item()), self._steps)
    self._steps += 1
    return observation, reward, terminated, truncated, info


class Agent(abc.ABC):
  """An agent with rlberry's contract: `fit(budget, **kwargs)` and `eval(**kwargs)` to write.

  Attributes:
    name: the agent's name (a class attribute; the manager's default `agent_name`).
    env: the training environment (an instance).
    eval_env: the evaluation environment (an instance).
    seeder: the `Seeder` of `rng` and of the environments' seeds.
  """

  name = ''

  def __init__(self, env: Any = None, eval_env: Any = None, copy_env: bool = True,
               compress_pickle: bool = True, seeder: SeedLike = None,
               output_dir: str | os.PathLike[str] | None = None, writer_extra: str | None = None,
               _execution_metadata: Mapping[str, Any] | None = None,
               _default_writer_kwargs: Mapping[str, Any] | None = None,
               _thread_shared_data: Any = None) -> None:
    """Builds the environments, the seeder and the writer.

    Args:
      env: the training environment, or `(constructor or Gymnasium id, kwargs)`.
      eval_env: the evaluation environment (same forms); None: another copy of `env`.
      copy_env: deep-copy an environment instance rather than share it.
      compress_pickle: accepted for rlberry's signature (`save` writes plain pickle).
      seeder: None, an int, a `numpy.random.SeedSequence` or a `Seeder`.
      output_dir: a folder the agent may write to (default `output_<unique id>`).
      writer_extra: 'reward', 'action' or 'action_and_reward': the training environment
        logs these at every step into `writer`.
      _execution_metadata: shown in the writer's logs (set by the manager).
      _default_writer_kwargs: the `DefaultWriter`'s arguments (set by the manager).
      _thread_shared_data: a mapping shared by the agents of one manager's threads.
    """
    del compress_pickle
    self.seeder = Seeder(seeder)
    self.env = make_env(env, self.seeder, copy_env)
    self.eval_env = make_env(eval_env if eval_env is not None else env, self.seeder, True)
    self._unique_id = (f'{self.name}_' if self.name else '') + uuid.uuid4().hex[:8]
    writer_kwargs = dict(_default_writer_kwargs or dict(
        name=self.name, execution_metadata=_execution_metadata))
    self._writer: Any = writer_lib.DefaultWriter(**writer_kwargs)
    self._output_dir = pathlib.Path(output_dir or f'output_{self._unique_id}')
    self._thread_shared_data = _thread_shared_data
    if writer_extra:
      self.env = WriterWrapper(self.env, self, writer_extra)

  @property
  def writer(self) -> Any:
    """Where the agent logs: `self.writer.add_scalar(tag, value, global_step)`."""
    return self._writer

  @property
  def rng(self) -> np.random.Generator:
    """The agent's `numpy.random.Generator`: draw every random number from it."""
    return self.seeder.rng

  @property
  def output_dir(self) -> pathlib.Path:
    """A folder the agent may write to (`pathlib.Path`); the fit's run directory."""
    return self._output_dir

  @property
  def unique_id(self) -> str:
    """An identifier of this instance (`<name>_<8 hex digits>`)."""
    return self._unique_id

  @property
  def thread_shared_data(self) -> Any:
    """The mapping the manager shares between its agents' threads (empty without one)."""
    return {} if self._thread_shared_data is None else self._thread_shared_data

  @abc.abstractmethod
  def fit(self, budget: int, **kwargs: Any) -> None:
    """Trains for `budget` more (steps, episodes, ...: the agent's unit)."""

  @abc.abstractmethod
  def eval(self, **kwargs: Any) -> float:
    """A float saying how good the agent is (higher is better)."""

  def set_writer(self, writer: Any) -> None:
    """Replaces `writer` (None: log nothing); the hyperparameters go to its `add_text`."""
    self._writer = writer
    if writer is not None:
      rows = [f'| {key} | {getattr(self, key, None)} |'
              for key in _parameters(type(self).__init__) if key != 'self']
      writer.add_text('Hyperparameters', '| Parameter | Value |\n|---|---|\n' + '\n'.join(rows))

  @classmethod
  def sample_parameters(cls, trial: optuna.Trial) -> dict[str, Any]:
    """Constructor arguments for one Optuna `trial` (override to search hyperparameters)."""
    raise NotImplementedError(f'{cls.__name__}.sample_parameters(trial) is not implemented.')

  def reseed(self, seed_seq: SeedLike = None) -> None:
    """A new seeder (`seed_seq`; None: a child of the current one), reseeding the envs."""
    self.seeder = self.seeder.spawn() if seed_seq is None else Seeder(seed_seq)
    for env in (self.env, self.eval_env):
      if env is not None:
        _reseed(env, self.seeder)

  @classmethod
  def _get_param_names(cls) -> list[str]:
    """The constructor's named arguments (without `self`, `*args` and `**kwargs`)."""
    return sorted(name for name, parameter in _parameters(cls.__init__).items()
                  if name != 'self' and parameter.kind not in (parameter.VAR_POSITIONAL,
                                                                parameter.VAR_KEYWORD))

  def get_params(self, deep: bool = True) -> dict[str, Any]:
    """{constructor argument: its value on this agent} (rlberry's, after scikit-learn's);
    an argument the agent does not keep as an attribute of the same name is None."""
    del deep
    return {name: getattr(self, name, None) for name in self._get_param_names()}

  def save(self, filename: str | os.PathLike[str]) -> pathlib.Path:
    """Pickles the agent's attributes to `<filename>.pickle`; returns that `pathlib.Path`.

    A writer that cannot be pickled is dropped first (`set_writer(None)`); any other
    attribute that cannot be pickled (an open file, a lock) is left out, with a warning
    naming it, and `load` gives it the value a new agent gets.
    """
    try:
      pickle.dumps(self._writer)
    except Exception:  # A writer holding files or locks: the agent goes without it.
      self.set_writer(None)
    state = {}
    for key, value in self.__dict__.items():
      try:
        pickle.dumps(value)
      except Exception as error:  # Not picklable: a new agent's value replaces it at load.
        _LOG.warning('%s.save: attribute %r is not saved (%s: %s).', type(self).__name__, key,
                     type(error).__name__, error)
        continue
      state[key] = value
    path = pathlib.Path(filename).with_suffix('.pickle')
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open('wb') as file:
      pickle.dump(state, file)
    return path

  @classmethod
  def load(cls, filename: str | os.PathLike[str], **kwargs: Any) -> Self:
    """The agent `save` wrote: built with `cls(**kwargs)`, then its saved state restored."""
    path = pathlib.Path(filename).with_suffix('.pickle')
    agent = cls(**kwargs)
    with path.open('rb') as file:
      state = pickle.load(file)
    agent.__dict__.update(state)
    return agent


class AgentWithSimplePolicy(Agent):
  """An `Agent` whose `policy(observation)` acts; `eval` is a Monte-Carlo return of it."""

  @abc.abstractmethod
  def policy(self, observation: Any) -> Any:
    """The action for one observation."""

  # pylint: disable-next=arguments-differ
  def eval(self, eval_horizon: int = 10**5, n_simulations: int = 10,  # type: ignore[override]
           gamma: float = 1.0) -> float:  # rlberry's signature (Agent.eval takes **kwargs).

    """Mean discounted return of `policy` over `n_simulations` episodes of `eval_env`.

    Args:
      eval_horizon: steps after which an episode is cut.
      n_simulations: episodes.
      gamma: discount factor.

    Returns:
      The mean over the episodes of the sum of `gamma**t * reward_t` (a float).
    """
    returns = np.zeros(n_simulations)
    for simulation in range(n_simulations):
      observation, _ = self.eval_env.reset()
      for step in range(eval_horizon):
        observation, reward, terminated, truncated, _ = self.eval_env.step(
            self.policy(observation))
        returns[simulation] += reward * gamma**step
        if terminated or truncated:
          break
    return float(returns.mean())
