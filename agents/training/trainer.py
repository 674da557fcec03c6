"""Trains (or resumes) a run: the library side of `python -m agents.scripts.train`.

    from agents import configs
    from agents.training import trainer
    result = trainer.train(configs.resolve('cartpole'), 'logdir/run')

The run directory holds `config.yaml` (the resolved config), `checkpoints/`,
TensorBoard event files under `train/` (and `eval/`), `metrics.jsonl` (the
loop's rows and one 'update' row of the algorithm's `metrics` per update, when
it has them), `run.yaml` (the versions that ran it and its runs in the experiment
trackers of `loop.track`: `agents.run.run_manifest`) and, at the end, `policy/`, the
exported SavedModel (with `loop.select_suite`, also `best_policy/`: `agents.run.export`). A
`run_dir` that holds a checkpoint is resumed: the step budget and the
cadences may differ from its config.yaml (which is then updated); any other
difference is refused before anything is built. Ctrl-C or SIGTERM saves a
checkpoint at the next report and stops; a second one aborts without saving
(`agents.tools.interrupts`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agents import configs, plugins
from agents.run import directory_lock, export, session, tracking
from agents.tools import interrupts
from agents.training import builders

if TYPE_CHECKING:
  import tensorflow as tf

_LOG = logging.getLogger(__name__)


class _StopRequestedError(Exception):
  """Raised between fused calls after Ctrl-C or SIGTERM, so the run can save and stop."""


class _ProgressReporter:
  """Feeds the loop's reports to a tqdm bar and writes update rows to metrics.jsonl."""

  def __init__(self, loop: Any, algorithm: Any, total: int, initial: int, stop_flag: Any,
               quiet: bool = False, suite_evaluators: Sequence[Any] = (),
               statistics: Sequence[str] = (), best_policy: Any = None) -> None:
    import tqdm
    self._loop = loop
    self._suite_evaluators = tuple(suite_evaluators)  # loop.eval_suite, loop.select_suite
    self._best_policy = best_policy  # offered each loop.select_suite value
    self._suite_value = None
    self._suite_metric = None
    self._statistics = tuple(statistics)  # the collectors' names shown beside the score
    self._algorithm = algorithm
    self._stop_flag = stop_flag
    self._updates = algorithm.num_updates
    self._updates_logged = int(self._updates.numpy()) if self._updates is not None else 0
    self._mean_score = None
    self.bar = tqdm.tqdm(total=total, initial=initial, unit='step', dynamic_ncols=True,
                         smoothing=0.1, disable=quiet)

  def __call__(self, row: Mapping[str, Any]) -> None:
    if row['phase'] == 'train':
      self.bar.update(row['step'] - self.bar.n)
    if row['phase'] == 'eval':
      # The eval phase reports once, at its end: fly loop.eval_suite and loop.select_suite.
      for evaluator in self._suite_evaluators:
        value = evaluator(row['step'])[evaluator.metric]
        if evaluator.key == 'select_suite':
          self._best_policy.offer(row['step'], evaluator.suite.name, evaluator.metric, value)
        else:
          self._suite_value, self._suite_metric = value, evaluator.metric
    if row['mean_score'] is not None:
      self._mean_score = row['mean_score']
      # tqdm's own rate is the steps/s; the postfix adds the mean score.
      postfix = {'score': f"{row['mean_score']:.1f}", 'phase': row['phase']}
      for name in self._statistics[:2]:  # the environment's collectors
        if row.get(name) is not None:
          postfix[name] = f'{row[name]:.3f}'
      if self._suite_value is not None:  # loop.eval_suite
        postfix[f'suite_{self._suite_metric}'] = f'{self._suite_value:.3f}'
      self.bar.set_postfix(postfix, refresh=False)
    if self._updates is not None:
      updates = int(self._updates.numpy())
      if updates != self._updates_logged:
        self._updates_logged = updates
        metrics = {name: float(value.numpy())
                   for name, value in self._algorithm.metrics.items()}
        self._loop.metrics.write(dict(step=row['step'], phase='update', updates=updates,
                                      **metrics))
    if self._stop_flag.requested:
      raise _StopRequestedError()

  @property
  def mean_score(self) -> float | None:
    return self._mean_score


def configure_threads(threads: int) -> None:
  """Sets TensorFlow's intra- and inter-op thread pools (0 keeps the default)."""
  import tensorflow as tf
  if not threads:
    return
  try:
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
  except RuntimeError:
    # TensorFlow already started in this process (tests, notebooks); keep its pools.
    _LOG.debug('TensorFlow is initialised; tf_threads=%d is ignored.', threads)


