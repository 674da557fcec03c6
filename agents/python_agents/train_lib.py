"""BLE's training loop for agents written in Python, on one environment or a batch.

    from agents.python_agents import collectors, train_lib

    env = gymnasium.make('BalloonLearningEnvironment-v0')      # one balloon, as in BLE
    train_lib.run_training_loop('runs/mine', env, MyAgent(3, (1099,)), num_iterations=20,
                                collector_constructors=[collectors.ConsoleCollector])

    batch = train_lib.make_batch_env('BalloonLearningEnvironment-v0', 64)  # 64 balloons
    train_lib.run_training_loop('runs/batched', batch, my_batched_agent, num_iterations=20)

`run_training_loop` takes BLE's arguments with BLE's meaning. With one Gymnasium
environment it drives the agent exactly as BLE does (`reset`, `begin_episode`, `step`
until the episode ends or `max_episode_length` steps, `end_episode`). With a batch of
environments (`make_batch_env`: worker processes each stepping a slab of balloons, the
project's `BatchEnv`), a `BatchedAgent`, or one single-environment agent per row, acts
for every balloon at once; rows whose episode ended wait until every row has ended, and
the next round resets them all.

An iteration is `episodes_per_iteration` episodes (BLE's 50 by default), counted over
every balloon of a batch: a batch of 10 flies 5 rounds of 10 episodes per iteration, a
batch of 64 one round in which 50 rows fly and 14 wait. A multiple of the batch size
wastes no row.

Where it differs from BLE:
- episodes are seeded: episode seeds follow from `seed` and the iteration, so a resumed
  run flies the episodes the uninterrupted run would have;
- every iteration writes a small record (`checkpoints/iteration_<i>.json`: the agent's
  class, the iteration, the episodes so far) after `agent.save_checkpoint`; a run
  resumes from the newest checkpoint that loads, and refuses a checkpoint directory
  of another agent class (`CheckpointMismatchError`);
- Ctrl-C or SIGTERM cuts the episodes in flight (the agent sees `end_episode(reward,
  terminal=False)`), saves the iteration's checkpoint and stops; a second one aborts
  without saving (`agents.tools.interrupts`, as `train` does);
- bad actions, an agent or collector that raises, and bad arguments are typed errors
  (`agents.python_agents.agent`) naming the culprit; the last checkpoint stays intact;
- a progress bar shows episodes, steps per second and the last iteration's means; absl's
  log lines (the console collector's) print above it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np

from agents.python_agents import agent as agent_lib
from agents.python_agents import collectors as collectors_lib
from agents.python_agents import run_records
from agents.python_agents.collectors import CollectorConstructor
from agents.python_agents.episode_statistics import CollectorStatistics
from agents.python_agents.run_records import read_records
from agents.run import directory_lock
from agents.tools import interrupts
from agents.training import builders

if TYPE_CHECKING:
  from agents.tools.batch_env import BatchEnv

_LOG = logging.getLogger(__name__)
DEFAULT_EPISODES_PER_ITERATION = 50  # BLE's


def get_collector_data(collectors: Sequence[str] | None = None) -> list[CollectorConstructor]:
  """The constructors of the collectors named (BLE's `--collectors` names).

  Raises:
    ValueError: a name is not in `collectors.AVAILABLE_COLLECTORS` (BLE skips it).
  """
  constructors = []
  for name in collectors or ():
    if name not in collectors_lib.AVAILABLE_COLLECTORS:
      raise ValueError(f'unknown collector {name!r}; choose from '
                       f'{sorted(collectors_lib.AVAILABLE_COLLECTORS)}.')
    constructors.append(collectors_lib.AVAILABLE_COLLECTORS[name])
  return constructors


def make_batch_env(env_id: str, num_balloons: int, num_processes: int | None = None, *,
                   max_episode_steps: int | None = None, check_finite: bool = True,
                   processes: int | None = None, ray_address: str | None = None,
                   **env_kwargs: Any) -> BatchEnv:
  """A batch of `num_balloons` environments in worker processes, for `run_training_loop`.

  The balloon (any environment whose vector entry point leaves resets to the caller)
  steps as slabs: each worker process hosts one `BalloonVectorEnv` of about
  `num_balloons / num_processes` balloons. Other environments (CartPole's vector form
  resets by itself) run one `gymnasium.make` per row, grouped the same way.

  Args:
    env_id: a registered Gymnasium id ('BalloonLearningEnvironment-v0').
    num_balloons: the batch size B.
    num_processes: worker processes; None: one per CPU core (at most B); 0: everything in
      this process.
    max_episode_steps: the environment's time limit; None keeps the registered one.
    check_finite: refuse NaN and infinite observations and rewards.
    processes: 'ray' steps each slab in a Ray actor, spread over a cluster's nodes
      (docs/cluster.md); `num_processes` is then the number of actors (None: one per CPU
      of the cluster). None: worker processes as above.
    ray_address: with 'ray', the cluster's address (None: RAY_ADDRESS, or Ray here).
    **env_kwargs: keyword arguments of the environment (e.g. `progress_reward`).

  Returns:
    A `BatchEnv` (close it when done); its `env_id` attribute names the environment.
  """
  if isinstance(num_balloons, bool) or not isinstance(num_balloons, int) or num_balloons < 1:
    raise ValueError(f'num_balloons must be an int >= 1, got {num_balloons!r}.')
  if processes not in (None, 'ray'):
    raise ValueError(f"processes must be None or 'ray', got {processes!r}.")
  if num_processes is None and processes is None:
    num_processes = min(num_balloons, os.cpu_count() or 1)
  if num_processes is not None and (isinstance(num_processes, bool) or not isinstance(
      num_processes, int) or num_processes < (1 if processes else 0)):
    raise ValueError(f'num_processes must be an int >= 0 (0: in this process), got '
                     f'{num_processes!r}.')
  # Registers the project's environments.
  # pylint: disable-next=unused-import
  import agents.env  # noqa: F401, PLC0415
  spec = gymnasium.spec(env_id)
  environment = {
      'id': env_id, 'kwargs': env_kwargs, 'imports': ['agents.env'],
      'max_episode_steps': max_episode_steps, 'num_agents': num_balloons,
      'processes': processes or (num_processes or 0) > 0, 'vector': _steps_as_slab(spec),
      'envs_per_process': -(-num_balloons // max(num_processes, 1)) if num_processes else 0,
      'check_finite': check_finite, 'ray_address': ray_address, 'max_restarts': 0}
  batch = builders.make_batch_env({'environment': environment})
  batch.env_id = env_id
  return batch


def _steps_as_slab(spec: Any) -> bool:
  """Whether the environment's own vector form can be a slab: it must leave resets to us.

  A vector entry point that resets finished environments itself (Gymnasium's CartPole)
  cannot; the balloon's `BalloonVectorEnv` disables autoreset and can.
  """
  if spec.vector_entry_point is None:
    return False
  from gymnasium.envs.registration import load_env_creator  # noqa: PLC0415
  vector_class = load_env_creator(spec.vector_entry_point)
  mode = getattr(vector_class, 'metadata', {}).get('autoreset_mode')
  return mode == gymnasium.vector.AutoresetMode.DISABLED


def run_training_loop(
    base_dir: str, env: Any, agent: Any, num_iterations: int, max_episode_length: int = 960,
    collector_constructors: Sequence[CollectorConstructor] = (), *, render_period: int = 10,
    episodes_per_iteration: int | None = DEFAULT_EPISODES_PER_ITERATION, seed: int | None = 0,
    progress: bool = True) -> dict[str, Any]:
  """Trains `agent` on `env` for `num_iterations` iterations, checkpointing each one.

  Args:
    base_dir: the run's directory: `checkpoints/` (the agent's files and the iteration
      records) and `metrics/<collector>/`.
    env: one Gymnasium environment (BLE's way), a `BatchEnv` (`make_batch_env`), or a
      Gymnasium vector environment with autoreset disabled. The loop does not close it.
    agent: an `Agent` (for one environment), a `BatchedAgent` for the batch, or a list of
      single-environment agents, one per row of the batch.
    num_iterations: the iteration to train up to (a resumed run trains the rest).
    max_episode_length: steps after which an episode is cut (`end_episode(reward,
      terminal=False)`).
    collector_constructors: collector constructors `(base_dir, num_actions,
      current_episode)`, e.g. `[collectors.ConsoleCollector]` or
      `get_collector_data(['console', 'jsonl'])`.
    render_period: steps between `env.render()` calls, for one environment made with a
      `render_mode`.
    episodes_per_iteration: episodes per iteration, over all the balloons (BLE's 50).
      A batch of B flies them in rounds of B episodes, the last round with only as
      many rows as episodes remain; None: one episode per environment (one round).
    seed: episode seeds follow from it and the iteration; None leaves the seeding to
      the environment (BLE's way; then a resumed run flies other episodes).
    progress: show a progress bar.

  Returns:
    dict(iteration=the last iteration saved (-1: none), episodes=episodes so far,
    interrupted=bool, signal='SIGINT' | 'SIGTERM' | None).

  Raises:
    ValueError: `num_iterations`, `max_episode_length`, `render_period` or
      `episodes_per_iteration` is not a positive int (named), before anything is written.
    AgentError: the agent misses a required method, or does not fit the batch.
    AgentActionError: an action is not an int in [0, num_actions) (names the action,
      the balloon (row) and the iteration).
    AgentStepError: the agent raised (names the method, the balloon (row) and the
      iteration); the last checkpoint stays intact.
    CollectorError: a collector raised (names the collector and the episode).
    CheckpointMismatchError: `base_dir` holds the checkpoints of another agent class.
    CheckpointLoadError: no recorded checkpoint loads into the agent.
    DirectoryBusyError: another process trains in `base_dir`.
  """
  for name, value in (('num_iterations', num_iterations),
                      ('max_episode_length', max_episode_length),
                      ('render_period', render_period)):
    _check_positive(name, value)
  if episodes_per_iteration is not None:
    _check_positive('episodes_per_iteration', episodes_per_iteration)
  batch, single_env = _as_batch(env)
  batched_agent, agent_class = _as_batched_agent(agent, len(batch))
  num_actions = _num_actions(batch.action_space)
  episodes_per_iteration = episodes_per_iteration or len(batch)
  checkpoint_dir = os.path.join(base_dir, 'checkpoints')
  with directory_lock.hold(base_dir, 'training run'):
    start_iteration, episodes = run_records.resume(batched_agent, agent_class, checkpoint_dir,
                                        episodes_per_iteration)
    loop = _TrainingLoop(
        base_dir, batch, single_env, batched_agent, agent_class, num_actions,
        max_episode_length, collector_constructors, render_period,
        episodes_per_iteration, seed, episodes)
    return loop.run(start_iteration, num_iterations, progress)


class _TrainingLoop:
  """The state of one `run_training_loop` call: the batch, the agent, the collectors."""

  def __init__(self, base_dir: str, batch: BatchEnv, single_env: gymnasium.Env | None,
               agent: agent_lib.BatchedAgent, agent_class: str, num_actions: int,
               max_episode_length: int, collector_constructors: Sequence[CollectorConstructor],
               render_period: int, episodes_per_iteration: int, seed: int | None,
               episodes: int) -> None:
    self.checkpoint_dir = os.path.join(base_dir, 'checkpoints')
    self.batch, self.single_env, self.agent = batch, single_env, agent
    self.agent_class = agent_class
    self.agent_name = str(agent.get_name())
    self.num_actions = num_actions
    self.max_episode_length = max_episode_length
    self.render_period = render_period
    self.episodes_per_iteration = episodes_per_iteration
    self.seed = seed
    self.episodes = episodes
    self.size = len(batch)
    self.rows = np.arange(self.size)
    env_id = _env_id(batch, single_env)
    self.statistics = CollectorStatistics(env_id, self.size, max_episode_length)
    self.stepping_finished = _steps_finished_episodes(env_id)
    self.dispatcher = collectors_lib.CollectorDispatcher(
        base_dir, num_actions, collector_constructors, episodes)
    self.recording = len(self.dispatcher) > 0
    self.stop: Any = None  # The stop request of a run (interrupts.StopRequest).
    self.iteration: int | None = None
    self.bar: Any = None  # The progress bar (tqdm).
    self.steps = 0
    self._started: Any = None  # The run's start (time.perf_counter()), once it starts.
    self._cut = False
    self.iteration_means: dict[str, float] = {}

  def run(self, start_iteration: int, num_iterations: int, progress: bool) -> dict[str, Any]:
    """Runs the iterations from `start_iteration`, reporting to `progress`."""
    agent = self.agent
    agent.set_summary_writer(self.dispatcher.get_summary_writer())
    agent.set_mode(agent_lib.AgentMode.TRAIN)
    self.dispatcher.pre_training()
    self._started = time.perf_counter()
    saved = start_iteration - 1
    interrupted = False
    finished = False
    try:
      with interrupts.StopRequest() as self.stop:
        self.bar = _progress_bar(num_iterations * self.episodes_per_iteration,
                                 self.episodes, progress)
        with _absl_lines_above(self.bar) if progress else contextlib.nullcontext():
          for iteration in range(start_iteration, num_iterations):
            self.iteration = iteration
            complete = self._fly_iteration(iteration)
            self._save(iteration, complete)
            saved = iteration
            if self.stop.requested:
              interrupted = True
              line = (f'{self.stop.signal_name}: stopped in iteration {iteration} and saved '
                      f'its checkpoint in {self.checkpoint_dir}.')
              if progress:
                self.bar.write(line)
              else:
                _LOG.warning(line)
              break
        finished = True
    finally:
      if self.bar is not None:
        self.bar.close()
      if finished:
        self.dispatcher.end_training()
      else:
        _close_quietly(self.dispatcher)
    return dict(iteration=saved, episodes=self.episodes, interrupted=interrupted,
                signal=self.stop.signal_name if interrupted else None)

  def _fly_iteration(self, iteration: int) -> bool:
    """Flies the iteration's rounds; returns False when a stop request cut it short."""
    rounds = -(-self.episodes_per_iteration // self.size)
    seeds = _episode_seeds(self.seed, iteration, rounds * self.size)
    sums, count = dict[str, float](), 0
    self._cut = False
    for round_index in range(rounds):
      if self.stop.requested:
        self._cut = True
        break
      flown = min(self.size, self.episodes_per_iteration - round_index * self.size)
      ended = self._fly_round(seeds[round_index * self.size:(round_index + 1) * self.size],
                              flown)
      for summary in ended:
        count += 1
        for name, value in summary.items():
          if name not in ('episode', 'iteration', 'row', 'terminal') and isinstance(
              value, (int, float)):
            sums[name] = sums.get(name, 0.0) + value
    self.iteration_means = {name: total / count for name, total in sums.items()} if count else {}
    return not self._cut

  def _fly_round(self, seeds: Sequence[int | None], flown: int) -> list[dict[str, Any]]:
    """One episode in each of the first `flown` rows, from a reset of every row to the
    end of the last episode; the other rows wait (unrecorded, unseen by the agent).

    Returns:
      The summaries of the episodes, in the order they ended.
    """
    size, rows, length = self.size, self.rows, self.max_episode_length
    observ, _ = self.batch.reset(seeds=seeds)
    self.statistics.reset(rows)
    if flown == size:
      actions = np.array(self._act('begin_episode', observ, rows))
    else:
      actions = np.zeros(size, np.int64)
      actions[:flown] = self._act('begin_episode', observ[:flown], rows[:flown])
    active = rows < flown
    returns = np.zeros(size)
    lengths = np.zeros(size, np.int64)
    recorded = (np.zeros((length, size), np.int64), np.zeros((length, size))
                ) if self.recording else None
    summaries = []
    for step in range(length):
      observ, reward, terminated, truncated, infos = self.batch.step(actions)
      if self.single_env is not None and step % self.render_period == 0 and getattr(
          self.single_env, 'render_mode', None) is not None:
        self.single_env.render()
      finished = terminated | truncated  # Including the unrecorded episodes of idle rows.
      reward = reward.astype(np.float64)
      terminated, truncated = terminated & active, truncated & active
      if self.stop.requested and step < length - 1 and (active & ~terminated).any():
        self._cut = True
      if step == length - 1 or self.stop.requested:
        truncated |= active & ~terminated  # Cut here: BLE's loop ends at its length.
      returns += np.where(active, reward, 0.0)
      lengths += active
      if recorded is not None:
        recorded[0][step], recorded[1][step] = actions, reward
      ended = np.flatnonzero(terminated | truncated)
      per_row = self.statistics.step(reward, terminated, truncated, infos, ended)
      if len(ended):
        active[ended] = False
        self._call('end_episode', reward[ended], terminated[ended], ended)
        for row in ended.tolist():
          summaries.append(self._record(row, returns, lengths, terminated, per_row[row],
                                        recorded))
        self._show_progress(len(ended), int(lengths[ended].sum()))
        if not active.any():
          break
        flying = np.flatnonzero(active)
      elif active.all():
        flying = rows
      else:
        flying = np.flatnonzero(active)
      idle_finished = np.flatnonzero(finished & ~active)
      if not self.stepping_finished and len(idle_finished):
        # An environment that cannot step an ended episode flies an unrecorded one.
        observ[idle_finished], _ = self.batch.reset(idle_finished)
      if len(flying) == size:
        actions = np.array(self._act('step', reward, observ, rows))
      else:
        actions[flying] = self._act('step', reward[flying], observ[flying], flying)
    return summaries

  def _act(self, method: str, *args: Any) -> np.ndarray:
    """The agent's actions for `rows` (its last argument), checked."""
    rows = args[-1]
    actions = self._call(method, *args)
    return agent_lib.check_actions(actions, rows, self.num_actions, self.agent_name,
                                   self.iteration)

  def _call(self, method: str, *args: Any) -> Any:
    try:
      return getattr(self.agent, method)(*args)
    except agent_lib.AgentStepError as error:
      raise error.at_iteration(self.iteration) from error.cause
    except Exception as error:
      row = int(args[-1][0]) if self.size == 1 else None
      raise agent_lib.AgentStepError(method, row, self.iteration, error) from error

  def _record(self, row: int, returns: np.ndarray, lengths: np.ndarray,
              terminated: np.ndarray, statistics: Mapping[str, Any],
              recorded: tuple[np.ndarray, np.ndarray] | None) -> dict[str, Any]:
    """Reports the episode that row `row` just ended; returns its summary."""
    length = int(lengths[row])
    summary = {'episode': self.episodes, 'iteration': self.iteration, 'row': row,
               'length': length, 'return': float(returns[row]),
               'terminal': bool(terminated[row]), **statistics}
    if recorded is not None:
      self.dispatcher.record_episode(recorded[0][:length, row], recorded[1][:length, row],
                                     bool(terminated[row]), summary)
    self.episodes += 1
    return summary

  def _save(self, iteration: int, complete: bool) -> None:
    os.makedirs(self.checkpoint_dir, exist_ok=True)
    self.agent.save_checkpoint(self.checkpoint_dir, iteration)
    run_records.write_json(os.path.join(self.checkpoint_dir, f'iteration_{iteration}.json'), {
        'agent_class': self.agent_class, 'agent_name': self.agent_name,
        'iteration': iteration, 'episodes': self.episodes, 'complete': complete,
        'episodes_per_iteration': self.episodes_per_iteration, 'batch_size': self.size,
        'seed': self.seed, 'means': self.iteration_means})
    shown = ['return', *self.statistics.names[:2]]  # The return, then TWR50 and the like.
    postfix = {name: f'{self.iteration_means[name]:.3g}' for name in shown
               if name in self.iteration_means}
    postfix['steps/s'] = f'{self.steps / max(time.perf_counter() - self._started, 1e-9):.0f}'
    self.bar.set_postfix(postfix, refresh=False)

  def _show_progress(self, episodes: int, steps: int) -> None:
    self.steps += steps
    self.bar.update(episodes)


def _progress_bar(total: int, initial: int, enabled: bool) -> Any:
  import tqdm
  return tqdm.tqdm(total=total, initial=initial, unit='episode', dynamic_ncols=True,
                   disable=not enabled)


@contextlib.contextmanager
def _absl_lines_above(bar: Any) -> Iterator[None]:
  """While the progress bar shows, absl's log records (the console collector's episode lines)
  from INFO up are written above it, instead of through absl's or the root logger's
  handlers, which would break the bar; an absl logger set above INFO stays so."""
  logger = logging.getLogger('absl')
  handler = _BarHandler(bar)
  saved = logger.level, logger.propagate
  if logger.level == logging.NOTSET:
    logger.setLevel(logging.INFO)
  logger.propagate = False
  logger.addHandler(handler)
  try:
    yield
  finally:
    logger.removeHandler(handler)
    logger.setLevel(saved[0])
    logger.propagate = saved[1]


class _BarHandler(logging.Handler):
  """Writes a log record above a tqdm bar: its message (`LEVEL: message` above INFO)."""

  def __init__(self, bar: Any) -> None:
    super().__init__(logging.INFO)
    self._bar = bar

  def emit(self, record: logging.LogRecord) -> None:
    try:
      message = record.getMessage().rstrip('\n')
      if record.levelno > logging.INFO:
        message = f'{record.levelname}: {message}'
      self._bar.write(message)
    except Exception:  # noqa: BLE001 - logging's convention: report, never raise
      self.handleError(record)


def _close_quietly(dispatcher: collectors_lib.CollectorDispatcher) -> None:
  """Closes the collectors' files after an error, keeping the error that is raised."""
  try:
    dispatcher.end_training()
  except Exception:  # noqa: BLE001 - the error already propagating is the one to report
    _LOG.debug('end_training after an error raised too.', exc_info=True)


def _check_positive(name: str, value: Any) -> None:
  if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
    raise ValueError(f'{name} must be a positive int, got {value!r}.')


def _as_batch(env: Any) -> tuple[BatchEnv, gymnasium.Env | None]:
  """(the environment as a `BatchEnv`, the single Gymnasium env or None)."""
  from agents.tools.batch_env import BatchEnv
  if isinstance(env, BatchEnv):
    return env, None
  if isinstance(env, gymnasium.vector.VectorEnv):
    return BatchEnv([env]), None
  if isinstance(env, gymnasium.Env):
    return BatchEnv([_with_spaces(env)]), env
  raise TypeError(f'env must be a gymnasium.Env, a BatchEnv (make_batch_env) or a '
                  f'gymnasium VectorEnv, got {type(env).__name__}.')


def _with_spaces(env: Any) -> Any:
  """`env`, or, when its spaces are not Gymnasium's (BLE's loop reads only
  `action_space.n`), `env` wrapped with Gymnasium spaces: `Discrete(action_space.n)` and
  the Box of its observations' shape and dtype, read from one `reset()`.

  Raises:
    TypeError: observations that are not arrays of numbers (the batch holds arrays).
  """
  has_observations = isinstance(getattr(env, 'observation_space', None), gymnasium.Space)
  has_actions = isinstance(getattr(env, 'action_space', None), gymnasium.Space)
  if has_observations and has_actions:
    return env
  wrapped = gymnasium.Wrapper(env)
  if not has_actions:
    wrapped.action_space = gymnasium.spaces.Discrete(_num_actions(env.action_space))
  if not has_observations:
    observation = np.asarray(env.reset()[0])
    if observation.dtype.kind not in 'biuf':
      raise TypeError(f'run_training_loop: {type(env).__name__} declares no '
                      f'observation_space and its observations are not arrays of numbers '
                      f'(got {observation!r}); declare its observation_space.')
    wrapped.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, observation.shape,
                                                     observation.dtype)
  return wrapped


def _as_batched_agent(agent: Any, batch_size: int) -> tuple[agent_lib.BatchedAgent, str]:
  """(a `BatchedAgent` for a batch of `batch_size`, the name of the agent's class).

  A `SingleBalloonAgent` (`create_agent`'s `quantile`) whose batched agent has
  `batch_size` rows is flown as that batched agent, one call per batch step.
  """
  agent = agent_lib.unwrap(agent, batch_size)
  if isinstance(agent, (list, tuple)):
    batched: agent_lib.BatchedAgent = agent_lib.AgentPerRow(agent)
    agent_class = type(agent[0]).__qualname__
  elif agent_lib.is_batched(agent):
    batched = agent_lib.check_agent(agent)
    agent_class = type(agent).__qualname__
  else:
    batched = agent_lib.as_batched(agent)
    agent_class = type(agent).__qualname__
  size = getattr(batched, 'batch_size', batch_size)
  if size != batch_size:
    single = '' if agent_lib.is_batched(agent) or isinstance(agent, (list, tuple)) else (
        '; a single-environment agent flies one environment: pass one agent per row '
        '(a list) or a BatchedAgent')
    raise agent_lib.AgentError(f'the agent acts for {size} rows but the batch has '
                               f'{batch_size} environments{single}.')
  return batched, agent_class


def _num_actions(space: Any) -> int:
  """The number of actions of a Discrete space starting at 0, or of any space with an
  integer `n` (BLE's loop reads only `action_space.n`)."""
  number = getattr(space, 'n', None)
  if (isinstance(number, bool) or not isinstance(number, (int, np.integer))
      or getattr(space, 'start', 0) != 0):
    raise TypeError(f'run_training_loop needs a Discrete action space starting at 0 (BLE\'s '
                    f'agents return an int action), got {space}.')
  return int(space.n)


def _env_id(batch: BatchEnv, single_env: gymnasium.Env | None) -> str | None:
  env_id = getattr(batch, 'env_id', None)
  if env_id is None and single_env is not None and single_env.spec is not None:
    env_id = single_env.spec.id
  return env_id


def _steps_finished_episodes(env_id: str | None) -> bool:
  """Whether the environment may step an ended episode (the balloon's may: it stays put)."""
  if env_id is None:
    return False
  from agents.evaluation import environments
  return environments.get(env_id).steps_finished_episodes


def _episode_seeds(seed: int | None, iteration: int, count: int) -> list[int | None]:
  """The episode seeds of an iteration: a function of (seed, iteration) only."""
  if seed is None:
    return [None] * count
  return np.random.default_rng([seed, iteration]).integers(0, 2 ** 31 - 1, count).tolist()


__all__ = ['DEFAULT_EPISODES_PER_ITERATION', 'get_collector_data', 'make_batch_env',
           'read_records', 'run_training_loop']
