"""Per-seed results (BLE's EvaluationResult), one JSON file per shard, and `combine`.

Layout of an output directory:

    shard-00000-of-00004.json   {"format", "agent", "agent_info", "env_id", "suite",
                                 "num_shards", "shard_index", "complete",
                                 "results": [SeedResult, ...]}
    results.json                every seed of the suite, after `combine`
    summary.json                the statistics of `statistics.summarize`

A shard file is rewritten atomically (write, then rename) as seeds finish, so a killed
evaluation resumes from it and a crashed shard can be re-run alone. Files written
before evaluation took any environment have no "env_id": they are read as the default
environment's (see `environments.default_env_id`), the balloon's.
"""

import contextlib
import dataclasses
import glob
import json
import os
import re

from agents.evaluation import environments
from agents.evaluation import suites as suites_lib
from agents.evaluation.errors import EvaluationError

FORMAT = 'agents.evaluation/1'
_SHARD_PATTERN = re.compile(r'shard-(\d+)-of-(\d+)\.json$')
_RUN_KEYS = ('format', 'agent', 'agent_info', 'env_id', 'suite')


@dataclasses.dataclass
class SeedResult:
  """One seed's episode: BLE's EvaluationResult, its environment's metrics as fields.

  Attributes:
    seed: the suite seed (the environment flew its episode seed, see `environments`).
    cumulative_reward: sum of the rewards.
    final_timestep: steps flown.
    metrics: the environment's per-seed metrics, also readable as attributes (the
      balloon's `time_within_radius`, `twr50`, `out_of_power`, `envelope_burst`,
      `zeropressure`; see `agents.env.balloon.evaluation`).
    flight_path: None, or a dict of per-step lists (the balloon's x, y in m; pressure,
      superpressure in Pa; elapsed_time in s; battery_soc in [0, 1]).
  """
  seed: int
  cumulative_reward: float
  final_timestep: int
  metrics: dict = dataclasses.field(default_factory=dict)
  flight_path: dict = None

  def __getattr__(self, name):
    metrics = self.__dict__.get('metrics') or {}
    if name in metrics:
      return metrics[name]
    raise AttributeError(f'{type(self).__name__} of seed {self.__dict__.get("seed")} has no '
                         f'field {name!r}; its metrics: {sorted(metrics)}.')

  def value(self, name):
    """A per-seed field by name: seed, cumulative_reward, final_timestep or a metric.

    Raises:
      EvaluationError: the result has no such field (the message lists its fields).
    """
    try:
      return getattr(self, name)
    except AttributeError as error:
      raise EvaluationError(str(error)) from None

  def to_dict(self):
    """The JSON fields, in BLE's order: seed, cumulative_reward, metrics, final_timestep."""
    data = {'seed': self.seed, 'cumulative_reward': self.cumulative_reward, **self.metrics,
            'final_timestep': self.final_timestep}
    if self.flight_path is not None:
      data['flight_path'] = self.flight_path
    return data

  @classmethod
  def from_dict(cls, data):
    """The result `to_dict` wrote (every field it does not know is a metric)."""
    data = dict(data)
    fields = {name: data.pop(name, None) for name in ('seed', 'cumulative_reward',
                                                      'final_timestep', 'flight_path')}
    return cls(metrics=data, **fields)


def shard_filename(num_shards, shard_index):
  """`shard-IIIII-of-KKKKK.json`."""
  return f'shard-{shard_index:05d}-of-{num_shards:05d}.json'


def header(agent, suite, num_shards, shard_index, agent_info=None, env_id=None):
  """What identifies a shard file: the agent, the environment, the suite and the split.

  The suite is recorded completed for the environment (`suites.complete`).
  """
  env_id = env_id or environments.default_env_id()
  suite = suites_lib.complete(suite, environments.get(env_id))
  return {'format': FORMAT, 'agent': agent, 'agent_info': agent_info or {},
          'env_id': env_id, 'suite': suite.to_dict(), 'num_shards': num_shards,
          'shard_index': shard_index}


def env_id_of(data):
  """The environment of a header (files without one are the default environment's)."""
  return data.get('env_id') or environments.default_env_id()


def write_json(path, data):
  """Writes JSON atomically: a temporary file, then a rename.

  Raises:
    EvaluationError: the write failed (no space left, a file size limit); the file at
      `path` is as it was, and the temporary file is removed.
  """
  temporary = f'{path}.tmp-{os.getpid()}'
  try:
    with open(temporary, 'w', encoding='utf-8') as file:
      json.dump(data, file, separators=(',', ':'))
    os.replace(temporary, path)
  except OSError as error:
    with contextlib.suppress(OSError):
      os.remove(temporary)
    kept = 'the previous one is intact' if os.path.exists(path) else 'nothing was written'
    raise EvaluationError(f'cannot write {path} ({error.strerror or error}); {kept}. Free '
                          'space and run the same command: it resumes from the seeds saved '
                          'before.') from None


