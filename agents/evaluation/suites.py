"""Evaluation suites: fixed lists of seeded episodes, as BLE's `suites.py` has them.

A suite is a name, a list of suite seeds and an episode length, plus the options of an
environment (the balloon's `wind`). BLE's names and sizes, for every environment:

| suite | seeds |
|---|---|
| `micro_eval` | 0 |
| `tiny_eval` | 0–9 |
| `small_eval` | 0–99 |
| `medium_eval` | 0–999 |
| `big_eval` | 0–9,999 |

An environment's plug-in may name more (the balloon: `hardest_strata` … `easiest_strata`,
2,000 seeds each, and `all_strata`). The episode length defaults to the environment's
(the balloon: 960 steps = 48 h; others: the spec's `max_episode_steps`), and the
environment maps suite seed s to the seed its episode is reset with (the balloon:
2**62 + s, a space training never draws from; others: s).

Custom suites: `Suite('mine', seeds=range(50), episode_length=480, wind='static')`, or
from a string with `parse_suite('custom:seeds=0-49,episode_length=480,wind=static')`.
`complete(suite, environments.get(env_id))` fills in what a suite leaves to its
environment; `get_suite` returns suites completed.
"""

from agents.evaluation import environments
from agents.evaluation.errors import EvaluationError

SEED_LIMIT = 2 ** 62  # suite seeds lie below, so an environment can offset them in 64 bits
BLE_SUITES = {'micro_eval': 1, 'tiny_eval': 10, 'small_eval': 100, 'medium_eval': 1000,
              'big_eval': 10000}


class Suite:
  """A fixed set of seeded episodes; immutable, compared by value.

  Attributes:
    name: the suite's name (recorded with every result).
    seeds: suite seeds, distinct non-negative integers below 2**62, in suite order.
    episode_length: agent steps per episode, or None for the environment's.
    options: environment-specific options (the balloon's `wind`), also readable as
      attributes (`suite.wind`).
  """

  __slots__ = ('name', 'seeds', 'episode_length', 'options')

  def __init__(self, name, seeds, episode_length=None, **options):
    seeds = tuple(int(seed) for seed in seeds)
    for key, value in (('name', name), ('seeds', seeds), ('episode_length', episode_length),
                       ('options', dict(sorted(options.items())))):
      object.__setattr__(self, key, value)
    if not seeds:
      raise EvaluationError(f'suite {name!r} has no seeds.')
    bad = [seed for seed in seeds if not 0 <= seed < SEED_LIMIT]
    if bad:
      raise EvaluationError(f'suite {name!r}: seeds must lie in [0, 2**62), got '
                            f'{_abbreviate(bad)}.')
    if len(set(seeds)) != len(seeds):
      repeated = sorted({seed for seed in seeds if seeds.count(seed) > 1})
      raise EvaluationError(f'suite {name!r} repeats seeds {_abbreviate(repeated)}.')
    if episode_length is not None and (
        isinstance(episode_length, bool) or not isinstance(episode_length, int)
        or episode_length < 1):
      raise EvaluationError(f'suite {name!r}: episode_length must be a positive '
                            f'integer, got {episode_length!r}.')

  def __setattr__(self, key, value):
    raise AttributeError(f'a Suite is immutable; build another (setting {key!r}).')

  def __getattr__(self, key):
    try:
      return object.__getattribute__(self, 'options')[key]
    except KeyError:
      raise AttributeError(f'suite {self.name!r} has no option {key!r}; its options: '
                           f'{sorted(self.options)}.') from None

  def __eq__(self, other):
    return isinstance(other, Suite) and self.to_dict() == other.to_dict()

  def __hash__(self):
    return hash((self.name, self.seeds, self.episode_length, tuple(self.options.items())))

  def __repr__(self):
    options = ''.join(f', {key}={value!r}' for key, value in self.options.items())
    return (f'Suite({self.name!r}, {_abbreviate(self.seeds)}, '
            f'episode_length={self.episode_length}{options})')

  def __reduce__(self):
    return (_rebuild, (self.name, self.seeds, self.episode_length, self.options))

  @property
  def max_episode_length(self):
    """BLE's name for `episode_length` (its `EvaluationSuite.max_episode_length`)."""
    return self.episode_length

  def replace(self, episode_length=None, options=None):
    """The same suite with its episode length and options replaced (None: kept)."""
    return Suite(self.name, self.seeds,
                 self.episode_length if episode_length is None else episode_length,
                 **(self.options if options is None else options))

  def to_dict(self):
    """A JSON-ready description; `Suite.from_dict` reads it back."""
    return {'name': self.name, 'episode_length': self.episode_length, **self.options,
            'num_seeds': len(self.seeds), 'seeds': list(self.seeds)}

  @classmethod
  def from_dict(cls, data):
    """The suite `to_dict` described (its options are the keys it does not know)."""
    options = {key: value for key, value in data.items()
               if key not in ('name', 'episode_length', 'num_seeds', 'seeds')}
    return cls(data['name'], tuple(data['seeds']), data['episode_length'], **options)

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


