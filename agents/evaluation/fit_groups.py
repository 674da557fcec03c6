"""Groups of fits paired by seed: each group's per-seed mean over its fits' evaluations.

`statistics.compare_paired` pairs two agents on the same seeds. Several fits of one config
are one agent in distribution, so this pairs groups: for every suite seed, the mean metric
over the group's members, then `compare_paired` of the first group against each other one
on the seeds they share (the group under study first).

A member is an evaluation folder (with `results.json`, as `evaluate` writes it) or a column
of a per-seed table, `TABLE.csv:COLUMN` (a `seed` column and one column of metric values
per agent, such as docs/data/balloon_spread_small_eval.csv, whose values are TWR50; the
metric does not apply to it), so that new fits pair with fits whose folders are gone.

    python -m agents.scripts.evaluate groups \
        --group spread=EXP/fit00-balloon_spread/eval-small_eval,EXP/fit01-... \
        --group seeker=eval/ss [--metric twr50]
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.evaluation import results as results_lib
from agents.evaluation import statistics
from agents.evaluation.errors import EvaluationError


class _SeedValue:
  """One seed's value, shaped as `compare_paired` reads an `SeedResult`."""

  def __init__(self, seed: int, value: float) -> None:
    self.seed, self._value = seed, value

  def value(self, metric: str) -> float:
    del metric  # A member's values are already the metric's.
    return self._value


def per_seed_values(member: str, metric: str = 'twr50') -> dict[int, float]:
  """{seed: value} of one member: an evaluation folder, or `TABLE.csv:COLUMN`.

  Raises:
    EvaluationError: the folder or table does not read, the column is missing or a value
      is not a number (named).
  """
  path, _, column = member.rpartition(':')
  if path.endswith('.csv'):
    return _table_column(path, column)
  _, results = results_lib.load_shard(os.path.join(member, 'results.json'))
  return {result.seed: result.value(metric) for result in results}


def _table_column(path: str, column: str) -> dict[int, float]:
  """{seed: value} of one column of a per-seed CSV table with a `seed` column."""
  try:
    with open(path, newline='', encoding='utf-8') as table:
      rows = list(csv.DictReader(table))
  except OSError as error:
    raise EvaluationError(f'cannot read {path}: {error}') from None
  names = list(rows[0]) if rows else []
  if 'seed' not in names or column not in names:
    raise EvaluationError(f'{path}:{column}: the table needs a "seed" column and the column '
                          f'{column!r}; its columns are {names}.')
  values = {}
  for line, row in enumerate(rows, start=2):
    try:
      values[int(row['seed'])] = float(row[column])
    except (TypeError, ValueError):
      raise EvaluationError(f'{path}, line {line}: seed {row["seed"]!r}, {column} '
                            f'{row[column]!r} is not a number.') from None
  return values


def per_seed_means(members: Sequence[str], metric: str = 'twr50') -> dict[int, float]:
  """{seed: mean of the members' values} on the seeds every member flew."""
  tables = [per_seed_values(member, metric) for member in members]
  seeds = sorted(set.intersection(*(set(table) for table in tables)))
  if not seeds:
    raise EvaluationError(f'{", ".join(members)}: no seed that every member flew.')
  return {seed: float(np.mean([table[seed] for table in tables])) for seed in seeds}


def compare_groups(groups: Mapping[str, Sequence[str]], metric: str = 'twr50',
                   seed: int = 0) -> dict[str, list[dict[str, Any]]]:
  """Each group's mean and the first group minus each other one, paired by seed.

  Args:
    groups: {name: [member, ...]}, in order; the first is the group under study.
    metric: the evaluation folders' per-seed field (a table's column is taken as it is).
    seed: seed of the bootstrap resampling.

  Returns:
    {'groups': [{'group', 'fits', 'seeds', 'mean'}], 'pairs': [`compare_paired` dicts of
    the first group minus each other one, on their common seeds]}.

  Raises:
    EvaluationError: fewer than two groups, or a member that does not read (named).
  """
  if len(groups) < 2:
    raise EvaluationError(f'pairing needs at least two groups, got {len(groups)}.')
  means = {}
  for name, members in groups.items():
    try:
      means[name] = per_seed_means(members, metric)
    except EvaluationError as error:
      raise EvaluationError(f'group {name}: {error}') from None
  summaries = [{'group': name, 'fits': len(groups[name]), 'seeds': len(values),
                'mean': float(np.mean(list(values.values())))} for name, values in means.items()]
  first, *others = means
  pairs = []
  for other in others:
    common = sorted(set(means[first]) & set(means[other]))
    if not common:
      raise EvaluationError(f'groups {first} and {other} share no seed.')
    x = [_SeedValue(s, means[first][s]) for s in common]
    y = [_SeedValue(s, means[other][s]) for s in common]
    pairs.append(statistics.compare_paired(x, y, metric, names=(first, other), seed=seed))
  return {'groups': summaries, 'pairs': pairs}
