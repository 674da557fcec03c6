"""Flies the seeds of a shard as one batch of environments, and runs shards into a dir.

`fly` is the shard code shared by local runs and Ray tasks: slabs of environments (the
environment's own, e.g. the balloon's `BalloonVectorEnv`, or `gymnasium.make` per seed;
see `environments`) in worker processes (`BatchEnv`), or in this process with
`workers=0`; the policy acts on a whole batch at once. With two workers or more, two
batches (fleets) take turns, so the workers step one while the policy acts on the other.
An environment that finishes its episode is reset at once with the next seed of the
shard, so the batches stay full.

`run_shard` adds the output directory: it refuses another evaluation's results, resumes
from the seeds this shard already finished, and rewrites the shard file as seeds finish.
"""

import os
import time

import numpy as np

from agents.evaluation import environments
from agents.evaluation import policies as policies_lib
from agents.evaluation import results as results_lib
from agents.evaluation import suites as suites_lib
from agents.evaluation.errors import EvaluationError

DEFAULT_SLAB_SIZE = 1024  # environments per worker process: 2 x 1,024 stepped 1.21x 1 x 512
SAVE_EVERY_S = 10.0


def check_sizes(workers, slab_size):
  """Refuses a negative number of workers or a slab of fewer than one environment.

  Raises:
    EvaluationError: naming the value.
  """
  if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
    raise EvaluationError(f'--workers must be an integer >= 0 (0: in this process), got '
                          f'{workers!r}.')
  if isinstance(slab_size, bool) or not isinstance(slab_size, int) or slab_size < 1:
    raise EvaluationError(f'--slab_size must be an integer >= 1, got {slab_size!r}.')