def _build_batch_env(config: configs.RunConfig) -> Any:
  """The run's `BatchEnv`; an environment that refuses its kwargs is a `ConfigError`."""
  from agents.tools import errors
  try:
    return builders.make_batch_env(config)
  except configs.ConfigError:
    raise
  except (TypeError, ValueError, errors.WorkerError) as error:
    if isinstance(error, errors.WorkerError) and error.remote_type not in (
        'TypeError', 'ValueError'):
      raise  # A crash, not a refusal.
    environment = config.environment
    reason = str(error).splitlines()[0]
    raise configs.ConfigError(f'Cannot build {environment.id} with environment.kwargs = '
                              f'{dict(environment.kwargs)}: {reason}') from error


def _build_algorithm(config: configs.RunConfig, batch_env: Any,
                     is_training: tf.Variable) -> Any:
  """The run's algorithm; a network that cannot act in these spaces is a `ConfigError`."""
  try:
    return builders.build_algorithm(config, batch_env.observation_space,
                                    batch_env.action_space, is_training=is_training)
  except ValueError as error:
    raise configs.ConfigError(f'Cannot build {config.algorithm_name} for '
                              f'{config.environment.id}: {error}') from error


def _max_step(loop_config: Any) -> int:
  """The global step at which `loop.steps` training steps are done (eval steps excluded)."""
  train_steps = loop_config.eval_every or loop_config.steps
  cycle = train_steps + (loop_config.eval_steps if loop_config.eval_every else 0)
  full_cycles, rest = divmod(loop_config.steps, train_steps)
  return full_cycles * cycle + rest


SUITE_KEYS = ('eval_suite', 'select_suite')  # the `loop` keys of suites flown in training


def _suite_evaluations(config: configs.RunConfig) -> list[tuple[str, Any]]:
  """The `loop` keys of the suites flown after each evaluation phase, with the factory of
  their evaluator, checked before anything is written; ConfigError when a suite cannot be
  flown for this config.

  Suite evaluation belongs to a layer above the core: it plugs in as
  `plugins.TRAINING_EVALUATORS['suite']` (a class with a static `check(config, key)`,
  built as `(config, algorithm, observation_space, run_dir, metrics, key=key)` and called
  with the step).
  """
  keys = [key for key in SUITE_KEYS if getattr(config.loop, key)]
  if not keys or not config.loop.eval_every:
    return []
  factory = plugins.TRAINING_EVALUATORS.get('suite')
  for key in keys:
    try:
      factory.check(config, key)
    except ValueError as error:
      raise configs.ConfigError(str(error)) from None
  return [(key, factory) for key in keys]


def _collectors(config: configs.RunConfig, batch_size: int,
                extra: Sequence[Callable[[int], Any]]) -> list[Any]:
  """The environment's default episode collectors, then `extra` (factories of batch_size)."""
  from agents.tools import episode_collectors
  defaults = episode_collectors.for_environment(config.environment, batch_size)
  return defaults + [factory(batch_size) for factory in extra]


def train(config: Mapping[str, Any], run_dir: str, quiet: bool = False,
          export_policy: bool = True, collectors: Sequence[Callable[[int], Any]] = (),
          run_name: str | None = None, run_group: str | None = None) -> dict[str, Any]:
  """Trains (or resumes) a run in `run_dir`; returns a summary dict.

  Args:
    config: a config (it is validated again here, before anything is written).
    run_dir: the run directory; created when missing.
    quiet: disable the progress bar.
    export_policy: write the SavedModel `policy/` when training finishes.
    collectors: extra per-episode statistics: callables batch_size ->
      `agents.tools.episode_collectors.EpisodeCollector`; their means join every logged
      row (console, TensorBoard, metrics.jsonl) next to the mean score.
    run_name: the run's name in the experiment trackers of `loop.track`; None names it
      after the run directory.
    run_group: the experiment the trackers file the run under (MLflow's experiment, W&B's
      group); None leaves it to each tracker's default.

  Returns:
    dict(step=..., interrupted=..., mean_score=..., run_dir=..., signal=...), where
    `mean_score` is the run's score as metrics.jsonl holds it (the last logged training
    mean score; every run ends on a logged row) and `signal` names the signal that
    interrupted the run ('SIGINT', 'SIGTERM'), or is None.

  Raises:
    ConfigError: a bad config, or one that a resumed run cannot take.
    DirectoryBusyError: another process is training in `run_dir` (nothing is touched).
  """
  created = not os.path.exists(run_dir)
  try:
    with directory_lock.hold(run_dir, 'training run'):
      return _train(config, run_dir, quiet, export_policy, collectors, run_name, run_group)
  except configs.ConfigError:
    if created and os.path.isdir(run_dir) and not os.listdir(run_dir):
      os.rmdir(run_dir)  # Refused before anything was written: leave no empty folder.
    raise


