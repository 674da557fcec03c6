"""Evaluation suites: fixed lists of seeded balloon episodes, as BLE's `suites.py` has them.

A suite is a list of suite seeds, an episode length and a wind. BLE's names and sizes:

| suite | seeds | steps |
|---|---|---|
| `micro_eval` | 0 | 960 |
| `tiny_eval` | 0–9 | 960 |
| `small_eval` | 0–99 | 960 |
| `medium_eval` | 0–999 | 960 |
| `big_eval` | 0–9,999 | 960 |
| `hardest_strata` … `easiest_strata` | 2,000 each | 960 |
| `all_strata` | the 10,000 of the strata, hardest first | 960 |

The five strata split `big_eval`'s seeds into fifths by the TWR50 of our station
seeker on our procedural wind (`strata.json`, next to this module; regenerate it with
`python -m agents.evaluation.strata`).

Training never flies a suite episode, by construction: suite seed s is flown as the
episode seed `EVALUATION_SEED_BASE + s` (2**62 + s), and the balloon draws the episodes
it is reset into without a seed below 2**62 (`simulator.EVALUATION_SEED_BASE`). Explicit
training seeds (a config's `seed` + i) are small integers, far below.

Custom suites: `Suite('mine', seeds=range(50), episode_length=480, wind='static')`, or
from a string with `parse_suite('custom:seeds=0-49,episode_length=480,wind=static')`.
"""

import dataclasses
import functools
import json
import os

from agents.env.balloon import constants
from agents.env.balloon.simulator import EVALUATION_SEED_BASE
from agents.evaluation.errors import EvaluationError

EPISODE_LENGTH = constants.EPISODE_STEPS
WINDS = ('procedural', 'static')
STRATA = ('hardest_strata', 'hard_strata', 'mid_strata', 'easy_strata', 'easiest_strata')
STRATUM_SIZE = 2000
STRATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'strata.json')
_BLE_SUITES = {'micro_eval': 1, 'tiny_eval': 10, 'small_eval': 100, 'medium_eval': 1000,
               'big_eval': 10000}


@dataclasses.dataclass(frozen=True)
class Suite:
  """A fixed set of seeded episodes.

  Attributes:
    name: the suite's name (recorded with every result).
    seeds: suite seeds, distinct non-negative integers below 2**62, in suite order.
    episode_length: agent steps per episode (960 = 48 h).
    wind: 'procedural' or 'static'.
  """
  name: str
  seeds: tuple
  episode_length: int = EPISODE_LENGTH
  wind: str = 'procedural'

  def __post_init__(self):
    seeds = tuple(int(seed) for seed in self.seeds)
    object.__setattr__(self, 'seeds', seeds)
    if not seeds:
      raise EvaluationError(f'suite {self.name!r} has no seeds.')
    bad = [seed for seed in seeds if not 0 <= seed < EVALUATION_SEED_BASE]
    if bad:
      raise EvaluationError(f'suite {self.name!r}: seeds must lie in [0, 2**62), got '
                            f'{_abbreviate(bad)}.')
    if len(set(seeds)) != len(seeds):
      repeated = sorted({seed for seed in seeds if seeds.count(seed) > 1})
      raise EvaluationError(f'suite {self.name!r} repeats seeds {_abbreviate(repeated)}.')
    if (isinstance(self.episode_length, bool) or not isinstance(self.episode_length, int)
        or self.episode_length < 1):
      raise EvaluationError(f'suite {self.name!r}: episode_length must be a positive '
                            f'integer, got {self.episode_length!r}.')
    if self.wind not in WINDS:
      raise EvaluationError(f'suite {self.name!r}: wind must be one of {WINDS}, got '
                            f'{self.wind!r}.')

  def episode_seeds(self, seeds=None):
    """The balloon's episode seeds of `seeds` (default: the whole suite)."""
    return [episode_seed(seed) for seed in (self.seeds if seeds is None else seeds)]

  def to_dict(self):
    """A JSON-ready description; `Suite.from_dict` reads it back."""
    return {'name': self.name, 'episode_length': self.episode_length, 'wind': self.wind,
            'num_seeds': len(self.seeds), 'seeds': list(self.seeds)}

  @classmethod
  def from_dict(cls, data):
    """The suite `to_dict` described."""
    return cls(data['name'], tuple(data['seeds']), data['episode_length'], data['wind'])

  def shard(self, num_shards, shard_index):
    """The seeds of one shard: contiguous slices, as BLE's eval.py splits a suite.

    Raises:
      EvaluationError: num_shards < 1, or shard_index outside [0, num_shards).
    """
    check_shard(num_shards, shard_index)
    count = len(self.seeds)
    start = count * shard_index // num_shards
    end = count * (shard_index + 1) // num_shards
    return self.seeds[start:end]


