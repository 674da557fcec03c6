"""BLE's metric collectors, name for name: what `run_training_loop` reports each episode.

A collector is constructed as `Collector(base_dir, num_actions, current_episode)` and
called, for every episode, `begin_episode()`, `step(statistics)` once per environment
step and `end_episode(statistics)`, between one `pre_training()` and one
`end_training()`; `statistics` is a `StatisticsInstance(step, action, reward, terminal)`.
A collector written for BLE runs here with its imports changed:

    from balloon_learning_environment.metrics import collector           # BLE
    from balloon_learning_environment.metrics import statistics_instance  # BLE
    from agents.python_agents import collectors as collector              # here
    from agents.python_agents import collectors as statistics_instance    # here

`CollectorDispatcher` calls every collector in turn and turns an exception into a
`CollectorError` naming the collector, the call and the episode. Shipped collectors
(`AVAILABLE_COLLECTORS`, by the names BLE's `--collectors` flag takes):

- `console`: BLE's line per episode (return, length, action distribution), followed by the
  environment's episode statistics, through absl's `logging.info` (above the progress bar
  in `run_training_loop`) and in `metrics/console/console.log`;
- `tensorboard`: `Train/EpisodeReward`, `Train/EpisodeLength` and `Train/<statistic>`
  per episode, in `metrics/tensorboard/`;
- `jsonl`: one JSON object per episode in `metrics/jsonl/episodes.jsonl`;
- `pickle`: BLE's per-episode pickle files, only when named (see its risk).

Beyond BLE, the `StatisticsInstance` given to `end_episode` carries
`episode_statistics`: a dict with the episode's `episode` number, `iteration`, `row`
(the balloon of a batch), `length`, `return`, `terminal` and the environment's own
per-episode statistics (for the balloon, `twr50` and the failure flags
`out_of_power_rate`, `envelope_burst_rate`, `zeropressure_rate`, each 0 or 1 for one
episode: `agents.python_agents.episode_statistics`). BLE's collectors ignore it.

Batches: each finished episode is replayed to the collectors as BLE's single-environment
sequence (`begin_episode`, its steps in order, `end_episode`) when it ends; episodes
that end at the same step are replayed in row order. A collector therefore always sees
whole episodes, one at a time, numbered in the order they ended.
"""

from __future__ import annotations

import abc
import dataclasses
import json
import logging
import os
import pickle
from collections.abc import Callable, Sequence
from typing import Any, TextIO, TypeAlias

import numpy as np
from absl import logging as absl_logging

from agents.python_agents.agent import CollectorError

_LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class StatisticsInstance:
  """The statistics of one environment step, passed to every collector (BLE's fields).

  Attributes:
    step: the step's index in its episode (at `end_episode`: the episode's length).
    action: the action taken.
    reward: the reward received.
    terminal: whether the episode reached a terminal state.
    episode_statistics: at `end_episode` only, the episode's statistics (module
      docstring); None otherwise.
  """
  step: int
  action: int
  reward: float
  terminal: bool
  episode_statistics: dict | None = None


class Collector(abc.ABC):
  """BLE's collector interface; `base_dir/metrics/<get_name()>` is created for it."""

  def __init__(self, base_dir: str | None, num_actions: int, current_episode: int) -> None:
    """Prepares the collector's directory.

    Args:
      base_dir: the run's directory, or None (then the collector writes no file).
      num_actions: the number of discrete actions.
      current_episode: the number of the next episode (episodes of earlier iterations
        when the run resumes).
    """
    if base_dir is not None:
      self._base_dir: str | None = os.path.join(base_dir, 'metrics', self.get_name())
      os.makedirs(self._base_dir, exist_ok=True)
    else:
      self._base_dir = None
    self._num_actions = num_actions
    self.current_episode = current_episode
    self.summary_writer: Any = None  # Set by a subclass that has one (see `get_summary_writer`).

  @abc.abstractmethod
  def get_name(self) -> str:
    """A unique name, also the collector's subdirectory."""

  @abc.abstractmethod
  def pre_training(self) -> None:
    """Called once before the first episode."""

  @abc.abstractmethod
  def begin_episode(self) -> None:
    """Called at the start of every episode."""

  @abc.abstractmethod
  def step(self, statistics: StatisticsInstance) -> None:
    """Called after every environment step with its `StatisticsInstance`."""

  @abc.abstractmethod
  def end_episode(self, statistics: StatisticsInstance) -> None:
    """Called at the end of every episode with its last step's `StatisticsInstance`."""

  @abc.abstractmethod
  def end_training(self) -> None:
    """Called once after the last episode (also when training stops early)."""

  def has_summary_writer(self) -> bool:
    """Whether the collector has a summary writer to share with the agent."""
    return self.summary_writer is not None