def slab_sizes(num_seeds, workers, slab_size=DEFAULT_SLAB_SIZE):
  """Environments per slab: a batch of min(num_seeds, slabs * slab_size) split evenly."""
  slabs = max(workers, 1)
  batch = min(num_seeds, slabs * slab_size)
  slabs = min(slabs, batch)
  return [batch // slabs + (index < batch % slabs) for index in range(slabs)]


def make_batch(environment, suite, sizes, workers, flight_paths=False, agent=None,
               observation_kwargs=None):
  """A BatchEnv of the environment's slabs: a worker process per slab, or in-process.

  `agent` is the agent flown: a baseline that acts in the slab gets slabs that run it
  (`environments.EnvironmentEvaluation.slab_constructor`). `observation_kwargs` are the
  environment options that shape the observation the agent reads.
  """
  from agents.tools.batch_env import BatchEnv
  from agents.tools.transport import launch
  launch.preload_environment(environment.env_id)
  constructors = [environment.slab_constructor(size, suite.episode_length, suite.options,
                                               flight_paths, agent, observation_kwargs)
                  for size in sizes]
  return BatchEnv.from_slab_constructors(constructors, processes=workers > 0)


class _Episodes:
  """Per-row accumulators of the episodes in flight: return, length, the plug-in's metrics."""

  def __init__(self, batch_size, metrics):
    self.seed = np.full(batch_size, -1, np.int64)
    self.reward = np.zeros(batch_size)
    self.steps = np.zeros(batch_size, np.int64)
    self._metrics = metrics

  def start(self, rows, seeds):
    self.seed[rows] = seeds
    self.reward[rows] = 0.0
    self.steps[rows] = 0
    if self._metrics is not None:
      self._metrics.start(rows)

  def record(self, active, reward, infos):
    self.reward += np.where(active, reward, 0.0)
    self.steps += active
    if self._metrics is not None:
      self._metrics.record(active, reward, infos)

  def result(self, row, infos):
    metrics = {} if self._metrics is None else dict(self._metrics.result(row, infos))
    flight_path = metrics.pop('flight_path', None)
    return results_lib.SeedResult(
        seed=int(self.seed[row]), cumulative_reward=float(self.reward[row]),
        final_timestep=int(self.steps[row]), metrics=metrics, flight_path=flight_path)


class _Fleet:
  """A batch of slabs with its own policy and episodes in flight.

  `fly` runs two fleets in turn when it has the workers: while one fleet's workers step
  (or reset environments for new seeds), this process computes the other fleet's actions, so
  neither side waits for the other.
  """

  def __init__(self, agent, environment, suite, batch, policy, flight_paths, pending):
    self.agent, self.suite, self.batch, self.policy = agent, suite, batch, policy
    self.environment = environment
    self._reset_idle = not environment.steps_finished_episodes
    self.size = len(batch)
    self.episodes = _Episodes(self.size, environment.episode_metrics(
        self.size, suite.episode_length, flight_paths))
    self.active = np.zeros(self.size, bool)
    self.feedback = getattr(policy, 'feedback', None)
    self._pending = pending  # The seeds not yet flown, an iterator shared by all fleets.
    self._observ = None
    self._starting = None  # (rows, seeds) of the reset in flight.
    self._start(np.arange(self.size))

  @property
  def flying(self):
    """Whether an environment of this fleet is still flying or starting."""
    return self._starting is not None or self.active.any()

  def advance(self):
    """Collects the fleet's request in flight and sends the next one.

    Returns:
      (the results of the episodes that ended, the environment steps taken).
    """
    if self._starting is not None:
      self._finish_start()
      self._send_step()
      return [], 0
    observ, reward, terminated, truncated, infos = self.batch.step_wait()
    active = self.active
    self.episodes.record(active, reward, infos)
    steps = int(active.sum())
    if self.feedback is not None:
      self.feedback(reward, terminated & active, truncated & active)
    self._observ = observ
    done = np.flatnonzero(active & (terminated | truncated))
    ended = [self.episodes.result(row, infos) for row in done]
    self.active[done] = False
    # Rows to reset: those that finished a seed, and (for slabs that cannot step a
    # finished episode, such as Gymnasium's) the idle rows whose filler episode ended.
    ending = np.flatnonzero(terminated | truncated) if self._reset_idle else done
    if not (len(ending) and self._start(ending)):
      self._send_step()  # Else the step follows the reset, at the fleet's next turn.
    return ended, steps

  def _start(self, rows):
    """Sends the reset of `rows` for the next seeds (fewer if they run out).

    Rows left without a seed stay idle; when the slabs cannot step a finished episode
    (`_reset_idle`), they are reset unseeded while other rows still fly, and their
    episodes count for nothing.

    Returns:
      Whether a reset was sent.
    """
    seeds = [seed for seed in (next(self._pending, None) for _ in rows) if seed is not None]
    rows = np.asarray(rows)
    idle = rows[len(seeds):] if self._reset_idle and (seeds or self.active.any()) else rows[:0]
    if not seeds and not len(idle):
      return False
    started = rows[:len(seeds)]
    self.batch.reset_async(np.concatenate([started, idle]),
                           self.environment.episode_seeds(seeds) + [None] * len(idle))
    self._starting = (started, seeds, idle)
    return True

  def _finish_start(self):
    started, seeds, idle = self._starting
    self._starting = None
    observ, _ = self.batch.reset_wait()
    if self._observ is None:
      self._observ = np.zeros((self.size,) + observ.shape[1:], observ.dtype)
    self._observ[np.concatenate([started, idle])] = observ
    self.active[started] = True
    self.episodes.start(started, seeds)
    policies_lib.begin_episode(self.policy, started, seeds)

  def _send_step(self):
    if self.active.any():
      self.batch.step_async(policies_lib.check_actions(
          self.policy(self._observ), self.size, self.agent, self.batch.action_space))


def fly(agent, suite, seeds, workers=2, slab_size=DEFAULT_SLAB_SIZE, flight_paths=False,
        checkpoint=None, on_results=None, policy=None, fleets=None, env_id=None,
        observation_kwargs=None):
  """Flies one episode per seed; returns [SeedResult] in the order they finished.

  Args:
    agent: agent spec (see `policies.make_policy`); also names the agent in errors.
    suite: the `Suite` (completed for the environment here).
    seeds: suite seeds to fly.
    workers: worker processes, one slab each; 0 flies one slab in this process.
    slab_size: environments per slab at most.
    flight_paths: keep each seed's flight path.
    checkpoint: for a `run:` agent, the checkpoint (None: latest).
    on_results: optional function called with each list of newly finished results and
      the environment steps taken since the last call.
    policy: an already built batched policy for `agent` (else built here); flies one fleet.
    fleets: how many batches take turns, each with `workers / fleets` of the workers and
      its own policy (see `_Fleet`); default 2 when there are two workers or more and no
      `policy` is given, else 1.
    env_id: the environment (None: the agent's, see `policies.resolve_env_id`; with a
      given `policy`, the default environment).
    observation_kwargs: the environment options that shape the observation (None: the
      agent's, `policies.observation_kwargs`; with a given `policy`, none).

  Returns:
    list of SeedResult.
  """
  check_sizes(workers, slab_size)
  environment = environments.get(env_id or (
      environments.default_env_id() if policy is not None
      else policies_lib.resolve_env_id(agent)))
  if policy is None:
    # A trained agent flies in its own wind unless the suite names one.
    suite = suites_lib.with_defaults(suite, policies_lib.suite_defaults(agent, environment))
  suite = suites_lib.complete(suite, environment)
  seeds = [int(seed) for seed in seeds]
  if not seeds:
    return []
  if fleets is None:
    fleets = 2 if workers >= 2 and policy is None else 1
  if fleets < 1 or (policy is not None and fleets != 1):
    raise ValueError(f'fly: fleets={fleets}; it must be >= 1, and 1 with a given policy.')
  if observation_kwargs is None:
    observation_kwargs = {} if policy is not None else policies_lib.observation_kwargs(
        agent, environment)
  sizes = slab_sizes(len(seeds), workers, slab_size)
  groups = [sizes[index::fleets] for index in range(min(fleets, len(sizes)))]
  build = (lambda batch_size: policy) if policy is not None else (
      policies_lib.policy_builder(agent, suite.episode_length, checkpoint,
                                  environment.env_id))
  policies = [build(sum(group)) for group in groups]
  pending = iter(seeds)
  flying, finished = [], []
  try:
    for group, fleet_policy in zip(groups, policies):
      batch = make_batch(environment, suite, group, workers, flight_paths,
                         None if policy is not None else agent, observation_kwargs)
      try:
        flying.append(_Fleet(agent, environment, suite, batch, fleet_policy, flight_paths,
                             pending))
      except BaseException:
        batch.close()
        raise
    steps_since = 0
    while any(fleet.flying for fleet in flying):
      for fleet in flying:
        if not fleet.flying:
          continue
        new, steps = fleet.advance()
        finished.extend(new)
        steps_since += steps
        if new and on_results is not None:
          on_results(new, steps_since)
          steps_since = 0
  finally:
    for fleet in flying:
      fleet.batch.close()
  return finished


def fly_shard(agent, suite, num_shards, shard_index, workers=0, slab_size=DEFAULT_SLAB_SIZE,
              flight_paths=False, checkpoint=None, skip=(), env_id=None):
  """The results of one shard's seeds (minus `skip`): the unit of work of a Ray task.

  Returns:
    (shard_index, [SeedResult]).
  """
  skip = set(skip)
  seeds = [seed for seed in suite.shard(num_shards, shard_index) if seed not in skip]
  return shard_index, fly(agent, suite, seeds, workers, slab_size, flight_paths, checkpoint,
                          env_id=env_id)


def run_shard(agent, suite, output_dir, num_shards=1, shard_index=0, workers=2,
              slab_size=DEFAULT_SLAB_SIZE, flight_paths=False, checkpoint=None,
              overwrite=False, progress=True, env_id=None):
  """Flies one shard into `output_dir`, resuming from the seeds it already finished.

  `env_id` is the environment (None: the agent's, see `policies.resolve_env_id`).

  Returns:
    the shard's [SeedResult], sorted by seed.

  Raises:
    EvaluationError: bad input (see `policies.make_policy`, `results.check_output_dir`).
  """
  suites_lib.check_shard(num_shards, shard_index)
  env_id = policies_lib.resolve_env_id(agent, env_id)
  suite = suites_lib.complete(suite, environments.get(env_id))
  agent_info = policies_lib.describe_agent(agent, checkpoint)
  header = results_lib.header(agent, suite, num_shards, shard_index, agent_info, env_id)
  os.makedirs(output_dir, exist_ok=True)
  done = results_lib.check_output_dir(output_dir, header, overwrite)
  seeds = suite.shard(num_shards, shard_index)
  finished = {result.seed for result in done}
  todo = [seed for seed in seeds if seed not in finished]
  results = list(done)
  bar = _progress_bar(len(seeds), len(done), f'shard {shard_index}/{num_shards}', progress)
  state = {'saved': time.monotonic(), 'start': time.monotonic(), 'steps': 0}

  def on_results(new, steps):
    results.extend(new)
    state['steps'] += steps
    if bar is not None:
      bar.update(len(new))
      bar.set_postfix_str(
          f'{state["steps"] / max(time.monotonic() - state["start"], 1e-9):,.0f} steps/s')
    if time.monotonic() - state['saved'] > SAVE_EVERY_S:
      results_lib.write_shard(output_dir, header, results, complete=False)
      state['saved'] = time.monotonic()

  try:
    if todo:
      fly(agent, suite, todo, workers, slab_size, flight_paths, checkpoint, on_results,
          env_id=env_id)
  finally:
    if results and len(results) > len(done):
      results_lib.write_shard(output_dir, header, results, complete=len(results) == len(seeds))
    if bar is not None:
      bar.close()
  if not todo:
    results_lib.write_shard(output_dir, header, results, complete=True)
  return sorted(results, key=lambda result: result.seed)


def _progress_bar(total, initial, description, enabled):
  if not enabled:
    return None
  import tqdm
  return tqdm.tqdm(total=total, initial=initial, desc=description, unit='seed',
                   dynamic_ncols=True)
