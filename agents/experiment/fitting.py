"""Runs fits (training runs) in worker processes, several at a time, and collects outcomes.

Each fit is a `FitSpec`: an index, a run directory and a resolved config. The
worker body, `run_fit`, is the same everywhere (local processes, Ray tasks,
in-process profiling): it limits the threads, then trains or resumes the run
through `agents.training.trainer.train`.

`run_fits_locally` starts one `spawn` process per fit, at most `max_workers`
at a time. A fit that raises or dies is reported with its index and the others
go on. Each worker runs in its own process group, so a Ctrl-C in the terminal
reaches only the parent, which forwards one SIGINT to every running fit: each
saves a checkpoint and stops, and no new fit starts. A SIGTERM to the parent
does the same. Should the parent die without a word (SIGKILL), each fit sees it
and stops the same way: no fit outlives its experiment.
"""

import dataclasses
import multiprocessing
import os
import queue as queue_lib
import signal
import sys
import threading
import traceback
from typing import Any

from agents.experiment import threads as threads_lib
from agents.tools import parent_watch

FINISHED = 'finished'
INTERRUPTED = 'interrupted'
FAILED = 'failed'
PENDING = 'pending'


@dataclasses.dataclass
class FitSpec:
  """One fit to run.

  Attributes:
    index: the fit's index in its experiment.
    run_dir: its run directory (resumed when it holds a checkpoint).
    config: the resolved config, its seed and budget included.
    budget: training steps to reach.
    threads: threads each library may use in the worker.
    run_name, run_group: the fit's run name and experiment in the experiment trackers of
      `loop.track` (see `agents.training.train`).
    seed: the fit's seed (an agent class's fit; a config carries its own).
    agent: for a fit of an agent class, its `agent_fitting.AgentFit` (`config` is then
      None); None for a fit of a config.
  """
  index: int
  run_dir: str
  config: dict | None
  budget: int
  threads: int = 1
  run_name: str | None = None
  run_group: str | None = None
  seed: int | None = None
  agent: Any = None


@dataclasses.dataclass
class FitOutcome:
  """What became of a fit.

  Attributes:
    index: the fit's index.
    status: FINISHED, INTERRUPTED, FAILED or PENDING (never started).
    step: the last training step reached (None when unknown).
    mean_score: the last logged mean score (None when unknown).
    error: for a failed fit, the error with its traceback.
    saved_agent: for a fit of an agent class, the path its agent's `save` returned.
  """
  index: int
  status: str
  step: int = None
  mean_score: float = None
  error: str = None
  saved_agent: str = None


def run_fit(spec, quiet=True):
  """Trains (or resumes) one fit in this process; the body of every worker.

  Args:
    spec: the `FitSpec`.
    quiet: no progress bar of its own.

  Returns:
    A `FitOutcome`.
  """
  if 'tensorflow' not in _imported_modules():
    threads_lib.apply(spec.threads)
  if spec.agent is not None:  # An agent class: its fit knows how to run itself.
    return spec.agent.fit_in_worker(spec)
  from agents.training import trainer
  os.makedirs(spec.run_dir, exist_ok=True)
  result = trainer.train(spec.config, spec.run_dir, quiet=quiet, export_policy=True,
                         run_name=spec.run_name, run_group=spec.run_group)
  status = INTERRUPTED if result['interrupted'] else FINISHED
  score = result.get('mean_score')
  return FitOutcome(spec.index, status, int(result['step']),
                    None if score is None else float(score))


def _imported_modules():
  return sys.modules


LOG_NAME = 'fit.log'


