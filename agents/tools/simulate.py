"""The fused step: environments and algorithm advanced together inside one graph call.

One environment step of `simulate` does, for the whole batch:

1. reset the environments whose episode ended at the previous step (all of
   them when `reset` is True) and call `algorithm.begin_episode` for them;
2. `algorithm.perform` on the current observations, then step the
   environments with the chosen actions;
3. `algorithm.experience` with the transition, terminated and truncated kept
   apart;
4. `algorithm.end_episode` for the environments whose episode just ended
   (this is where an algorithm may run its whole update);
5. add the reward to each environment's running score and length, and add the
   finished episodes to the running totals of `EpisodeStatistics`.

`simulate` repeats this `steps` times in a `tf.while_loop`, so one call of the
surrounding `tf.function` (TF2's equivalent of BatchPPO's session call) can
amortise its fixed cost over several environment steps. `begin_episode` and
`end_episode` are only called with non-empty `agent_indices`.

`FusedStep` wraps `simulate` in a `tf.function` with a fixed input signature,
so it traces once and is reused for every call whatever `reset` and `steps`
are. Because the algorithm is traced into that function, it must create all
its variables in its constructor (Keras optimisers included: build them before
the first call); `FusedStep` checks this on its first call and names any
variable created while tracing.

Summaries: the algorithm may write `tf.summary` ops inside its methods. They
are traced at the root name scope, so a scalar named 'loss' is tagged 'loss'
rather than carrying the while-loop and cond scopes of the step. `FusedStep`
runs them under the summary writer, step and recording condition it is given
(the `Loop` passes its global step and its should-log flag). The episode
statistics themselves are written by the `Loop`, at its log cadence.
"""

from __future__ import annotations

import collections
import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import tensorflow as tf

from agents.tools import callable_module

if TYPE_CHECKING:
  from agents.tools.in_graph_batch_env import InGraphBatchEnv

SimulateResult = collections.namedtuple('SimulateResult', 'done, score, length, episodes')
SimulateResult.__doc__ = """What one `simulate` call leaves behind.

Attributes:
  done: bool [B], the episode of the environment ended at the last step; it is
    reset at the next step.
  score: float32 [B], each environment's running return; for a done
    environment, the return of the episode that just ended.
  length: int32 [B], each environment's running episode length, likewise.
  episodes: int32 scalar, number of episodes that ended during the call.
"""


class EpisodeStatistics(tf.Module):
  """Per-environment running score and length, and totals over finished episodes.

  Attributes:
    score: float32 Variable [B], running return of each environment's episode.
    length: int32 Variable [B], running length of each environment's episode.
    episodes, score_sum, length_sum: Variables with the number of finished
      episodes and the sums of their returns (float64) and lengths.

  The totals only grow; a reader takes the mean over an interval as the
  difference of two `totals()` snapshots, so several readers (log and report
  cadences) never reset each other's means. Episodes cut off by a forced reset
  are not counted.
  """

  def __init__(self, batch_size: int, name: str = 'episode_statistics') -> None:
    """Creates the variables.

    Args:
      batch_size: number of environments B.
      name: module name.
    """
    super().__init__(name=name)
    self.score = tf.Variable(tf.zeros([batch_size], tf.float32), trainable=False, name='score')
    self.length = tf.Variable(tf.zeros([batch_size], tf.int32), trainable=False, name='length')
    self.episodes = tf.Variable(tf.constant(0, tf.int64), trainable=False, name='episodes')
    # Float64 so that millions of summed returns keep their precision.
    self.score_sum = tf.Variable(tf.constant(0, tf.float64), trainable=False, name='score_sum')
    self.length_sum = tf.Variable(tf.constant(0, tf.int64), trainable=False, name='length_sum')

  # The graph methods are plain ops: autograph need not rewrite them (a faster first trace).
  @tf.autograph.experimental.do_not_convert
  def begin(self, agent_indices: tf.Tensor) -> tf.Operation:
    """Zeroes the running score and length of the given environments (graph)."""
    scatter_indices = agent_indices[:, None]
    count = tf.shape(agent_indices)[:1]
    return tf.group(self.score.scatter_nd_update(scatter_indices, tf.zeros(count, tf.float32)),
                    self.length.scatter_nd_update(scatter_indices, tf.zeros(count, tf.int32)))

  @tf.autograph.experimental.do_not_convert
  def record(self, reward: tf.Tensor) -> tf.Operation:
    """Adds one step with the given rewards [B] to every environment (graph)."""
    return tf.group(self.score.assign_add(reward, read_value=False),
                    self.length.assign_add(tf.ones_like(self.length), read_value=False))

  @tf.autograph.experimental.do_not_convert
  def finish(self, agent_indices: tf.Tensor) -> tf.Operation:
    """Adds the episodes of the given environments to the totals (graph)."""
    return tf.group(
        self.episodes.assign_add(tf.cast(tf.size(agent_indices), tf.int64), read_value=False),
        self.score_sum.assign_add(
            tf.reduce_sum(tf.cast(tf.gather(self.score, agent_indices), tf.float64)),
            read_value=False),
        self.length_sum.assign_add(
            tf.reduce_sum(tf.cast(tf.gather(self.length, agent_indices), tf.int64)),
            read_value=False))

  def totals(self) -> tuple[int, float, int]:
    """Returns (episodes, score_sum, length_sum) as Python numbers (eager)."""
    return int(self.episodes.numpy()), float(self.score_sum.numpy()), int(self.length_sum.numpy())