def episode_line(statistics: StatisticsInstance, action_distribution: Any,
                 episode: int | None, total: float) -> str:
  """BLE's line for a finished episode, `Episode <n>: reward: <total>, episode length: <n>,
  action distribution: <array>`, followed by the episode statistics `statistics` carries
  (its `row`, then the environment's, such as `twr50: 0.250`)."""
  summary = statistics.episode_statistics or {}
  line = (f'Episode {summary.get("episode", episode)}: '
          f'reward: {summary.get("return", total):07.2f}, '
          f'episode length: {statistics.step}, action distribution: {action_distribution}')
  for name, value in summary.items():
    if name not in ('episode', 'return', 'length', 'iteration', 'terminal'):
      line += f', {name}: {value:.3f}' if isinstance(value, float) else f', {name}: {value}'
  return line


class ConsoleCollector(Collector):
  """BLE's console collector: one line per episode through absl's `logging.info` (BLE's
  line), also written to `metrics/console/console.log`.

  `run_training_loop` shows absl's lines above its progress bar; without the bar they show
  where absl's logging goes (on stderr under `absl.app.run`, as in BLE's scripts).
  """

  def __init__(self, base_dir: str | None, num_actions: int, current_episode: int,
               fine_grained_logging: bool = False, fine_grained_frequency: int = 1,
               save_to_file: bool = True) -> None:
    """BLE's arguments; `fine_grained_logging` adds a line every `fine_grained_frequency`
    steps."""
    super().__init__(base_dir, num_actions, current_episode)
    self._log_file = (os.path.join(self._base_dir, 'console.log')
                      if self._base_dir is not None and save_to_file else None)
    self._fine_grained_logging = fine_grained_logging
    self._fine_grained_frequency = fine_grained_frequency
    # As in BLE, `_log_file_writer` exists from `pre_training` (when there is a file), and
    # `_action_counts` and `_current_episode_reward` from `begin_episode`.

  def get_name(self) -> str:
    return 'console'

  def pre_training(self) -> None:
    if self._log_file is not None:
      self._log_file_writer = _LineFile(self._log_file)

  def begin_episode(self) -> None:
    self._action_counts = np.zeros(self._num_actions)
    self._current_episode_reward = 0.0

  def step(self, statistics: StatisticsInstance) -> None:
    self._count(statistics)
    if self._fine_grained_logging and statistics.step % self._fine_grained_frequency == 0:
      self._log(f'Step: {statistics.step}, action: {statistics.action}, reward: '
                f'{statistics.reward}, terminal: {statistics.terminal}\n')

  def end_episode(self, statistics: StatisticsInstance) -> None:
    if statistics.episode_statistics is None:
      # BLE's caller: the last step's statistics count once more, as in BLE. With the
      # episode's statistics (run_training_loop's), every step was counted by `step`.
      self._count(statistics)
    counts = self._action_counts
    distribution = counts / counts.sum() if counts.sum() else counts
    self._log(episode_line(statistics, distribution, self.current_episode,
                           self._current_episode_reward))
    self.current_episode += 1

  def end_training(self) -> None:
    if self._log_file is not None:
      self._log_file_writer.close()

  def _count(self, statistics: StatisticsInstance) -> None:
    if not 0 <= statistics.action < self._num_actions:
      raise ValueError(f'ConsoleCollector: invalid action {statistics.action} at step '
                       f'{statistics.step}; actions are 0 to {self._num_actions - 1}.')
    self._current_episode_reward += float(statistics.reward)
    self._action_counts[statistics.action] += 1

  def _log(self, line: str) -> None:
    absl_logging.info(line)
    if self._log_file is not None:
      self._log_file_writer.write(line)


