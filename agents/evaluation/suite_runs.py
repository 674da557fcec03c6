"""Runs of an agent on a suite: `evaluate` into a directory, `summarize_dir`, `compare`.

`evaluate` runs the requested shards (locally, or as Ray tasks) and, once the directory
holds every seed of the suite, combines the shards into `results.json` and writes
`summary.json`, the distribution plot of the environment's headline metric
(`<metric>_distribution.png`) and, when the environment draws its flights, the gallery.
"""

import os

from agents.evaluation import environments, plots, policies, runner, statistics
from agents.evaluation import results as results_lib
from agents.evaluation import suites as suites_lib
from agents.evaluation.errors import EvaluationError
from agents.run import directory_lock


def evaluate(agent, suite, output_dir, num_shards=1, shard_index=None, workers=2,
             use_ray=False, ray_address=None, slab_size=runner.DEFAULT_SLAB_SIZE,
             flight_paths=False, checkpoint=None, overwrite=False, progress=True,
             artifacts=True, gallery=True, env_id=None):
  """Evaluates an agent on a suite into `output_dir`.

  Args:
    agent: agent spec: random, an environment's baseline (the balloon's station_seeker,
      random_walk, mpc, perciatelli44[:PATH]), run:<RUN_DIR>, savedmodel:<DIR> or
      <module>:<factory> (see `policies`).
    suite: a `Suite` or a suite name (see `suites.get_suite`).
    output_dir: where the shard files (and, when complete, the summary) go.
    num_shards: split the suite into `num_shards` contiguous shards. With Ray, None
      means one shard per CPU of the cluster.
    shard_index: run shard `shard_index` only (None: every shard, one after the other
      or on Ray).
    workers: local worker processes, one slab of environments each (0: in this process).
    use_ray: run the shards as Ray tasks (a local instance unless `ray_address`).
    ray_address: the address of a Ray cluster to run the shards on.
    slab_size: environments per slab at most.
    flight_paths: keep each seed's flight path in the results (environments that have
      them, the balloon).
    checkpoint: for run:<RUN_DIR>, a checkpoint name or prefix (None: the newest that
      reads).
    overwrite: replace results of another evaluation found in `output_dir`.
    progress: show tqdm bars.
    artifacts: when the suite is complete, write summary.json and the plots.
    gallery: with artifacts, also re-fly the best, median and worst seeds for pictures.
    env_id: the Gymnasium id flown (None: the agent's, see `policies.resolve_env_id`).

  Returns:
    dict(results=[SeedResult of the shards run], complete=bool, summary=dict|None).

  Raises:
    EvaluationError: bad input; nothing already written is lost.
  """
  env_id = policies.resolve_env_id(agent, env_id)
  environment = environments.get(env_id)
  # An agent trained in one wind flies in it unless the suite names another.
  defaults = policies.suite_defaults(agent, environment)
  suite = (suites_lib.get_suite(suite, env_id, defaults) if isinstance(suite, str)
           else suites_lib.complete(suites_lib.with_defaults(suite, defaults), environment))
  runner.check_sizes(workers, slab_size)
  if os.path.exists(output_dir) and not os.path.isdir(output_dir):
    raise EvaluationError(f'--output_dir {output_dir} is a file, not a folder.')
  created = not os.path.exists(output_dir)
  try:
    with directory_lock.hold(output_dir, 'evaluation output folder'):
      return _evaluate(agent, suite, output_dir, num_shards, shard_index, workers, use_ray,
                       ray_address, slab_size, flight_paths, checkpoint, overwrite, progress,
                       artifacts, gallery, env_id)
  except directory_lock.DirectoryBusyError as error:
    raise EvaluationError(str(error)) from None
  finally:
    if created:
      _remove_if_empty(output_dir)


def _remove_if_empty(output_dir):
  """Removes a folder this evaluation created when it holds nothing."""
  try:
    os.rmdir(output_dir)
  except OSError:
    pass  # Not empty (results to keep), or already gone.


def _evaluate(agent, suite, output_dir, num_shards, shard_index, workers, use_ray,
              ray_address, slab_size, flight_paths, checkpoint, overwrite, progress,
              artifacts, gallery, env_id):
  if use_ray or ray_address:
    from agents.evaluation import ray_runner
    indices = None if shard_index is None else [shard_index]
    if shard_index is not None:
      suites_lib.check_shard(num_shards, shard_index)
    results = ray_runner.run_shards(
        agent, suite, output_dir, num_shards if (num_shards or 1) > 1 or shard_index is not None
        else None, indices, ray_address, slab_size=slab_size, flight_paths=flight_paths,
        checkpoint=checkpoint, overwrite=overwrite, progress=progress, env_id=env_id)
  else:
    suites_lib.check_shard(num_shards, 0 if shard_index is None else shard_index)
    indices = range(num_shards) if shard_index is None else [shard_index]
    results = []
    for index in indices:
      results.extend(runner.run_shard(
          agent, suite, output_dir, num_shards, index, workers, slab_size, flight_paths,
          checkpoint, overwrite, progress, env_id))
      overwrite = False
  summary = None
  complete = _is_complete(output_dir, suite)
  if complete:
    summary = finish(output_dir, artifacts=artifacts, checkpoint=checkpoint, gallery=gallery)
  return {'results': results, 'complete': complete, 'summary': summary}


