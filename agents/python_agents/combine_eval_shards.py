"""BLE's `combine_eval_shards`: the shards of `eval --num_shards` joined into one file.

    python -m agents.python_agents.combine_eval_shards --path=/tmp/ble/eval/big_eval \\
        --models=quantile --models=station_seeker [--pretty_json] [--flight_paths]

As BLE's `python -m balloon_learning_environment.eval.combine_eval_shards`: for each
model, reads every `<path>/<model>_*.json` (the shards `eval` wrote), sorts the results
by seed and writes them to `<path>/<model>.json`, without the flight paths unless
`--flight_paths`. `combine_eval_shards(path, models)` does the same from Python.

Beyond BLE: a model with no shard, or a seed found in two shards, is refused in one
line naming it (BLE writes an empty file, or the seed twice), before anything is written.
"""

import glob
import json
import os
import sys

from agents.python_agents import ble_flags

PROG = 'agents.python_agents.combine_eval_shards'


class ShardError(ValueError):
  """Shards that do not combine (the message names the model and the file)."""


def combine_eval_shards(path, models, pretty_json=False, flight_paths=False):
  """Joins each model's shards `<path>/<model>_*.json` into `<path>/<model>.json`.

  Args:
    path: the folder holding the shards (`<output_dir>/<suite>` of `eval`).
    models: the models' names (each shard is `<model>_<shard_idx>.json`).
    pretty_json: indent the written JSON by 2.
    flight_paths: keep the flight paths (BLE's default drops them).

  Returns:
    {model: the path written}.

  Raises:
    ShardError: a model without shards, a shard that is not a JSON list, or a seed in two
      shards (named); nothing is written then.
  """
  combined = {model: _combine(path, model, flight_paths) for model in models}
  written = {}
  for model, results in combined.items():
    written[model] = os.path.join(path, f'{model}.json')
    with open(written[model], 'w', encoding='utf-8') as file:
      json.dump(results, file, indent=2 if pretty_json else None)
  return written


def _combine(path, model, flight_paths):
  """One model's results from its shards, sorted by seed."""
  shards = sorted(glob.glob(os.path.join(glob.escape(path), f'{glob.escape(model)}_*.json')))
  if not shards:
    raise ShardError(f'model {model!r}: no shard {model}_*.json in {path}.')
  results, seen = [], {}
  for shard in shards:
    with open(shard, encoding='utf-8') as file:
      try:
        data = json.load(file)
      except json.JSONDecodeError as error:
        raise ShardError(f'{shard}: not JSON ({error}).') from None
    if not isinstance(data, list) or not all(isinstance(item, dict) and 'seed' in item
                                             for item in data):
      raise ShardError(f'{shard}: not a list of per-seed results, as eval writes.')
    for result in data:
      if result['seed'] in seen:
        raise ShardError(f"seed {result['seed']} of model {model!r} is in two shards: "
                         f"{seen[result['seed']]} and {shard}.")
      seen[result['seed']] = shard
      if not flight_paths:
        result['flight_path'] = []
      results.append(result)
  return sorted(results, key=lambda result: result['seed'])


def define_flags():
  """BLE 1.0.1 combine_eval_shards.py's flags, names and defaults."""
  flags = ble_flags.Flags(PROG, "Combines eval's sharded results into one JSON file per model.")
  flags.string('path', None, 'The path containing the shard results.', required=True)
  flags.multi_string('models', [], 'The names of the methods in the directory.')
  flags.boolean('pretty_json', False, 'If true, it will write json files with an indent of 2.')
  flags.boolean('flight_paths', False, 'If True, will include flight paths.')
  return flags


def main(argv=None):
  """Combines as the flags say; returns the exit code (2: bad input, nothing written)."""
  flags = define_flags()
  args = flags.parse(sys.argv[1:] if argv is None else argv)
  if not args.models:
    flags.error('flag --models must have a value other than None.')
  try:
    written = combine_eval_shards(args.path, args.models, args.pretty_json, args.flight_paths)
  except (ShardError, OSError) as error:
    flags.error(str(error))
  for model, path in written.items():
    print(f'{model}: {path}')
  return 0


if __name__ == '__main__':
  sys.exit(main())