class _LineFile:
  """The console log, opened for appending (a resumed run keeps its earlier lines): each
  `write(text)` is one line, ended by a newline when `text` has none, and flushed."""

  def __init__(self, path: str) -> None:
    self._file = open(path, 'a', encoding='utf-8')  # noqa: SIM115 - closed by close()

  def write(self, text: str) -> None:
    self._file.write(text if text.endswith('\n') else text + '\n')
    self._file.flush()

  def close(self) -> None:
    self._file.close()


class SummaryWriter:
  """flax's `SummaryWriter` methods over a `tf.summary` file writer, for agents to log to.

  BLE's agents log with `self.summary_writer.scalar(tag, value, step)` and `flush()`
  (flax's interface); agents written with `tf.summary` use
  `with summary_writer.as_default(): tf.summary.scalar(...)`. Both work with this one.
  """

  def __init__(self, log_dir: str) -> None:
    import tensorflow as tf
    self._tf = tf
    self._writer = tf.summary.create_file_writer(log_dir)

  def scalar(self, tag: str, value: Any, step: int) -> None:
    """Logs a scalar (flax's argument order)."""
    with self._writer.as_default():
      self._tf.summary.scalar(tag, float(value), step=int(step))

  def histogram(self, tag: str, values: Any, step: int, bins: int | None = None) -> None:
    """Logs a histogram of `values`."""
    with self._writer.as_default():
      self._tf.summary.histogram(tag, np.asarray(values), step=int(step), buckets=bins)

  def text(self, tag: str, textdata: Any, step: int) -> None:
    """Logs a text."""
    with self._writer.as_default():
      self._tf.summary.text(tag, str(textdata), step=int(step))

  def as_default(self, step: int | None = None) -> Any:
    """The `tf.summary` writer as the default, for `tf.summary` calls inside `with`."""
    return self._writer.as_default(step)

  def flush(self) -> None:
    self._writer.flush()

  def close(self) -> None:
    self._writer.close()


class TensorboardCollector(Collector):
  """Per-episode scalars in TensorBoard: `Train/EpisodeReward`, `Train/EpisodeLength` and
  `Train/<statistic>` for the environment's statistics (`Train/twr50`, ...); with
  `fine_grained_logging`, `Train/FineGrainedReward` every `fine_grained_frequency` steps
  and at each episode's end, as BLE's.

  Its `SummaryWriter` is the one `run_training_loop` gives the agent
  (`set_summary_writer`), as BLE's loop gives flax's. The episode's reward is the
  episode statistics' return when `run_training_loop` gives them; else, as BLE's, the sum
  of the rewards the collector was given, the one at `end_episode` included.
  """

  def __init__(self, base_dir: str | None, num_actions: int, current_episode: int,
               fine_grained_logging: bool = False, fine_grained_frequency: int = 1) -> None:
    if not isinstance(base_dir, str):
      raise ValueError(f'TensorboardCollector needs a base directory, got {base_dir!r}.')
    super().__init__(base_dir, num_actions, current_episode)
    self._fine_grained_logging = fine_grained_logging
    self._fine_grained_frequency = fine_grained_frequency
    assert self._base_dir is not None  # For the type checker: base_dir is a str.
    self.summary_writer = SummaryWriter(self._base_dir)

  def get_name(self) -> str:
    return 'tensorboard'

  def pre_training(self) -> None:
    self._global_step = 0

  def begin_episode(self) -> None:
    self._episode_reward = 0.0

  def step(self, statistics: StatisticsInstance) -> None:
    if self._fine_grained_logging and self._global_step % self._fine_grained_frequency == 0:
      self._fine_grained(statistics)
    self._global_step += 1
    self._episode_reward += statistics.reward

  def end_episode(self, statistics: StatisticsInstance) -> None:
    if self._fine_grained_logging:
      self._fine_grained(statistics)
    self._episode_reward += statistics.reward
    summary = statistics.episode_statistics or {}
    scalars = {'EpisodeReward': summary.get('return', self._episode_reward),
               'EpisodeLength': statistics.step}
    scalars.update({name: value for name, value in summary.items()
                    if name not in ('episode', 'row', 'return', 'length', 'iteration')
                    and isinstance(value, (int, float))})
    for name, value in scalars.items():
      self.summary_writer.scalar(f'Train/{name}', value, self.current_episode)
    self.summary_writer.flush()
    self._global_step += 1
    self.current_episode += 1

  def end_training(self) -> None:
    self.summary_writer.flush()

  def _fine_grained(self, statistics: StatisticsInstance) -> None:
    self.summary_writer.scalar('Train/FineGrainedReward', statistics.reward, self._global_step)
    self.summary_writer.flush()


