"""BLE's Agent interface, name for name, and its batched form.

An agent file written for the Balloon Learning Environment runs here with its import
line changed from `from balloon_learning_environment.agents import agent` to
`from agents.python_agents import agent`, and nothing else:

    class MyNewAgent(agent.Agent):
      def __init__(self, num_actions, observation_shape):
        super().__init__(num_actions, observation_shape)
      def begin_episode(self, observation): ...      # -> int action
      def step(self, reward, observation): ...       # -> int action
      def end_episode(self, reward, terminal=True): ...

`BatchedAgent` is the same interface over a batch of B environments, for agents that
act for many balloons in one call (a network evaluated on a batch is far cheaper than B
calls). Every method takes the batch `rows` it concerns, so rows begin and end their
episodes at different steps. `AgentPerRow` turns single-environment agents into a
`BatchedAgent`, one agent per row, and `as_batched` does so when an agent needs it.

Differences from BLE, each because the project has no JAX or gin:
- `set_summary_writer` gets `collectors.SummaryWriter` (flax's `scalar`, `histogram`,
  `flush` over a `tf.summary` writer, which `as_default()` also gives) or None, rather
  than flax's own `SummaryWriter`;
- `check_agent` names a missing or non-callable required method up front, where BLE
  fails at the first call.
"""

from __future__ import annotations

import abc
import enum
import inspect
import os
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

import numpy as np

REQUIRED_METHODS = ('begin_episode', 'step', 'end_episode')
OPTIONAL_METHODS = ('get_name', 'set_mode', 'set_summary_writer', 'save_checkpoint',
                    'load_checkpoint', 'reload_latest_checkpoint')


class AgentError(TypeError):
  """An agent that does not follow the interface (the message names what is wrong)."""


class AgentActionError(AgentError, ValueError):
  """An agent returned an action that is not an int in [0, num_actions).

  Attributes:
    action: the action as the agent returned it.
    row: the batch row (balloon) it was meant for.
    iteration: the training iteration, when known.
  """

  def __init__(self, message: str, action: Any = None, row: int | None = None,
               iteration: int | None = None) -> None:
    self.action, self.row, self.iteration = action, row, iteration
    super().__init__(message)


class AgentStepError(RuntimeError):
  """An agent's own method raised; the message names the method, row and iteration.

  Attributes:
    method: 'begin_episode', 'step' or 'end_episode'.
    row: the batch row (balloon) whose call raised, or None when a batched agent raised
      for several rows at once.
    iteration: the training iteration, when known.
  """

  def __init__(self, method: str, row: int | None = None, iteration: int | None = None,
               cause: BaseException | None = None) -> None:
    self.method, self.row, self.iteration, self.cause = method, row, iteration, cause
    where = 'rows of the batch' if row is None else f'balloon (row) {row}'
    when = '' if iteration is None else f' at iteration {iteration}'
    what = '' if cause is None else f': {type(cause).__name__}: {cause}'
    super().__init__(f'the agent\'s {method}() raised for {where}{when}{what}')

  def at_iteration(self, iteration: int | None) -> AgentStepError:
    """This error naming `iteration` (a new error; the cause is kept)."""
    return type(self)(self.method, self.row, iteration, self.cause)

  def __reduce__(self) -> tuple[type[AgentStepError], tuple[Any, ...]]:
    return (type(self), (self.method, self.row, self.iteration, self.cause))


class CollectorError(RuntimeError):
  """A metrics collector raised; the message names the collector, the call and the episode."""


class CheckpointMismatchError(ValueError):
  """A checkpoint directory holds the iterations of another agent class (named)."""


class CheckpointLoadError(RuntimeError):
  """No recorded iteration of a checkpoint directory loads into the agent (each named)."""


class AgentMode(enum.Enum):
  """Whether an agent may learn from what it sees (TRAIN) or must stay fixed (EVAL)."""
  TRAIN = 'train'
  EVAL = 'eval'