def _redirect_output(run_dir):
  """Sends this process's stdout and stderr (TensorFlow's C++ lines too) to `run_dir/fit.log`."""
  os.makedirs(run_dir, exist_ok=True)
  log = os.open(os.path.join(run_dir, LOG_NAME), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
  sys.stdout.flush()
  sys.stderr.flush()
  os.dup2(log, 1)
  os.dup2(log, 2)
  os.close(log)


def accept_stop_requests():
  """Lets SIGINT stop this fit, even if the experiment was started where SIGINT is ignored.

  The parent asks its fits to stop with SIGINT. A process started with SIGINT ignored (a
  shell's `cmd &` without job control, `nohup`) passes the disposition on to the fits it
  spawns, which would then train on through every request to stop.
  """
  signal.signal(signal.SIGINT, signal.default_int_handler)


def _worker_main(spec, results):
  """Entry point of a fit's process: own process group, output to fit.log, then the fit."""
  os.setpgid(0, 0)
  accept_stop_requests()
  # If the experiment process dies (even by SIGKILL), the fit saves and stops as after a
  # Ctrl-C instead of training on as an orphan nobody collects.
  parent_watch.ParentWatch(os.getppid(), lambda: os.kill(os.getpid(), signal.SIGINT)).start()
  _redirect_output(spec.run_dir)
  try:
    outcome = run_fit(spec)
  except KeyboardInterrupt:  # SIGINT before the training loop took over the signal.
    outcome = FitOutcome(spec.index, INTERRUPTED)
  except BaseException as error:  # Reported to the parent with the fit's index.
    outcome = failure(spec.index, error)
  results.put(dataclasses.asdict(outcome))


# Set (e.g. by a SIGINT handler of a search running fits in several threads) to stop
# every running fit as a Ctrl-C would.
STOP = threading.Event()


def run_fits_locally(specs, max_workers, progress=None, context='spawn', on_outcome=None):
  """Runs fits in worker processes, at most `max_workers` at a time.

  Args:
    specs: list of `FitSpec`.
    max_workers: concurrent worker processes.
    progress: optional `FitProgress` polled while waiting.
    context: multiprocessing start method, 'spawn' or 'forkserver'.
    on_outcome: optional callable called with each `FitOutcome` as it arrives
      (e.g. to save the experiment's state after every fit).

  Returns:
    (outcomes, interrupted): a dict of fit index to `FitOutcome` (fits never
    started because of a Ctrl-C are PENDING), and whether a Ctrl-C (or
    `STOP`) stopped the fits, each running one having saved a checkpoint first.
  """
  if context not in ('spawn', 'forkserver'):
    raise ValueError(f"Start method must be 'spawn' or 'forkserver', got {context!r}: "
                     'forking a process that runs TensorFlow can deadlock.')
  check_main_is_importable()
  ctx = multiprocessing.get_context(context)
  results = ctx.Queue()
  pending = list(specs)
  running = {}
  outcomes = {}
  interrupted = False

  def record(outcome):
    outcomes[outcome.index] = outcome
    if progress is not None and outcome.step is not None:
      progress.finish(outcome.index, outcome.step)
    if progress is not None and outcome.status == FAILED:
      last = outcome.error.strip().splitlines()[-1]
      progress.write(f'fit {outcome.index} failed: {last}')
    if on_outcome is not None:
      on_outcome(outcome)

  def drain(timeout):
    try:
      record(FitOutcome(**results.get(timeout=timeout)))
    except queue_lib.Empty:
      return
    while True:
      try:
        record(FitOutcome(**results.get_nowait()))
      except queue_lib.Empty:
        return

  def interrupt():
    if progress is not None:
      progress.write('Interrupted: every running fit saves a checkpoint and stops.')
    for process in running.values():
      if process.pid is not None and process.exitcode is None:
        os.kill(process.pid, signal.SIGINT)

  def reap():
    for index, process in list(running.items()):
      if process.exitcode is None:
        continue
      process.join()
      del running[index]
      drain(0.05)  # Its last message may still be in the pipe.
      if index not in outcomes and process.exitcode == -signal.SIGINT:
        record(FitOutcome(index, INTERRUPTED))
      elif index not in outcomes:
        record(FitOutcome(index, FAILED, error=(
            f'The worker process of fit {index} died with exit code {process.exitcode} '
            'without reporting (killed, or crashed in native code).')))

  previous_sigterm = _sigterm_as_keyboard_interrupt()
  try:
    while pending or running:
      try:
        if STOP.is_set() and not interrupted:
          interrupted = True
          interrupt()
        while pending and len(running) < max_workers and not interrupted:
          spec = pending.pop(0)
          process = ctx.Process(target=_worker_main, args=(spec, results),
                                name=f'fit-{spec.index}')
          process.start()
          running[spec.index] = process
        if interrupted and not running:
          break
        drain(0.25)
        reap()
        if progress is not None:
          progress.poll()
      except KeyboardInterrupt:
        if interrupted:
          raise  # A second Ctrl-C: stop waiting (the finally block ends the workers).
        interrupted = True
        interrupt()
  finally:
    if previous_sigterm is not None:
      signal.signal(signal.SIGTERM, previous_sigterm)
    for process in running.values():
      if process.exitcode is None:
        process.terminate()
      process.join()
    results.close()
  for spec in pending:
    outcomes.setdefault(spec.index, FitOutcome(spec.index, PENDING))
  return outcomes, interrupted


class UnimportableMainError(RuntimeError):
  """The fits' processes could not re-import the script that started them."""


def check_main_is_importable():
  """Refuses to start fit processes that would die re-importing this `__main__`.

  A fit's process is started fresh (spawn) and first re-imports the parent's `__main__`,
  by module name or from its file. A script read from standard input (`python - <<EOF`)
  has neither, so each fit would die before it could report why.

  Raises:
    UnimportableMainError: `__main__` has no module name and no readable file.
  """
  main = sys.modules.get('__main__')
  if main is None or getattr(getattr(main, '__spec__', None), 'name', None):
    return
  path = getattr(main, '__file__', None)
  if path is None or os.path.isfile(path):
    return  # An interactive session: nothing to re-import.
  raise UnimportableMainError(
      f'The fits run in fresh processes that re-import the script that started them, and '
      f'this script ({path}) cannot be re-imported: it was read from standard input. Save '
      "it to a file and run `python file.py`, or fit in this process with "
      "parallelization='inline'.")


def _raise_keyboard_interrupt(signum, frame):
  del signum, frame
  raise KeyboardInterrupt


def _sigterm_as_keyboard_interrupt():
  """Makes SIGTERM act as Ctrl-C while fits run; returns the handler to restore.

  Without it, SIGTERM would end the parent at once and leave its fits running.
  Only the main thread may set handlers (None is returned elsewhere).
  """
  if threading.current_thread() is not threading.main_thread():
    return None
  return signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)


