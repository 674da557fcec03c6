"""Runs the shards of an evaluation as Ray tasks (a local instance by default).

Each task runs `runner.fly_shard`, the same shard code as a local run, with its slab in
the task's own process; the driver writes each shard's file as its task returns, so a
killed evaluation resumes from the shards (and seeds) already written.

Ray is an optional extra: `pip install -e '.[ray]'`.
"""

import os
import time

from agents.evaluation import environments, runner
from agents.evaluation import policies as policies_lib
from agents.evaluation import results as results_lib
from agents.evaluation import suites as suites_lib
from agents.evaluation.errors import EvaluationError

INSTALL_HINT = ("Ray is not installed; install it with `pip install -e '.[ray]'` (or "
                "`pip install 'ray>=2.9'`) to use --ray.")


def import_ray():
  """The `ray` module, or an EvaluationError telling what to install."""
  try:
    import ray
  except ImportError:
    raise EvaluationError(INSTALL_HINT) from None
  return ray


def init(address=None, num_cpus=None):
  """Connects to the cluster at `address`, or starts a local instance; returns ray.

  Ray starts as for every other use in the package (`agents.tools.ray_cluster.init`):
  workers get one BLAS thread each and this process's PYTHONPATH.
  """
  import_ray()  # Says what to install when Ray is missing.
  from agents.tools import ray_cluster
  return ray_cluster.init(address, num_cpus)


def cluster_cpus(ray):
  return max(int(ray.cluster_resources().get('CPU', 1)), 1)


def run_shards(agent, suite, output_dir, num_shards=None, shard_indices=None, address=None,
               num_cpus=None, slab_size=runner.DEFAULT_SLAB_SIZE, flight_paths=False,
               checkpoint=None, overwrite=False, progress=True, env_id=None):
  """Flies the shards as Ray tasks and writes their files into `output_dir`.

  Args:
    num_shards: how many shards to split the suite into (None: the cluster's CPUs).
    shard_indices: which shards to run (None: all).
    address: Ray cluster address (None: start a local instance with `num_cpus`).
    Other arguments as `runner.run_shard`.

  Returns:
    every result of the shards run, sorted by seed.
  """
  ray = init(address, num_cpus)
  num_shards = num_shards or cluster_cpus(ray)
  shard_indices = range(num_shards) if shard_indices is None else shard_indices
  env_id = policies_lib.resolve_env_id(agent, env_id)
  environment = environments.get(env_id)
  suite = suites_lib.complete(
      suites_lib.with_defaults(suite, policies_lib.suite_defaults(agent, environment)),
      environment)
  agent_info = policies_lib.describe_agent(agent, checkpoint)
  os.makedirs(output_dir, exist_ok=True)
  headers, done = {}, {}
  for index in shard_indices:
    headers[index] = results_lib.header(agent, suite, num_shards, index, agent_info, env_id)
    done[index] = results_lib.check_output_dir(output_dir, headers[index], overwrite)
    overwrite = False  # the first check removed the other evaluation's files
  remote = ray.remote(num_cpus=1)(runner.fly_shard)
  pending = {}
  for index in shard_indices:
    skip = [result.seed for result in done[index]]
    if len(skip) < len(suite.shard(num_shards, index)):
      pending[remote.remote(agent, suite, num_shards, index, 0, slab_size, flight_paths,
                            checkpoint, skip, env_id)] = index
    else:
      results_lib.write_shard(output_dir, headers[index], done[index], complete=True)
  total = sum(len(suite.shard(num_shards, index)) for index in shard_indices)
  bar = None
  if progress:
    import tqdm
    bar = tqdm.tqdm(total=total, initial=sum(len(d) for d in done.values()),
                    desc=f'ray ({len(pending)} shards)', unit='seed', dynamic_ncols=True)
  results = [result for index in shard_indices for result in done[index]]
  flown, start = 0, time.monotonic()
  try:
    while pending:
      ready, _ = ray.wait(list(pending), num_returns=1)
      index = pending.pop(ready[0])
      try:
        _, new = ray.get(ready[0])
      except ray.exceptions.RayTaskError as error:
        cause = error.cause if isinstance(getattr(error, 'cause', None), Exception) else error
        if isinstance(cause, EvaluationError):
          raise cause from None
        raise
      shard = done[index] + new
      results_lib.write_shard(output_dir, headers[index], shard, complete=True)
      results.extend(new)
      if bar is not None:
        flown += sum(result.final_timestep for result in new)
        bar.update(len(new))
        bar.set_postfix_str(f'{flown / max(time.monotonic() - start, 1e-9):,.0f} steps/s')
  finally:
    for ref in pending:
      ray.cancel(ref, force=True)
    if bar is not None:
      bar.close()
  return sorted(results, key=lambda result: result.seed)
