"""Fits of an agent class: build or restore the agent, call its `fit`, save it.

A fit of an agent class (rlberry's `agent_class`, see `agent_classes.py`) is a
`fitting.FitSpec` whose `agent` is an `AgentFit`. In a worker process or a Ray task,
`fitting.run_fit` calls `AgentFit.fit_in_worker`, which builds the agent (or restores
the one its last fit saved), fits it and saves it into the run directory, where
`ExperimentManager.get_agent_instances` loads it back. With threads (rlberry's default
parallelization) or inline, `run_agent_fits` keeps the trained agents in memory
instead, so an agent without `save`/`load` can be fitted further and evaluated.

The manager's budget is the total a fit reaches, as for configs; the agent's `fit`
gets what is left (rlberry's `fit(budget)` trains for `budget` more). A fit whose agent
is neither in memory nor restorable starts again from scratch.

After each fit, the rows the agent logged through its `DefaultWriter` are written to
`<run_dir>/writer_data.csv` (`writer_data.WRITER_DATA`), where `get_writer_data` reads them from
whatever process ran the fit.
"""

import concurrent.futures
import dataclasses
import logging
import os
import threading

from agents.experiment import agent_classes, fitting, writer_data
from agents.experiment import writer as writer_lib
from agents.run import metrics_writer

# The file stem an agent's `save` gets in its run directory (rlberry's agents add their
# own extension and return the path).
SAVE_STEM = 'agent'


@dataclasses.dataclass
class AgentFit:
  """What a fit of an agent class needs besides its `FitSpec`.

  Attributes:
    agent_class: the agent class (a BLE one goes through its fit adapter).
    train_env: `(id_or_constructor, kwargs)` of the training environment.
    eval_env: `(id_or_constructor, kwargs)` of the evaluation environment, or None.
    init_kwargs: the constructor's arguments (shared and per-instance, merged).
    fit_kwargs: extra arguments of `fit`.
    done: budget the agent restored from `saved` was already fitted with.
    saved: the path its last `save` returned, or None.
    writer: `(writer_fn, writer_kwargs)`: 'default' keeps the agent's writer, None
      gives it a `writer.NullWriter` (which keeps nothing), a callable makes the one
      `set_writer` gets (`ExperimentManager.set_writer`).
    base_kwargs: what a subclass of `Agent` gets besides (its writer's arguments, ...).
    logging_level: the level of the `agents` logger while the fit runs (None: unchanged).
  """
  agent_class: type
  train_env: tuple
  eval_env: tuple | None
  init_kwargs: dict
  fit_kwargs: dict
  done: int = 0
  saved: str | None = None
  writer: tuple = ('default', None)
  base_kwargs: dict = dataclasses.field(default_factory=dict)
  logging_level: str | int | None = None

  def fit_in_worker(self, spec):
    """The body of a worker process or Ray task (`fitting.run_fit`): returns a `FitOutcome`."""
    return run_agent_fit(spec)[0]


def build_or_restore(spec, instance=None):
  """(agent, budget it was fitted with): `instance`, the saved agent, or a new one."""
  agent_fit = spec.agent
  if instance is not None:
    return instance, agent_fit.done
  env = agent_classes.make_env(agent_fit.train_env, spec.seed)
  common = dict(seed=spec.seed, output_dir=spec.run_dir, eval_env=agent_fit.eval_env,
                base_kwargs=agent_fit.base_kwargs)
  if agent_fit.saved and os.path.exists(agent_fit.saved):
    restored = agent_classes.load(agent_fit.agent_class, agent_fit.saved, env,
                                  agent_fit.init_kwargs, **common)
    if restored is not None:
      return restored, agent_fit.done
  return agent_classes.construct(agent_fit.agent_class, env, agent_fit.init_kwargs,
                                 **common), 0