def episode_seed(suite_seed):
  """The episode seed the balloon is reset with for a suite seed."""
  return EVALUATION_SEED_BASE + int(suite_seed)


def check_shard(num_shards, shard_index):
  """Raises EvaluationError unless 0 <= shard_index < num_shards."""
  if isinstance(num_shards, bool) or not isinstance(num_shards, int) or num_shards < 1:
    raise EvaluationError(f'--num_shards must be a positive integer, got {num_shards!r}.')
  if (isinstance(shard_index, bool) or not isinstance(shard_index, int)
      or not 0 <= shard_index < num_shards):
    raise EvaluationError(f'--shard_index must lie in [0, {num_shards}) for --num_shards='
                          f'{num_shards}, got {shard_index!r}.')


@functools.cache
def strata_ranking():
  """The 10,000 `big_eval` seeds ranked hardest first, with how they were ranked."""
  try:
    with open(STRATA_PATH) as file:
      data = json.load(file)
  except FileNotFoundError:
    raise EvaluationError(f'the strata ranking {STRATA_PATH} is missing; regenerate it with '
                          '`python -m agents.evaluation.strata`.') from None
  return data


def suite_names():
  """Every named suite."""
  return (*_BLE_SUITES, *STRATA, 'all_strata')


def get_suite(name):
  """The named suite, or a custom one from `custom:seeds=...,episode_length=...,wind=...`.

  Raises:
    EvaluationError: an unknown name, or a custom suite that does not parse.
  """
  if name in _BLE_SUITES:
    return Suite(name, tuple(range(_BLE_SUITES[name])))
  if name in STRATA or name == 'all_strata':
    ranked = strata_ranking()['seeds_hardest_first']
    if name == 'all_strata':
      return Suite(name, tuple(ranked))
    index = STRATA.index(name)
    return Suite(name, tuple(ranked[index * STRATUM_SIZE:(index + 1) * STRATUM_SIZE]))
  if isinstance(name, str) and name.startswith('custom'):
    return parse_suite(name)
  raise EvaluationError(f'unknown suite {name!r}; choose one of {", ".join(suite_names())}, '
                        'or custom:seeds=A-B|S1;S2;...,episode_length=N,wind=procedural|static.')


def parse_suite(text):
  """A custom suite from `custom[:key=value,...]`.

  Keys: `seeds` (`A-B` inclusive range or `S1;S2;...`; default 0-9), `episode_length`
  (default 960), `wind` (default procedural), `name` (default the text itself).
  """
  _, _, body = text.partition(':')
  fields = {'seeds': '0-9', 'episode_length': str(EPISODE_LENGTH), 'wind': 'procedural',
            'name': text}
  for item in filter(None, body.split(',')):
    key, equals, value = item.partition('=')
    if not equals or key not in fields:
      raise EvaluationError(f'custom suite {text!r}: expected key=value with a key in '
                            f'{sorted(fields)}, got {item!r}.')
    fields[key] = value
  try:
    seeds = parse_seeds(fields['seeds'])
    episode_length = int(fields['episode_length'])
  except ValueError as error:
    raise EvaluationError(f'custom suite {text!r}: {error}') from None
  return Suite(fields['name'], seeds, episode_length, fields['wind'])


def parse_seeds(text):
  """`A-B` (inclusive) or `S1;S2;...` to a tuple of ints."""
  if '-' in text and ';' not in text:
    first, last = (int(part) for part in text.split('-', 1))
    if last < first:
      raise ValueError(f'seed range {text!r} is empty.')
    return tuple(range(first, last + 1))
  return tuple(int(part) for part in text.split(';') if part)


def _abbreviate(values, limit=10):
  values = list(values)
  shown = ', '.join(str(value) for value in values[:limit])
  return f'[{shown}{", ..." if len(values) > limit else ""}] ({len(values)} in all)'
