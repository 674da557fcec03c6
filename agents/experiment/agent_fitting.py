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
"""

import concurrent.futures
import dataclasses
import os
import threading

from agents.experiment import agent_classes, fitting
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
  """
  agent_class: type
  train_env: tuple
  eval_env: tuple | None
  init_kwargs: dict
  fit_kwargs: dict
  done: int = 0
  saved: str | None = None

  def fit_in_worker(self, spec):
    """The body of a worker process or Ray task (`fitting.run_fit`): returns a `FitOutcome`."""
    return run_agent_fit(spec)[0]


def build_or_restore(spec, instance=None):
  """(agent, budget it was fitted with): `instance`, the saved agent, or a new one."""
  agent_fit = spec.agent
  if instance is not None:
    return instance, agent_fit.done
  env = agent_classes.make_env(agent_fit.train_env, spec.seed)
  common = dict(seed=spec.seed, output_dir=spec.run_dir, eval_env=agent_fit.eval_env)
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
  agent, done = build_or_restore(spec, instance)
  if spec.budget > done:
    agent.fit(spec.budget - done, **spec.agent.fit_kwargs)
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