def run_agent_fit(spec, instance=None):
  """Fits one agent to `spec.budget`; returns (`FitOutcome`, the agent).

  Args:
    spec: a `fitting.FitSpec` with an `AgentFit`.
    instance: the agent of an earlier fit in this process, or None.
  """
  os.makedirs(spec.run_dir, exist_ok=True)
  if spec.agent.logging_level is not None:
    logging.getLogger('agents').setLevel(spec.agent.logging_level)
  agent, done = build_or_restore(spec, instance)
  _set_writer(agent, *spec.agent.writer)
  # What this call adds, passed even when not positive: an agent class's budget is in its
  # own unit (rlberry's tests fit with -1 and 0).
  agent.fit(spec.budget - done, **spec.agent.fit_kwargs)
  write_writer_data(agent, spec.run_dir)
  saved = None
  if callable(getattr(agent, 'save', None)):
    saved = agent.save(os.path.join(spec.run_dir, SAVE_STEM))
    saved = os.fspath(saved) if saved is not None else None
  # The last mean score the fit logged, when it writes a run's metrics.jsonl (a BLE
  # agent class does), as a config's fit reports it.
  metrics = os.path.join(spec.run_dir, 'metrics.jsonl')
  score = metrics_writer.final_score(metrics) if os.path.exists(metrics) else None
  outcome = fitting.FitOutcome(spec.index, fitting.FINISHED, max(done, spec.budget),
                               mean_score=score, saved_agent=saved)
  return outcome, agent


def _set_writer(agent, writer_fn, writer_kwargs):
  if writer_fn == 'default' or not callable(getattr(agent, 'set_writer', None)):
    return
  agent.set_writer(writer_lib.NullWriter() if writer_fn is None
                   else writer_fn(**(writer_kwargs or {})))


def write_writer_data(agent, run_dir):
  """Writes the rows of the agent's `DefaultWriter` to `<run_dir>/writer_data.csv`
  (nothing for an agent without one)."""
  writer = getattr(agent, 'writer', None)
  if not isinstance(writer, writer_lib.DefaultWriter):
    return
  writer.flush()
  path = os.path.join(run_dir, writer_data.WRITER_DATA)
  writer.data.to_csv(path + '.tmp', index=False)
  os.replace(path + '.tmp', path)


def run_agent_fits(specs, max_workers, instances, progress=None, on_outcome=None):
  """Runs fits of an agent class in threads of this process (one at a time when
  `max_workers` is 1, in this thread, where a Ctrl-C reaches a training loop).

  Args:
    specs: list of `fitting.FitSpec` with an `AgentFit`.
    max_workers: threads at once.
    instances: dict of fit index to the agent in memory; updated with the fitted agents.
    progress: optional `FitProgress`.
    on_outcome: optional callable called with each `FitOutcome`.

  Returns:
    (outcomes, interrupted) as `fitting.run_fits_locally`. A Ctrl-C starts no new fit;
    the fits already running in threads finish their `fit` call first.
  """
  outcomes = {}
  lock = threading.Lock()

  def one(spec):
    if fitting.STOP.is_set():
      return fitting.FitOutcome(spec.index, fitting.PENDING)
    try:
      outcome, agent = run_agent_fit(spec, instances.get(spec.index))
    except KeyboardInterrupt:
      return fitting.FitOutcome(spec.index, fitting.INTERRUPTED)
    except Exception as error:  # Reported with the fit's index; the other fits go on.
      instances.pop(spec.index, None)  # Half-fitted: the next fit starts again.
      return fitting.failure(spec.index, error)
    instances[spec.index] = agent
    return outcome

  def record(outcome):
    with lock:
      outcomes[outcome.index] = outcome
      if progress is not None and outcome.step is not None:
        progress.finish(outcome.index, outcome.step)
      if progress is not None and outcome.status == fitting.FAILED:
        progress.write(f'fit {outcome.index} failed: {outcome.error.strip().splitlines()[-1]}')
      if on_outcome is not None:
        on_outcome(outcome)

  interrupted = False
  if max_workers <= 1:
    for spec in specs:
      if interrupted:
        record(fitting.FitOutcome(spec.index, fitting.PENDING))
        continue
      outcome = one(spec)
      interrupted = outcome.status == fitting.INTERRUPTED
      record(outcome)
    return outcomes, interrupted
  with concurrent.futures.ThreadPoolExecutor(max_workers, 'agent-fit') as pool:
    futures = {pool.submit(one, spec): spec for spec in specs}
    try:
      for future in concurrent.futures.as_completed(futures):
        record(future.result())
    except KeyboardInterrupt:
      interrupted = True
      fitting.STOP.set()  # Fits not started yet stay pending.
      for future, spec in futures.items():
        if spec.index not in outcomes:
          record(fitting.FitOutcome(spec.index, fitting.PENDING) if future.cancel()
                 else future.result())
    finally:
      if interrupted:
        fitting.STOP.clear()
  return outcomes, interrupted