class JsonLinesCollector(Collector):
  """One JSON object per episode in `metrics/jsonl/episodes.jsonl` (its `episode_statistics`).

  A resumed run first drops the rows of episodes it is about to fly again (those of the
  iteration that was cut short), so every episode appears once.
  """

  FILE_NAME = 'episodes.jsonl'

  def __init__(self, base_dir: str | None, num_actions: int, current_episode: int) -> None:
    if not isinstance(base_dir, str):
      raise ValueError(f'JsonLinesCollector needs a base directory, got {base_dir!r}.')
    super().__init__(base_dir, num_actions, current_episode)
    assert self._base_dir is not None  # For the type checker: base_dir is a str.
    self.path = os.path.join(self._base_dir, self.FILE_NAME)
    self._file: TextIO | None = None

  def get_name(self) -> str:
    return 'jsonl'

  def pre_training(self) -> None:
    self._drop_rows_from(self.current_episode)
    self._file = open(self.path, 'a', encoding='utf-8')  # noqa: SIM115

  def begin_episode(self) -> None:
    pass

  def step(self, statistics: StatisticsInstance) -> None:
    del statistics

  def end_episode(self, statistics: StatisticsInstance) -> None:
    row = dict(statistics.episode_statistics or {
        'episode': self.current_episode, 'length': statistics.step,
        'terminal': statistics.terminal})
    assert self._file is not None, 'end_episode before pre_training'
    self._file.write(json.dumps(row, separators=(',', ':')) + '\n')
    self._file.flush()
    self.current_episode += 1

  def end_training(self) -> None:
    if self._file is not None:
      self._file.close()
      self._file = None

  def _drop_rows_from(self, episode: int) -> None:
    """Rewrites the file without the rows of episodes >= `episode` (atomically)."""
    if not os.path.exists(self.path):
      return
    with open(self.path, encoding='utf-8') as file:
      lines = file.readlines()
    kept = []
    for line in lines:
      try:
        if json.loads(line).get('episode', -1) < episode:
          kept.append(line if line.endswith('\n') else line + '\n')
      except ValueError:
        pass  # A line cut by a kill mid-write.
    if len(kept) == len(lines):
      return
    temporary = f'{self.path}.tmp-{os.getpid()}'
    with open(temporary, 'w', encoding='utf-8') as file:
      file.writelines(kept)
    os.replace(temporary, self.path)


class PickleCollector(Collector):
  """BLE's collector: every episode's `StatisticsInstance`s in `pickle_<episode>.pkl`.

  Only for BLE compatibility, and only when asked for by name (`'pickle'`): loading a
  pickle file runs whatever code the file names, so read these files only if you wrote
  them yourself, never from a run someone sent you. `jsonl` holds the same episodes as
  plain data.
  """

  def __init__(self, base_dir: str | None, num_actions: int, current_episode: int) -> None:
    if base_dir is None:
      raise ValueError('PickleCollector needs a base directory.')
    super().__init__(base_dir, num_actions, current_episode)
    # `_statistics` exists from `begin_episode`, as in BLE.

  def get_name(self) -> str:
    return 'pickle'

  def pre_training(self) -> None:
    pass

  def begin_episode(self) -> None:
    self._statistics: list[StatisticsInstance] = []

  def step(self, statistics: StatisticsInstance) -> None:
    self._statistics.append(statistics)

  def end_episode(self, statistics: StatisticsInstance) -> None:
    self._statistics.append(statistics)
    path = os.path.join(str(self._base_dir), f'pickle_{self.current_episode}.pkl')
    with open(path, 'wb') as file:
      pickle.dump(self._statistics, file, protocol=pickle.HIGHEST_PROTOCOL)
    self.current_episode += 1

  def end_training(self) -> None:
    pass


