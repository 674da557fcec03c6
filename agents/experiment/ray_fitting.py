"""Runs fits as Ray tasks, on a local Ray instance or a cluster, with declared CPUs.

Each fit is one Ray task running the same `fitting.run_fit` as a local worker,
declaring `cpus_per_fit` CPUs so Ray never places more fits on a node than it
has cores, and carrying the thread limits in its runtime environment. Progress
comes from the fits' `metrics.jsonl`, so the run directories must be on a file
system the driver sees (always true on one machine; on a cluster, a shared
`output_dir`). Ray is an optional extra: `pip install 'batchppo-agents[ray]'`.
"""

from agents.experiment import fitting
from agents.experiment import threads as threads_lib


class RayMissingError(ImportError):
  """parallelization='ray' was asked for, but Ray is not installed."""


def import_ray():
  """Imports Ray, or raises `RayMissingError` saying how to install it."""
  try:
    import ray
  except ImportError as error:
    raise RayMissingError(
        "parallelization='ray' needs Ray: pip install 'batchppo-agents[ray]'.") from error
  return ray


def ensure_ray(address=None, num_cpus=None):
  """Connects to Ray at `address`, or starts a local instance, unless already connected.

  Ray starts as for an evaluation (`agents.evaluation.ray_runner.init`, the package's
  one start-up of Ray); each fit's task then sets its own thread limits.
  """
  import_ray()  # Says which extra to install when Ray is missing.
  from agents.evaluation import ray_runner
  return ray_runner.init(address, num_cpus)


def _run_fit_task(spec):
  """The Ray task: the same fit as a local worker; errors come back as a FAILED outcome."""
  try:
    return fitting.run_fit(spec)
  except Exception as error:
    return fitting.failure(spec.index, error)


def run_fits_on_ray(specs, max_workers, progress=None, address=None, cpus_per_fit=None,
                    on_outcome=None, poll_seconds=0.5):
  """Runs each fit as a Ray task; returns (outcomes, interrupted) as `run_fits_locally`.

  Args:
    specs: list of `fitting.FitSpec`.
    max_workers: fits submitted at once (Ray also limits them by CPUs).
    progress: optional `FitProgress`.
    address: Ray cluster address; None starts or joins a local instance.
    cpus_per_fit: CPUs each task declares; defaults to the spec's thread count.
    on_outcome: optional callable called with each `FitOutcome`.
    poll_seconds: how often progress is read.
  """
  ray = ensure_ray(address)
  pending = list(specs)
  running = {}
  outcomes = {}
  interrupted = False

  def submit(spec):
    cpus = cpus_per_fit or spec.threads
    task = ray.remote(_run_fit_task).options(
        num_cpus=cpus, max_retries=0,
        runtime_env={'env_vars': threads_lib.environment(spec.threads)})
    running[task.remote(spec)] = spec

  def record(outcome):
    outcomes[outcome.index] = outcome
    if progress is not None:
      if outcome.step is not None:
        progress.finish(outcome.index, outcome.step)
      if outcome.status == fitting.FAILED:
        progress.write(f'fit {outcome.index} failed: {outcome.error.strip().splitlines()[-1]}')
    if on_outcome is not None:
      on_outcome(outcome)

  try:
    while pending or running:
      try:
        if fitting.STOP.is_set():
          raise KeyboardInterrupt
        while pending and len(running) < max_workers:
          submit(pending.pop(0))
        done, _ = ray.wait(list(running), num_returns=1, timeout=poll_seconds)
        for ref in done:
          spec = running.pop(ref)
          try:
            record(ray.get(ref))
          except Exception as error:  # The worker died, or Ray lost the task.
            record(fitting.failure(spec.index, error))
        if progress is not None:
          progress.poll()
      except KeyboardInterrupt:
        interrupted = True
        break
  finally:
    for ref, spec in running.items():
      # The fit's last checkpoint is kept; a later fit() resumes from it.
      ray.cancel(ref, force=True)
      outcomes.setdefault(spec.index, fitting.FitOutcome(spec.index, fitting.INTERRUPTED))
  for spec in pending:
    outcomes.setdefault(spec.index, fitting.FitOutcome(spec.index, fitting.PENDING))
  return outcomes, interrupted