def failure(index, error):
  """A FAILED `FitOutcome` of fit `index` carrying `error` with its traceback."""
  text = ''.join(traceback.format_exception(type(error), error, error.__traceback__))
  return FitOutcome(index, FAILED, error=text)


def run_fits_inline(specs, progress=None, on_outcome=None):
  """Runs fits one after another in this process (debugging, profiling, fast tests).

  The thread limits are not applied (TensorFlow may already run here), and it
  must run in the main thread, where a Ctrl-C reaches the training loop.

  Args:
    specs: list of `FitSpec`.
    progress: optional `FitProgress`.
    on_outcome: optional callable called with each `FitOutcome`.

  Returns:
    (outcomes, interrupted) as `run_fits_locally`.
  """
  outcomes = {}
  interrupted = False
  for spec in specs:
    if interrupted or STOP.is_set():
      outcomes[spec.index] = FitOutcome(spec.index, PENDING)
      continue
    try:
      outcome = run_fit(spec)
    except Exception as error:  # Reported with the fit's index; the next fits go on.
      outcome = failure(spec.index, error)
    interrupted = outcome.status == INTERRUPTED
    outcomes[spec.index] = outcome
    if progress is not None:
      if outcome.step is not None:
        progress.finish(spec.index, outcome.step)
      if outcome.status == FAILED:
        progress.write(f'fit {spec.index} failed: {outcome.error.strip().splitlines()[-1]}')
    if on_outcome is not None:
      on_outcome(outcome)
  return outcomes, interrupted