def _is_complete(output_dir, suite):
  seeds = set()
  for path in results_lib.shard_files(output_dir):
    _, shard = results_lib.load_shard(path)
    seeds.update(result.seed for result in shard)
  return seeds == set(suite.seeds)


def finish(output_dir, artifacts=True, checkpoint=None, gallery=True):
  """Combines the shards and writes summary.json (and plots, gallery); returns the summary."""
  header, results = results_lib.combine(output_dir)
  summary = summary_of(header, results)
  results_lib.write_json(os.path.join(output_dir, 'summary.json'), summary)
  environment = environments.get(header['env_id'])
  if artifacts and not plots.available():
    print("evaluate: plots skipped: matplotlib is not installed (pip install -e '.[viz]').")
  elif artifacts:
    if gallery and not environment.has_flight_renderer:
      print(f'evaluate: no gallery: {environment.env_id} has no flight renderer in its '
            'evaluation plug-in.')
    plots.distribution(results, os.path.join(output_dir,
                                             f'{environment.metric}_distribution.png'),
                       f'{header["agent"]} on {header["suite"]["name"]}', environment)
    if gallery and environment.has_flight_renderer:
      suite = suites_lib.Suite.from_dict(header['suite'])
      info = header.get('agent_info') or {}
      plots.gallery(header['agent'], suite, results, output_dir, environment,
                    checkpoint=info.get('checkpoint') if info.get('kind') == 'run'
                    else checkpoint)
  return summary


def summary_of(header, results):
  """summary.json's content: agent, environment, suite and the statistics."""
  suite = {key: value for key, value in header['suite'].items() if key != 'seeds'}
  environment = environments.get(header['env_id'])
  return {'agent': header['agent'], 'agent_info': header.get('agent_info', {}),
          'env_id': header['env_id'], 'suite': suite, 'table_metric': environment.metric,
          **statistics.summarize(results, environment=environment)}


def summarize_dir(output_dir):
  """The summary of a directory's (combined) results, without writing anything."""
  header, results = results_lib.load(output_dir)
  return summary_of(header, results)


def compare(directories, output_dir=None, metric=None):
  """Paired statistics of every agent against the first one, on the same seeds.

  `metric` is any per-seed field (None: the environment's headline metric, the
  balloon's twr50, else cumulative_reward, the return).

  Writes `comparison.json` and `comparison.png` into `output_dir` when given.

  Returns:
    dict(agents=[summaries], pairs=[compare_paired of agent i vs agent 0, i >= 1]).

  Raises:
    EvaluationError: fewer than two directories, different environments, suites or
      seeds, or a metric the results do not have.
  """
  if len(directories) < 2:
    raise EvaluationError('compare needs at least two result directories.')
  loaded = [results_lib.load(directory) for directory in directories]
  names = _names([header['agent'] for header, _ in loaded], directories)
  suites = {header['suite']['name'] for header, _ in loaded}
  reference_header, reference = loaded[0]
  for directory, (header, _) in zip(directories[1:], loaded[1:]):
    if header['env_id'] != reference_header['env_id']:
      raise EvaluationError(f'{directory} holds results on {header["env_id"]}, but '
                            f'{directories[0]} on {reference_header["env_id"]}; compare '
                            'agents on one environment.')
    if header['suite'] != reference_header['suite']:
      raise EvaluationError(
          f'{directory} holds suite {_describe_suite(header["suite"])}, but {directories[0]} '
          f'holds {_describe_suite(reference_header["suite"])}; compare agents on one suite.')
  environment = environments.get(reference_header['env_id'])
  metric = metric or environment.metric
  pairs = [statistics.compare_paired(results, reference, metric, (name, names[0]))
           for name, (_, results) in zip(names[1:], loaded[1:])]
  comparison = {
      'metric': metric, 'note': environment.metric_notes.get(metric, metric),
      'suites': sorted(suites),
      'agents': [dict(name=name, directory=directory, **summary_of(header, results))
                 for name, directory, (header, results) in zip(names, directories, loaded)],
      'pairs': pairs,
  }
  if output_dir:
    os.makedirs(output_dir, exist_ok=True)
    results_lib.write_json(os.path.join(output_dir, 'comparison.json'), comparison)
    plots.comparison({name: results for name, (_, results) in zip(names, loaded)},
                     os.path.join(output_dir, 'comparison.png'), metric,
                     environment.metric_range if metric == environment.metric else None)
  return comparison


def _names(agents, directories):
  """Agent names, made unique with their directory where two agents share a name."""
  names = []
  for agent, directory in zip(agents, directories):
    name = agent if agents.count(agent) == 1 else f'{agent} ({directory})'
    names.append(name)
  return names


def _describe_suite(suite):
  """'name (N seeds, L steps, option=value ...)' of a suite's dict."""
  details = [f'{suite["num_seeds"]} seeds', f'{suite["episode_length"]} steps'] + [
      f'{key}={value}' for key, value in suite.items()
      if key not in ('name', 'num_seeds', 'episode_length', 'seeds')]
  return f'{suite["name"]} ({", ".join(details)})'