def _rebuild(name, seeds, episode_length, options):
  return Suite(name, seeds, episode_length, **options)


def complete(suite, environment):
  """The suite with its environment's episode length and options filled in and checked.

  Args:
    suite: a `Suite`.
    environment: an `environments.EnvironmentEvaluation`.

  Raises:
    EvaluationError: an option the environment does not take, or a bad value (named).
  """
  length = suite.episode_length or environment.default_episode_length()
  return suite.replace(length, environment.check_options(suite.name, suite.options))


def episode_seed(suite_seed, env_id=None):
  """The seed an environment's episode is reset with for a suite seed (the balloon: 2**62 + s).

  `env_id` None is the default environment (see `environments.default_env_id`).
  """
  environment = environments.get(env_id or environments.default_env_id())
  return environment.episode_seeds([suite_seed])[0]


def check_shard(num_shards, shard_index):
  """Raises EvaluationError unless 0 <= shard_index < num_shards."""
  if isinstance(num_shards, bool) or not isinstance(num_shards, int) or num_shards < 1:
    raise EvaluationError(f'--num_shards must be a positive integer, got {num_shards!r}.')
  if (isinstance(shard_index, bool) or not isinstance(shard_index, int)
      or not 0 <= shard_index < num_shards):
    raise EvaluationError(f'--shard_index must lie in [0, {num_shards}) for --num_shards='
                          f'{num_shards}, got {shard_index!r}.')


def suite_names(env_id=None):
  """Every named suite of an environment (None: the default one, see `environments`)."""
  environment = environments.get(env_id or environments.default_env_id())
  return (*BLE_SUITES, *environment.named_suites)


def get_suite(name, env_id=None, defaults=None):
  """The named suite, or a custom one from `custom:seeds=...,episode_length=...,key=value`.

  Args:
    name: a suite name (see `suite_names`), with options after a colon
      (`small_eval:wind=procedural`), or a custom suite.
    env_id: the environment (its named suites, episode length and options); None: the
      default one (see `environments.default_env_id`).
    defaults: options the suite takes where it names none (an agent's own, see
      `with_defaults`), before the environment's.

  Returns:
    The `Suite`, completed for its environment (see `complete`).

  Raises:
    EvaluationError: an unknown name, or a custom suite that does not parse.
  """
  environment = environments.get(env_id or environments.default_env_id())
  base, colon, rest = name.partition(':') if isinstance(name, str) else (name, '', '')
  if base in BLE_SUITES:
    suite = Suite(base, range(BLE_SUITES[base]))
  elif base in environment.named_suites:
    try:
      suite = Suite(base, environment.named_suites[base]())
    except (OSError, ValueError) as error:
      raise EvaluationError(f'suite {base!r}: {error}') from None
  elif isinstance(name, str) and name.startswith('custom'):
    suite = parse_suite(name)
    colon = ''
  else:
    raise EvaluationError(
        f'unknown suite {name!r}; choose one of {", ".join(suite_names(environment.env_id))}'
        ', or custom:seeds=A-B|S1;S2;...,episode_length=N[,option=value...].')
  if colon:
    # A named suite with options: `small_eval:wind=procedural`.
    suite = suite.replace(options=_parse_options(name, rest))
  return complete(with_defaults(suite, defaults), environment)


def with_defaults(suite, defaults):
  """The suite with `defaults` for the options it does not name (those it names win)."""
  if not defaults:
    return suite
  return suite.replace(options={**defaults, **suite.options})


def parse_suite(text):
  """A custom suite from `custom[:key=value,...]`.

  Keys: `seeds` (`A-B` inclusive range or `S1;S2;...`; default 0-9), `episode_length`
  (default: the environment's), `name` (default the text itself); any other key is an
  option of the environment (the balloon's `wind`), checked by `complete`.
  """
  _, _, body = text.partition(':')
  fields = {'seeds': '0-9', 'episode_length': None, 'name': text}
  options = {}
  for item in filter(None, body.split(',')):
    key, equals, value = item.partition('=')
    if not equals or not key:
      raise EvaluationError(f'custom suite {text!r}: expected key=value, got {item!r}.')
    (fields if key in fields else options)[key] = value
  try:
    seeds = parse_seeds(fields['seeds'])
    episode_length = (None if fields['episode_length'] is None
                      else int(fields['episode_length']))
  except ValueError as error:
    raise EvaluationError(f'custom suite {text!r}: {error}') from None
  return Suite(fields['name'], seeds, episode_length, **options)


def _parse_options(text, body):
  """{key: value} of `key=value,...` (the options after a named suite's colon)."""
  options = {}
  for item in filter(None, body.split(',')):
    key, equals, value = item.partition('=')
    if not equals or not key:
      raise EvaluationError(f'suite {text!r}: expected key=value, got {item!r}.')
    options[key] = value
  return options


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