CollectorConstructor: TypeAlias = Callable[[str | None, int, int], Collector]
"""What builds a collector: `(base_dir, num_actions, current_episode) -> Collector`."""

AVAILABLE_COLLECTORS: dict[str, CollectorConstructor] = {
    'console': ConsoleCollector,
    'jsonl': JsonLinesCollector,
    'pickle': PickleCollector,
    'tensorboard': TensorboardCollector,
}


class CollectorDispatcher:
  """Calls every collector in turn; a collector that raises becomes a `CollectorError`."""

  def __init__(self, base_dir: str | None, num_actions: int,
               collectors: Sequence[CollectorConstructor], current_episode: int) -> None:
    """Constructs the collectors.

    Args:
      base_dir: the run's directory (or None).
      num_actions: the number of discrete actions.
      collectors: constructors `(base_dir, num_actions, current_episode) -> Collector`.
      current_episode: the number of the next episode.
    """
    self._episode = current_episode
    self._collectors = []
    for constructor in collectors:
      try:
        self._collectors.append(constructor(base_dir, num_actions, current_episode))
      except Exception as error:
        raise CollectorError(f'collector {getattr(constructor, "__name__", constructor)!r} '
                             f'raised when constructed: {type(error).__name__}: {error}'
                             ) from error

  @property
  def collectors(self) -> tuple[Collector, ...]:
    """The constructed collectors."""
    return tuple(self._collectors)

  def __len__(self) -> int:
    return len(self._collectors)

  def pre_training(self) -> None:
    self._call('pre_training')

  def begin_episode(self) -> None:
    self._call('begin_episode')

  def step(self, statistics: StatisticsInstance) -> None:
    self._call('step', statistics)

  def end_episode(self, statistics: StatisticsInstance) -> None:
    self._call('end_episode', statistics)
    self._episode += 1

  def end_training(self) -> None:
    self._call('end_training')

  def get_summary_writer(self) -> Any:
    """The first collector's summary writer, or None."""
    for collector in self._collectors:
      if collector.has_summary_writer():
        return collector.summary_writer
    return None

  def record_episode(self, actions: Any, rewards: np.ndarray, terminal: bool,
                     episode_statistics: dict[str, Any] | None) -> None:
    """Replays one finished episode as BLE's loop reports it, to every collector.

    Args:
      actions: int [T], the actions of the episode's T steps.
      rewards: float [T], their rewards.
      terminal: whether the episode ended in a terminal state.
      episode_statistics: the dict given to `end_episode` (module docstring).
    """
    if not self._collectors:
      self._episode += 1
      return
    length = len(actions)
    self.begin_episode()
    actions, rewards = actions.tolist(), rewards.tolist()
    for index in range(length):
      self.step(StatisticsInstance(index, actions[index], rewards[index],
                                   terminal and index == length - 1))
    self.end_episode(StatisticsInstance(length, actions[-1] if length else 0,
                                        rewards[-1] if length else 0.0, terminal,
                                        episode_statistics))

  def _call(self, method: str, *args: Any) -> None:
    for collector in self._collectors:
      try:
        getattr(collector, method)(*args)
      except Exception as error:
        name = _collector_name(collector)
        where = f' at episode {self._episode}' if method in (
            'begin_episode', 'step', 'end_episode') else ''
        raise CollectorError(f'collector {name!r} raised in {method}(){where}: '
                             f'{type(error).__name__}: {error}') from error


def _collector_name(collector: Collector) -> str:
  try:
    return f'{collector.get_name()}' + f' ({type(collector).__name__})'
  except Exception:  # noqa: BLE001 - the name is for the message only
    return type(collector).__name__