def write_shard(output_dir, shard_header, results, complete):
  """Writes (replaces) one shard's file; results sorted by seed."""
  data = dict(shard_header, complete=bool(complete),
              results=[result.to_dict() for result in sorted(results, key=lambda r: r.seed)])
  path = os.path.join(output_dir, shard_filename(shard_header['num_shards'],
                                                 shard_header['shard_index']))
  write_json(path, data)
  return path


def read_json(path):
  """The JSON content of a file; EvaluationError naming it when it does not read."""
  try:
    with open(path, encoding='utf-8') as file:
      return json.load(file)
  except (OSError, json.JSONDecodeError) as error:
    raise EvaluationError(f'cannot read {path}: {error}') from None


def shard_files(output_dir):
  """The shard files in a directory, sorted."""
  return sorted(path for path in glob.glob(os.path.join(output_dir, 'shard-*-of-*.json'))
                if _SHARD_PATTERN.search(path))


def load_shard(path):
  """(header, [SeedResult]) of a shard file, checked before use.

  Raises:
    EvaluationError: not a shard file, or an entry is malformed (named).
  """
  data = read_json(path)
  if not isinstance(data, dict) or data.get('format') != FORMAT:
    raise EvaluationError(f'{path} is not an evaluation shard ({FORMAT}).')
  results = checked_results(data.pop('results', None), path)
  data['env_id'] = env_id_of(data)
  return data, results


_FIELD_TYPES = {'seed': (int,), 'cumulative_reward': (int, float), 'final_timestep': (int,),
                'flight_path': (dict, type(None))}
# An environment's own per-seed metrics are numbers, flags or null.
_METRIC_TYPES = (bool, int, float, type(None))


def checked_results(items, path):
  """[SeedResult] of a file's `results` list, every entry's fields type-checked.

  A results file is data: it is read as JSON and checked field by field, never
  executed or unpickled.

  Raises:
    EvaluationError: naming the file, the entry and the field.
  """
  if not isinstance(items, list):
    raise EvaluationError(f'{path}: "results" must be a list of per-seed results.')
  results = []
  for index, item in enumerate(items):
    if not isinstance(item, dict):
      raise EvaluationError(f'{path}: result {index} is not a mapping.')
    for name, value in {**dict.fromkeys(_FIELD_TYPES), **item}.items():
      types = _FIELD_TYPES.get(name, _METRIC_TYPES)
      if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
        raise EvaluationError(f'{path}: result {index} has {name} = {value!r}; expected '
                              f'{" or ".join(kind.__name__ for kind in types)}.')
    results.append(SeedResult.from_dict(item))
  return results


def same_run(a, b):
  """Whether two headers describe the same agent on the same suite (any split)."""
  return (a['agent'] == b['agent'] and a.get('agent_info') == b.get('agent_info')
          and env_id_of(a) == env_id_of(b) and a['suite'] == b['suite'])


def describe(data):
  """'agent A on suite S (N seeds)' (with the environment when it is not the default, and a
  run's checkpoint)."""
  env_id = data.get('env_id')
  on = f' of {env_id}' if env_id and env_id != _default_or_none() else ''
  checkpoint = (data.get('agent_info') or {}).get('checkpoint')
  at = f' at {checkpoint}' if checkpoint else ''
  return (f'agent {data["agent"]}{at} on suite {data["suite"]["name"]}{on} '
          f'({data["suite"]["num_seeds"]} seeds)')


def run_checkpoints(output_dir, run_dir):
  """The checkpoints of the run `run_dir` whose results are in `output_dir` (a set of names;
  empty when there are none)."""
  run_dir = os.path.abspath(run_dir)
  found = set()
  for path in _result_files(output_dir):
    info = read_json(path).get('agent_info') or {}
    if info.get('kind') == 'run' and info.get('run_dir') == run_dir:
      found.add(info.get('checkpoint'))
  return found


def _result_files(output_dir):
  """The shard files of a directory, then its combined results.json if there is one."""
  combined = os.path.join(output_dir, 'results.json')
  return shard_files(output_dir) + ([combined] if os.path.exists(combined) else [])


def _default_or_none():
  try:
    return environments.default_env_id()
  except EvaluationError:
    return None


