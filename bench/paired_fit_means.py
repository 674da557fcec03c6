"""Paired statistics of groups of fits: each group's per-seed mean over its fits' evaluations.

`evaluate compare` pairs single agents on the same seeds. Several fits of one config are
one agent in distribution, so this pairs groups: for every suite seed, the mean metric
over the group's evaluation folders, then the paired difference of two groups over the
seeds (mean, 95 % bootstrap interval, Wilcoxon signed-rank p). Prints JSON lines: each
group's mean, then the first group minus each other one (the group under study first).

    python -m bench.paired_fit_means \
        --group qrdqn=EXP/fit00/eval-small_eval,EXP/fit01/eval-small_eval,... \
        --group ppo=... --group seeker=eval/seeker [--metric twr50]

A group's member may also be a column of a per-seed table kept from an earlier round,
`TABLE.csv:COLUMN` (a `seed` column and one column of metric values per agent, such as
docs/data/issue24_round11_small_eval.csv, whose values are TWR50; `--metric` does not
apply to it), so that a new round pairs with fits whose evaluation folders are gone:

    --group colvalue=docs/data/issue24_round11_small_eval.csv:colvalue_fit0,...
"""

import argparse
import csv
import json

import numpy as np
import scipy.stats

from agents.evaluation import results as results_lib
from agents.evaluation import statistics


def per_seed_values(member, metric):
  """{seed: value} of one group member: an evaluation folder, or `TABLE.csv:COLUMN`."""
  path, _, column = member.rpartition(':')
  if path.endswith('.csv'):
    return _table_column(path, column)
  _, results = results_lib.load_shard(f'{member}/results.json')
  return {result.seed: result.value(metric) for result in results}


def _table_column(path, column):
  """{seed: value} of one column of a per-seed CSV table with a `seed` column."""
  with open(path, newline='') as table:
    rows = list(csv.DictReader(table))
  names = list(rows[0]) if rows else []
  if 'seed' not in names or column not in names:
    raise ValueError(f'{path}:{column}: the table needs a "seed" column and the column '
                     f'{column!r}; its columns are {names}.')
  values = {}
  for line, row in enumerate(rows, start=2):
    try:
      values[int(row['seed'])] = float(row[column])
    except (TypeError, ValueError):
      raise ValueError(f'{path}, line {line}: seed {row["seed"]!r}, {column} '
                       f'{row[column]!r} is not a number.') from None
  return values


def per_seed_means(members, metric):
  """{seed: mean of `metric` over the members' values} on the seeds all members flew."""
  tables = [per_seed_values(member, metric) for member in members]
  seeds = sorted(set.intersection(*(set(table) for table in tables)))
  return {seed: float(np.mean([table[seed] for table in tables])) for seed in seeds}


def paired_difference(x, y):
  """The paired statistics of x - y over their common seeds."""
  seeds = sorted(set(x) & set(y))
  diff = np.array([x[seed] - y[seed] for seed in seeds])
  low, high = statistics.bootstrap_interval(diff, np.mean)
  nonzero = diff[diff != 0]
  return {'seeds': len(seeds), 'mean_difference': round(float(diff.mean()), 4),
          'ci95': [round(float(low), 4), round(float(high), 4)],
          'wilcoxon_p': float(scipy.stats.wilcoxon(nonzero).pvalue) if len(nonzero) else 1.0}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--group', action='append', required=True,
                      help='NAME=MEMBER[,MEMBER...]: evaluation folders with results.json, or '
                           'TABLE.csv:COLUMN columns of a per-seed table')
  parser.add_argument('--metric', default='twr50',
                      help="the evaluation folders' metric; a table's column is taken as it is")
  args = parser.parse_args(argv)
  groups = {}
  for spec in args.group:
    name, _, folders = spec.partition('=')
    if not name or not folders:
      parser.error(f'--group {spec!r}: expected NAME=MEMBER[,MEMBER...]')
    try:
      groups[name] = per_seed_means(folders.split(','), args.metric)
    except (OSError, ValueError) as error:
      parser.error(f'--group {name}: {error}')
  names = list(groups)
  for name in names:
    print(json.dumps({'group': name, 'fits': len(args.group[names.index(name)].split(',')),
                      'mean': round(float(np.mean(list(groups[name].values()))), 4)}))
  for name in names[1:]:
    print(json.dumps({'comparison': f'{names[0]} - {name}', 'metric': args.metric,
                      **paired_difference(groups[names[0]], groups[name])}))


if __name__ == '__main__':
  main()