def _train(config: Mapping[str, Any], run_dir: str, quiet: bool = False,
           export_policy: bool = True, collectors: Sequence[Callable[[int], Any]] = (),
           run_name: str | None = None, run_group: str | None = None) -> dict[str, Any]:
  """`train` inside the hold of its run directory."""
  import tensorflow as tf

  from agents.tools import errors as batch_errors
  from agents.tools import in_graph_batch_env
  from agents.tools import loop as loop_lib
  suite_evaluations = _suite_evaluations(configs.validate(config))
  config = session.prepare_run(config, run_dir)
  loop_config = config.loop
  configure_threads(loop_config.tf_threads)
  tf.random.set_seed(config.seed)
  # Installed before the slow start (workers, tracing): a first signal then
  # stops the run at its first report, with a checkpoint.
  with interrupts.StopRequest() as stop_flag:
    batch_env = loop = None
    status = tracking.FAILED
    try:
      batch_env = _build_batch_env(config)
      env = in_graph_batch_env.InGraphBatchEnv(
          batch_env, seed=config.seed,
          collectors=_collectors(config, len(batch_env), collectors))
      loop = loop_lib.Loop(run_dir)
      placement = batch_env.placement
      loop.metrics.attach(session.start_trackers(config, run_dir, run_name, run_group,
                                         placement and placement.as_record()))
      algorithm = _build_algorithm(config, batch_env, loop.is_training)
      steps_per_call = loop_config.steps_per_call
      batch_steps = config.environment.num_agents * steps_per_call
      train_steps = loop_config.eval_every or loop_config.steps
      loop.add_phase('train', env, algorithm, steps=train_steps, is_training=True,
                     steps_per_call=steps_per_call, log_every=loop_config.log_every,
                     report_every=batch_steps, checkpoint_every=loop_config.checkpoint_every)
      if loop_config.eval_every:
        eval_steps = loop_config.eval_steps
        loop.add_phase('eval', env, algorithm, steps=eval_steps, is_training=False,
                       steps_per_call=steps_per_call, log_every=eval_steps,
                       report_every=eval_steps)
      max_step = _max_step(loop_config)
      initial = loop.restore() or 0
      suite_evaluators = [factory(config, algorithm, batch_env.observation_space, run_dir,
                                  loop.metrics, key=key)
                          for key, factory in suite_evaluations]
      best_policy = export.BestPolicy(run_dir, lambda path, step, notes: export.save_policy(
          algorithm, batch_env.observation_space, path, config=config, run_dir=run_dir,
          step=step, notes=notes))
      statistics = [name for collector in env.collectors for name in collector.totals()]
      reporter = _ProgressReporter(loop, algorithm, max_step, initial, stop_flag, quiet,
                                   suite_evaluators, statistics, best_policy)
      interrupted = False
      try:
        step = loop.run(max_step, on_report=reporter)
      except _StopRequestedError:
        interrupted = True
        step = int(loop.step.numpy())
        loop.log_pending()
        path = loop.save_checkpoint()
        reporter.bar.write(f'Interrupted at step {step}; saved checkpoint {path}.')
      except batch_errors.ClusterLostError as error:
        # The environments are gone with the cluster; the learner is not: keep it.
        error.step = int(loop.step.numpy())
        loop.log_pending()
        error.checkpoint = loop.save_checkpoint()
        raise
      reporter.bar.update(max(0, step - reporter.bar.n))
      reporter.bar.close()
      if export_policy and not interrupted:
        export.save_policy(algorithm, batch_env.observation_space, os.path.join(run_dir, 'policy'),
                    config=config, run_dir=run_dir, step=step)
      status = tracking.INTERRUPTED if interrupted else tracking.FINISHED
      # The score that metrics.jsonl holds, as every reader of the run sees it.
      from agents.run import metrics_writer
      return dict(step=step, interrupted=interrupted,
                  mean_score=metrics_writer.final_score(loop.metrics.path),
                  run_dir=run_dir, signal=stop_flag.signal_name if interrupted else None)
    finally:
      if loop is not None:  # The trackers get the policy and config.yaml, and close.
        loop.metrics.finish(status, _artifacts(run_dir, status))
      if batch_env is not None:
        batch_env.close()


def _artifacts(run_dir: str, status: str) -> list[str]:
  """The trackers' artifacts: config.yaml, and the exported policies of a finished run
  (`policy/`, and `best_policy/` when `loop.select_suite` chose one)."""
  paths = [os.path.join(run_dir, 'config.yaml')]
  if status == tracking.FINISHED:
    paths += [os.path.join(run_dir, 'policy'), os.path.join(run_dir, export.BestPolicy.FOLDER)]
  return [path for path in paths if os.path.exists(path)]