def simulate(batch_env: InGraphBatchEnv, algorithm: Any, episodes: EpisodeStatistics,
             steps: int | tf.Tensor = 1, reset: bool | tf.Tensor = False,
             global_step: tf.Variable | None = None) -> SimulateResult:
  """Runs `steps` fused environment steps. Graph-compatible; call inside a `tf.function`.

  Args:
    batch_env: an `InGraphBatchEnv`.
    algorithm: an `InGraphAlgorithm` (or any object with its four methods).
    episodes: the `EpisodeStatistics` of this batch.
    steps: int32 scalar tensor or int, number of environment steps to run.
    reset: bool scalar tensor or bool; True resets every environment (and
      begins a new episode for each) at the first step, abandoning unfinished
      episodes; they are not counted in the totals.
    global_step: optional int64 Variable, increased by B every environment step.

  Returns:
    A `SimulateResult`.
  """
  batch_size = len(batch_env)
  all_indices = tf.range(batch_size)
  reset = tf.convert_to_tensor(reset, tf.bool)
  steps = tf.convert_to_tensor(steps, tf.int32)

  # Environments run in Python through stateful ops that share no resource with
  # the algorithm (nor do a mock's recorders, or an algorithm whose action ignores
  # the observation), so TensorFlow's automatic control dependencies alone would
  # not order them. Each stage is therefore built under explicit control
  # dependencies on the one before.
  def begin_episodes(indices: tf.Tensor) -> tf.Tensor:
    observ = batch_env.reset(indices)
    with tf.control_dependencies([observ]):
      began = [episodes.begin(indices)]
      with _root_scope():
        began.append(algorithm.begin_episode(indices))
    with tf.control_dependencies(_as_dependencies(began)):
      return tf.size(indices) > 0

  def end_episodes(indices: tf.Tensor) -> tf.Tensor:
    with _root_scope():
      ended = [algorithm.end_episode(indices)]
    ended.append(episodes.finish(indices))
    with tf.control_dependencies(_as_dependencies(ended)):
      return tf.size(indices) > 0

  def one_step(step_index: tf.Tensor, ended_count: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    with tf.name_scope('begin_episode'):
      force_reset = tf.logical_and(reset, tf.equal(step_index, 0))
      begin_indices = _where(tf.logical_or(batch_env.done, force_reset))
      began = tf.cond(tf.size(begin_indices) > 0, lambda: begin_episodes(begin_indices),
                      lambda: tf.constant(False))
    with tf.name_scope('perform'), tf.control_dependencies([began]):
      observ = batch_env.observ.read_value()
      with _root_scope():
        action = algorithm.perform(all_indices, observ)
      stepped = batch_env.simulate(action)
    with tf.name_scope('experience'), tf.control_dependencies(stepped):
      taken_action = batch_env.action.read_value()
      reward = batch_env.reward.read_value()
      terminated = batch_env.terminated.read_value()
      truncated = batch_env.truncated.read_value()
      next_observ = batch_env.observ.read_value()
      with _root_scope():
        experienced = [algorithm.experience(all_indices, observ, taken_action, reward,
                                            terminated, truncated, next_observ)]
      experienced.append(episodes.record(reward))
    with tf.name_scope('end_episode'), tf.control_dependencies(_as_dependencies(experienced)):
      end_indices = _where(tf.logical_or(terminated, truncated))
      ended = tf.cond(tf.size(end_indices) > 0, lambda: end_episodes(end_indices),
                      lambda: tf.constant(False))
    with tf.control_dependencies([ended]):
      if global_step is not None:
        global_step.assign_add(tf.constant(batch_size, global_step.dtype))
      return step_index + 1, ended_count + tf.size(end_indices)

  with tf.name_scope('simulate'):
    _, ended = tf.while_loop(lambda step_index, _: step_index < steps, one_step,
                             (tf.constant(0), tf.constant(0)), name='environment_steps')
    return SimulateResult(batch_env.done.read_value(), episodes.score.read_value(),
                          episodes.length.read_value(), ended)


class FusedStep:
  """`simulate` compiled once as a `tf.function`; call it eagerly, as often as needed.

  Attributes:
    batch_env: the `InGraphBatchEnv`.
    algorithm: the algorithm.
    episodes: the `EpisodeStatistics` the step updates.
    trace_count: how many times TensorFlow traced the step (1 after any
      number of calls, whatever their `reset` and `steps`).
  """

  def __init__(self, batch_env: InGraphBatchEnv, algorithm: Any,
               episodes: EpisodeStatistics | None = None, global_step: tf.Variable | None = None,
               summary_writer: Any = None, should_log: tf.Variable | None = None) -> None:
    """Binds the batch, the algorithm and the statistics into one traced function.

    Args:
      batch_env: an `InGraphBatchEnv`.
      algorithm: an `InGraphAlgorithm` whose variables all exist already.
      episodes: `EpisodeStatistics` to use; None creates one.
      global_step: optional int64 Variable, increased by B per environment step
        and used as the step of the algorithm's summaries.
      summary_writer: optional `tf.summary` writer for the algorithm's summaries.
      should_log: optional bool Variable; summaries are recorded while it is
        True (read inside the graph, so changing it needs no retrace).
    """
    self.batch_env = batch_env
    self.algorithm = algorithm
    self.episodes = episodes if episodes is not None else EpisodeStatistics(len(batch_env))
    self._global_step = global_step
    self._summary_writer = summary_writer
    self._should_log = should_log
    self.trace_count = 0
    self._created_while_tracing: list[Any] = []
    # A partial, not the bound method: TensorFlow counts the traces of every function with
    # the same code together, so the steps of a process that builds several (tests, an
    # inline search of short fits) would be reported as retracing one function.
    self._function = tf.function(functools.partial(FusedStep._run, self), input_signature=(
        tf.TensorSpec([], tf.bool, name='reset'), tf.TensorSpec([], tf.int32, name='steps')))

  def __call__(self, reset: bool = False, steps: int = 1) -> SimulateResult:
    """Runs `steps` fused environment steps.

    Args:
      reset: reset every environment at the first step.
      steps: number of environment steps (per environment) to run.

    Returns:
      A `SimulateResult` of eager tensors.

    Raises:
      RuntimeError: the algorithm created variables while being traced.
      Exception: whatever the batch environment raised (e.g. `ActionError`,
        `WorkerDiedError`), re-raised with its own type.
      tf.errors.OpError: any other failure inside the graph.
    """
    try:
      with _without_arithmetic_optimization():
        result = self._function(reset, steps)
    except tf.errors.OpError as op_error:
      # Give back the environment's own exception (ActionError, WorkerDiedError,
      # ...) rather than TensorFlow's wrapper, which keeps only its text.
      original = self.batch_env.pop_python_error()
      if original is not None:
        raise original from op_error
      raise
    if self._created_while_tracing:
      raise RuntimeError(
          f'{type(self.algorithm).__name__} created variables while the fused step was traced: '
          f'{self._created_while_tracing}. Create every variable in the constructor (build '
          'Keras optimisers there too) so that checkpoints restore them and the step is traced '
          'once.')
    return result

  def _run(self, reset: tf.Tensor, steps: tf.Tensor) -> SimulateResult:
    # Runs in Python only when TensorFlow traces; counting here counts traces.
    self.trace_count += 1
    with tf.variable_creator_scope(self._record_creation):
      return self._simulate(reset, steps)

  def _record_creation(self, next_creator: Callable[..., Any], **kwargs: Any) -> tf.Variable:
    variable = next_creator(**kwargs)
    self._created_while_tracing.append(variable.name)
    return variable

  def _simulate(self, reset: tf.Tensor, steps: tf.Tensor) -> SimulateResult:
    step = self._global_step
    if self._summary_writer is None:
      return simulate(self.batch_env, self.algorithm, self.episodes, steps, reset, step)
    should_log = self._should_log
    condition = (lambda: should_log.read_value()) if should_log is not None else True
    with self._summary_writer.as_default(step=step), tf.summary.record_if(condition):
      return simulate(self.batch_env, self.algorithm, self.episodes, steps, reset, step)


@contextlib.contextmanager
def _without_arithmetic_optimization() -> Iterator[None]:
  """Turns off Grappler's arithmetic optimiser for the fused step's calls only.

  Its AddOpsRewrite turns sums of gradients inside an algorithm's update loops
  into accumulators with temporary variables. Nested in the fused step's
  while-loop, two iterations in flight can create the same temporary, and the
  step dies with `AlreadyExistsError` (seen with BatchPPO on the balloon with
  32 agents in worker processes; it depends on timing). The rewrite saves little
  here, so it is off for this function. Grappler reads the option when a
  function is instantiated for a call, and keeps that instance for later calls
  with the same options, so setting it around the call and restoring it after
  leaves every other function of the process optimised as before.
  """
  before = tf.config.optimizer.get_experimental_options().get('arithmetic_optimization')
  if before is False:
    yield
    return
  tf.config.optimizer.set_experimental_options({'arithmetic_optimization': False})
  try:
    yield
  finally:
    # TensorFlow offers no way to unset an option; True is its default (on).
    tf.config.optimizer.set_experimental_options({'arithmetic_optimization': True})


def _root_scope() -> Any:
  """Runs algorithm code at the root name scope, so its summary tags carry no simulate prefix."""
  return tf.name_scope('')


@tf.autograph.experimental.do_not_convert
def _where(mask: tf.Tensor) -> tf.Tensor:
  return tf.cast(tf.where(mask)[:, 0], tf.int32)


def _as_dependencies(results: Iterable[Any]) -> list[Any]:
  """Keeps the ops and tensors among what the methods returned, for control dependencies."""
  dependencies = []
  for result in tf.nest.flatten(results):
    if isinstance(result, tf.Operation):
      dependencies.append(result)
    elif tf.is_tensor(result) or isinstance(result, tf.Variable):
      try:
        dependencies.append(result.op)
      except AttributeError:  # Eager tensors have no op; eager code needs no ordering.
        pass
  return dependencies




# BatchPPO's `tools.simulate(batch_env, algorithm, ...)`: the module answers a call as
# its function `simulate` (one copy; `from agents.tools import simulate` stays the module).
callable_module.make_callable(__name__, 'simulate')