class _OptionalMethods:
  """BLE's optional agent methods, with BLE's defaults (no-ops; no checkpoint found)."""

  summary_writer: Any = None

  def get_name(self) -> str:
    """The agent's name, its class name unless overridden."""
    return self.__class__.__name__

  def set_summary_writer(self, summary_writer: Any) -> None:
    """Gives the agent a summary writer to log to (`collectors.SummaryWriter`), or None."""
    self.summary_writer = summary_writer

  def set_mode(self, mode: AgentMode | str) -> None:
    """Sets `AgentMode.TRAIN` or `AgentMode.EVAL` (or their strings). No-op by default."""

  def save_checkpoint(self, checkpoint_dir: str, iteration_number: int) -> None:
    """Saves the agent's parameters for `iteration_number`. No-op by default."""

  def load_checkpoint(self, checkpoint_dir: str, iteration_number: int) -> None:
    """Loads the parameters saved for `iteration_number`. No-op by default."""

  def reload_latest_checkpoint(self, checkpoint_dir: str) -> int:
    """Loads the newest checkpoint; returns its iteration, or -1 (the default) if none."""
    del checkpoint_dir
    return -1


class Agent(_OptionalMethods, abc.ABC):
  """An agent for one environment, with BLE's methods, arguments and meaning."""

  def __init__(self, num_actions: int, observation_shape: Sequence[int]) -> None:
    """Keeps the environment's sizes and puts the agent in training mode.

    Subclasses take the same two arguments, which `run_training_loop`, `eval_agent`
    and `create_agent` pass, and hand them on to this constructor.

    Args:
      num_actions: int, the number of discrete actions.
      observation_shape: sequence of ints, the shape of one observation.
    """
    self._num_actions = num_actions
    self._observation_shape = observation_shape
    self.set_mode(AgentMode.TRAIN)

  @abc.abstractmethod
  def begin_episode(self, observation: np.ndarray) -> int:
    """The first action of an episode, given its first observation."""

  @abc.abstractmethod
  def step(self, reward: float, observation: np.ndarray) -> int:
    """The next action, given the last reward and observation."""

  @abc.abstractmethod
  def end_episode(self, reward: float, terminal: bool = True) -> None:
    """The episode ended with `reward`; `terminal` is False when it was cut by time."""


class RandomAgent(Agent):
  """Uniformly random actions from NumPy's global generator, as BLE's."""

  def _random_action(self) -> int:
    return int(np.random.randint(self._num_actions))

  def begin_episode(self, observation: np.ndarray) -> int:
    del observation
    return self._random_action()

  def step(self, reward: float, observation: np.ndarray) -> int:
    del reward, observation
    return self._random_action()

  def end_episode(self, reward: float, terminal: bool = True) -> None:
    del reward, terminal