def check_output_dir(output_dir, shard_header, overwrite=False):
  """Refuses a directory holding results of another agent, suite or split.

  With `overwrite`, removes those results instead. Returns the finished results of this
  very shard (to resume from), else [].

  Raises:
    EvaluationError: the directory holds another evaluation and overwrite is False.
  """
  existing = shard_files(output_dir)
  conflicts = []
  own = []
  for path in _result_files(output_dir):
    data = read_json(path)
    if data.get('format') != FORMAT:
      conflicts.append((path, 'not an evaluation file'))
      continue
    if not same_run(data, shard_header):
      conflicts.append((path, describe(data)))
    elif path in existing and data['num_shards'] != shard_header['num_shards']:
      conflicts.append((path, f'split into {data["num_shards"]} shards, not '
                              f'{shard_header["num_shards"]}'))
    elif path in existing and data['shard_index'] == shard_header['shard_index']:
      own.append(path)
  if conflicts and not overwrite:
    path, what = conflicts[0]
    raise EvaluationError(
        f'--output_dir {output_dir} already holds results of {what} ({os.path.basename(path)}'
        f'{f" and {len(conflicts) - 1} more files" if len(conflicts) > 1 else ""}), not '
        f'{describe(shard_header)} in {shard_header["num_shards"]} shards; pass --overwrite '
        'to replace them, or choose another --output_dir.')
  if overwrite:
    for path, _ in conflicts:
      os.remove(path)
    for name in ('summary.json',):
      if conflicts and os.path.exists(os.path.join(output_dir, name)):
        os.remove(os.path.join(output_dir, name))
  if own and not overwrite:
    return load_shard(own[0])[1]
  if own and overwrite:
    os.remove(own[0])
  return []


def combine(output_dir, write=True):
  """Merges the shard files of a directory into `results.json`.

  Returns:
    (header without shard fields, [SeedResult] in suite order).

  Raises:
    EvaluationError: no shards, shards of different runs, or seeds of the suite missing
      or duplicated (named).
  """
  paths = shard_files(output_dir)
  if not paths:
    combined = os.path.join(output_dir, 'results.json')
    if os.path.exists(combined):
      return load_combined(combined)
    raise EvaluationError(f'{output_dir} holds no shard files (shard-*-of-*.json).')
  first = None
  results = []
  for path in paths:
    data, shard_results = load_shard(path)
    if first is None:
      first = data
    elif not same_run(first, data):
      raise EvaluationError(f'{path} holds {describe(data)}, but {paths[0]} holds '
                            f'{describe(first)}; combine one evaluation at a time.')
    results.extend(shard_results)
  suite = suites_lib.Suite.from_dict(first['suite'])
  counts = {}
  for result in results:
    counts[result.seed] = counts.get(result.seed, 0) + 1
  duplicates = sorted(seed for seed, count in counts.items() if count > 1)
  if duplicates:
    raise EvaluationError(f'{output_dir}: seeds {suites_lib._abbreviate(duplicates)} appear '
                          'in more than one shard file.')
  missing = [seed for seed in suite.seeds if seed not in counts]
  if missing:
    raise EvaluationError(f'{output_dir}: seeds {suites_lib._abbreviate(missing)} of suite '
                          f'{suite.name} have no result; run their shards (or resume them).')
  extra = sorted(set(counts) - set(suite.seeds))
  if extra:
    raise EvaluationError(f'{output_dir}: seeds {suites_lib._abbreviate(extra)} are not in '
                          f'suite {suite.name}.')
  by_seed = {result.seed: result for result in results}
  ordered = [by_seed[seed] for seed in suite.seeds]
  run = run_header(first)
  if write:
    write_combined(output_dir, run, ordered)
  return run, ordered


def run_header(data):
  """The fields of a header (or a shard file) that identify the run, not the split."""
  return {key: data[key] for key in _RUN_KEYS}


def write_combined(output_dir, run, results):
  """Writes `results.json`: a run's header (`run_header`) and its results, in that order."""
  write_json(os.path.join(output_dir, 'results.json'),
             dict(run, results=[result.to_dict() for result in results]))


def load_combined(path):
  """(header, results) of a `results.json`."""
  data = read_json(path)
  if not isinstance(data, dict) or data.get('format') != FORMAT:
    raise EvaluationError(f'{path} is not an evaluation result file ({FORMAT}).')
  if not all(key in data for key in ('agent', 'agent_info', 'suite')):
    raise EvaluationError(f'{path} lacks its agent or suite.')
  data['env_id'] = env_id_of(data)
  return run_header(data), checked_results(data.get('results'), path)


def load(output_dir):
  """The combined results of a directory (combining its shards without writing)."""
  if not os.path.isdir(output_dir):
    raise EvaluationError(f'{output_dir} is not a directory.')
  if shard_files(output_dir):
    return combine(output_dir, write=False)
  return load_combined(os.path.join(output_dir, 'results.json'))