class BatchedAgent(_OptionalMethods, abc.ABC):
  """BLE's interface over a batch of B environments.

  `rows` is an int array of batch rows; the arrays passed along with it have one entry
  per row of `rows`, in its order, and the actions returned do too. A row that ended
  its episode is not stepped again until it begins a new one.
  """

  def __init__(self, num_actions: int, observation_shape: Sequence[int],
               batch_size: int) -> None:
    """Keeps the sizes and puts the agent in training mode.

    Args:
      num_actions: int, the number of discrete actions.
      observation_shape: sequence of ints, the shape of one observation.
      batch_size: int, the number of rows B.
    """
    self._num_actions = num_actions
    self._observation_shape = observation_shape
    self.batch_size = batch_size
    self.set_mode(AgentMode.TRAIN)

  @abc.abstractmethod
  def begin_episode(self, observations: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows `rows` begin episodes: observations [R, ...] -> int actions [R]."""

  @abc.abstractmethod
  def step(self, rewards: np.ndarray, observations: np.ndarray,
           rows: np.ndarray) -> np.ndarray:
    """Rows `rows` step: rewards [R], observations [R, ...] -> int actions [R]."""

  @abc.abstractmethod
  def end_episode(self, rewards: np.ndarray, terminals: np.ndarray, rows: np.ndarray) -> None:
    """Rows `rows` ended with rewards [R]; terminals [R] False where cut by time."""


class AgentPerRow(BatchedAgent):
  """Single-environment agents as one `BatchedAgent`: row i is `agents[i]`.

  Mode, summary writer and checkpoints go to every agent; agent i's checkpoints live
  in `<checkpoint_dir>/row_<i>` when there is more than one agent, so that agents of
  one class do not overwrite each other's files.
  """

  def __init__(self, agents: Iterable[Any]) -> None:
    agents = list(agents)
    if not agents:
      raise AgentError('AgentPerRow needs at least one agent.')
    for single in agents:
      check_agent(single)
    self._agents = agents
    first = agents[0]
    # An agent not derived from Agent may keep no sizes: they are None then (the ignores).
    super().__init__(getattr(first, '_num_actions', None),  # type: ignore[arg-type]
                     getattr(first, '_observation_shape', None),  # type: ignore[arg-type]
                     len(agents))

  @property
  def agents(self) -> tuple[Any, ...]:
    """The single-environment agents, one per row."""
    return tuple(self._agents)

  def get_name(self) -> str:
    return str(_call_optional(self._agents[0], 'get_name', type(self._agents[0]).__name__))

  def begin_episode(self, observations: np.ndarray, rows: np.ndarray) -> np.ndarray:
    actions: list[Any] = []
    row: Any = None
    try:
      for row, observation in zip(rows, observations):
        actions.append(self._agents[row].begin_episode(observation))
    except Exception as error:
      raise AgentStepError('begin_episode', int(row), cause=error) from error
    return _action_array(actions)

  def step(self, rewards: np.ndarray, observations: np.ndarray,
           rows: np.ndarray) -> np.ndarray:
    actions: list[Any] = []
    row: Any = None
    try:
      for row, reward, observation in zip(rows, rewards, observations):
        actions.append(self._agents[row].step(float(reward), observation))
    except Exception as error:
      raise AgentStepError('step', int(row), cause=error) from error
    return _action_array(actions)

  def end_episode(self, rewards: np.ndarray, terminals: np.ndarray, rows: np.ndarray) -> None:
    row: Any = None
    try:
      for row, reward, terminal in zip(rows, rewards, terminals):
        self._agents[row].end_episode(float(reward), bool(terminal))
    except Exception as error:
      raise AgentStepError('end_episode', int(row), cause=error) from error

  def set_summary_writer(self, summary_writer: Any) -> None:
    super().set_summary_writer(summary_writer)
    for single in self._agents:
      _call_optional(single, 'set_summary_writer', None, summary_writer)

  def set_mode(self, mode: AgentMode | str) -> None:
    for single in self._agents:
      _call_optional(single, 'set_mode', None, mode)

  def save_checkpoint(self, checkpoint_dir: str, iteration_number: int) -> None:
    for row, single in enumerate(self._agents):
      _call_optional(single, 'save_checkpoint', None,
                     self._row_dir(checkpoint_dir, row), iteration_number)

  def load_checkpoint(self, checkpoint_dir: str, iteration_number: int) -> None:
    for row, single in enumerate(self._agents):
      _call_optional(single, 'load_checkpoint', None,
                     self._row_dir(checkpoint_dir, row), iteration_number)

  def reload_latest_checkpoint(self, checkpoint_dir: str) -> int:
    iterations = [_call_optional(single, 'reload_latest_checkpoint', -1,
                                 self._row_dir(checkpoint_dir, row))
                  for row, single in enumerate(self._agents)]
    return int(min(iterations))

  def _row_dir(self, checkpoint_dir: str, row: int) -> str:
    if len(self._agents) == 1:
      return checkpoint_dir
    directory = os.path.join(checkpoint_dir, f'row_{row}')
    os.makedirs(directory, exist_ok=True)  # BLE's loop hands agents an existing directory.
    return directory


class SingleBalloonAgent(Agent):
  """A `BatchedAgent` behind BLE's single-balloon methods: row `row` of its batch.

  `create_agent` returns batched agents (the `quantile` agent) so wrapped, so that BLE's
  calls work: `begin_episode(observation) -> int`, `step(reward, observation) -> int`,
  `end_episode(reward, terminal)`. `run_training_loop` and `eval_agent` fly
  `batched_agent` itself on a batch of its size (`as_batched`), one call per batch step.
  The optional methods (mode, summary writer, checkpoints, name) go to the batched agent.
  """

  def __init__(self, batched_agent: Any, row: int = 0) -> None:
    """Wraps `batched_agent`; the single-balloon methods act for batch row `row`."""
    check_agent(batched_agent)
    self.batched_agent = batched_agent
    self._rows = np.array([row], np.int64)
    # A batched agent not derived from BatchedAgent may keep no sizes: None then.
    super().__init__(getattr(batched_agent, '_num_actions', None),  # type: ignore[arg-type]
                     getattr(batched_agent, '_observation_shape', None))  # type: ignore[arg-type]

  def get_name(self) -> str:
    return str(_call_optional(self.batched_agent, 'get_name',
                              type(self.batched_agent).__name__))

  def begin_episode(self, observation: np.ndarray) -> int:
    return _one_action(self.batched_agent.begin_episode(
        np.asarray(observation)[None], self._rows))

  def step(self, reward: float, observation: np.ndarray) -> int:
    return _one_action(self.batched_agent.step(
        np.array([reward], np.float64), np.asarray(observation)[None], self._rows))

  def end_episode(self, reward: float, terminal: bool = True) -> None:
    self.batched_agent.end_episode(np.array([reward], np.float64),
                                   np.array([bool(terminal)]), self._rows)

  def set_mode(self, mode: AgentMode | str) -> None:
    if hasattr(self, 'batched_agent'):  # Agent.__init__ sets TRAIN; the batch is set already.
      _call_optional(self.batched_agent, 'set_mode', None, mode)

  def set_summary_writer(self, summary_writer: Any) -> None:
    super().set_summary_writer(summary_writer)
    _call_optional(self.batched_agent, 'set_summary_writer', None, summary_writer)

  def save_checkpoint(self, checkpoint_dir: str, iteration_number: int) -> None:
    _call_optional(self.batched_agent, 'save_checkpoint', None, checkpoint_dir,
                   iteration_number)

  def load_checkpoint(self, checkpoint_dir: str, iteration_number: int) -> None:
    _call_optional(self.batched_agent, 'load_checkpoint', None, checkpoint_dir,
                   iteration_number)

  def reload_latest_checkpoint(self, checkpoint_dir: str) -> int:
    return int(_call_optional(self.batched_agent, 'reload_latest_checkpoint', -1,
                              checkpoint_dir))


def _one_action(actions: Any) -> Any:
  """The one action of a batch of one, as a Python int when it is an integer."""
  action = np.asarray(actions).reshape(-1)[0] if np.size(actions) == 1 else actions
  return int(action) if _is_int(action) else action


def unwrap(agent: Any, batch_size: int) -> Any:
  """The batched agent inside a `SingleBalloonAgent` when it acts for `batch_size` rows,
  else `agent` itself."""
  inner = getattr(agent, 'batched_agent', None) if isinstance(agent, SingleBalloonAgent) else None
  if inner is not None and getattr(inner, 'batch_size', None) == batch_size:
    return inner
  return agent


def is_batched(agent: Any) -> bool:
  """Whether `agent` acts for a batch (`BatchedAgent`, or begin_episode takes rows)."""
  if isinstance(agent, BatchedAgent):
    return True
  begin = getattr(agent, 'begin_episode', None)
  if not callable(begin):
    return False
  try:
    return 'rows' in inspect.signature(begin).parameters
  except (TypeError, ValueError):
    return False


def as_batched(agent: Any) -> BatchedAgent:
  """`agent` as a `BatchedAgent`: itself if batched, else `AgentPerRow([agent])`.

  Raises:
    AgentError: the agent misses a required method (named).
  """
  check_agent(agent)
  return agent if is_batched(agent) else AgentPerRow([agent])


def check_agent(agent: Any) -> Any:
  """Raises `AgentError` naming the first required method `agent` lacks or cannot call."""
  name = type(agent).__name__
  for method in REQUIRED_METHODS:
    if not callable(getattr(agent, method, None)):
      raise AgentError(
          f'agent {name} has no callable {method}(); an agent needs '
          f'{", ".join(REQUIRED_METHODS)} (BLE\'s Agent interface).')
  return agent


def check_actions(actions: Any, rows: Any, num_actions: int, agent_name: str = 'agent',
                  iteration: int | None = None) -> np.ndarray:
  """The actions an agent returned for `rows`, as int64 [R]; else AgentActionError.

  Args:
    actions: what the agent returned: an array or a list, one action per row.
    rows: int array [R], the batch rows (balloons) the actions are for.
    num_actions: actions must be ints in [0, num_actions).
    agent_name: names the agent in the error.
    iteration: the training iteration, named in the error when given.

  Raises:
    AgentActionError: naming the first bad action, its row and the range expected.
  """
  if isinstance(actions, (list, tuple)):
    array = _action_array(actions)
  else:
    array = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
  rows = np.asarray(rows)
  when = '' if iteration is None else f' at iteration {iteration}'

  def refuse(index: int, problem: str) -> NoReturn:
    action = array[index]
    if isinstance(action, (np.ndarray, np.generic)):
      action = action.tolist()  # Shown as the agent's Python value, without NumPy's repr.
    raise AgentActionError(f'{agent_name} returned action {action!r} for balloon (row) '
                           f'{int(rows[index])}{when}: {problem}; expected an int in '
                           f'[0, {num_actions}).', action, int(rows[index]), iteration)

  if array.shape != rows.shape:
    if array.ndim > 1 and len(array) == len(rows) and len(rows):
      refuse(0, f'an array of shape {array.shape[1:]}')
    raise AgentActionError(
        f'{agent_name} returned actions of shape {array.shape} for {len(rows)} balloons '
        f'(rows){when}; expected shape ({len(rows)},), one int in [0, {num_actions}) per '
        'row.', actions, None, iteration)
  if array.dtype.kind not in 'iu':
    values = array.tolist()
    index = next((i for i, value in enumerate(values) if not _is_int(value)), None)
    if index is None:  # Python ints in an object array.
      array = array.astype(np.int64)
    elif np.ndim(values[index]):
      refuse(index, f'an array of shape {np.shape(values[index])}')
    else:
      refuse(index, f'of type {type(values[index]).__name__}')
  outside = (array < 0) | (array >= num_actions)
  if outside.any():
    refuse(int(np.flatnonzero(outside)[0]), 'out of range')
  return array.astype(np.int64, copy=False)


def _is_int(value: object) -> bool:
  return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _action_array(actions: Sequence[Any]) -> np.ndarray:
  """Single agents' actions as one array: int64 when every one is an int, else an object
  array holding them as returned, so that the check names the odd one."""
  if all(_is_int(action) for action in actions):
    return np.array(actions, np.int64)
  array = np.empty(len(actions), object)
  for index, action in enumerate(actions):
    array[index] = action
  return array


def _call_optional(agent: Any, method: str, default: Any, *args: Any) -> Any:
  """`agent.method(*args)` when the agent has it, else `default` (BLE's no-ops)."""
  function = getattr(agent, method, None)
  return function(*args) if callable(function) else default
