"""A small format for hyperparameter search spaces, and sampling it with Optuna.

A search space maps dotted config keys to distributions, in the order they are
sampled:

    from agents.experiment.search_distributions import Categorical, Int, LogUniform, Uniform

    {
        'algorithm.learning_rate': LogUniform(1e-4, 3e-3),
        'algorithm.update_epochs': Int(3, 15),
        'algorithm.policy_objective': Categorical(['kl_penalty', 'clipped']),
        # Conditional: sampled only when the earlier key has that value.
        'algorithm.clip_ratio': Uniform(0.1, 0.3, when={'algorithm.policy_objective': 'clipped'}),
    }

- `Uniform(low, high)` and `LogUniform(low, high)`: floats (log-uniform for
  scales such as learning rates);
- `Int(low, high, step=1, log=False)`: integers, both ends included;
- `Categorical(choices)`: any YAML-able values (lists, e.g. layer sizes, too);
- `when={key: value or [values]}`: sample this key only if the earlier,
  categorical `key` took one of those values; otherwise the config keeps its
  own value;
- `grid=[...]`: the values the 'grid' sampler tries for a float or int
  (categoricals use their choices).

The same space can be written as plain mappings, e.g. in YAML:
`{'algorithm.learning_rate': {'type': 'log_uniform', 'low': 1e-4, 'high': 3e-3}}`.
`check` validates a space against a config before any trial runs.
"""

import dataclasses

from agents import configs
from agents.configs import resolution


class SearchSpaceError(ValueError):
  """A search space is empty, names an unknown key, or declares a bad range."""


@dataclasses.dataclass(frozen=True)
class Uniform:
  """Floats uniform in [low, high]."""
  low: float
  high: float
  when: dict = None
  grid: list = None
  type = 'uniform'


@dataclasses.dataclass(frozen=True)
class LogUniform:
  """Floats log-uniform in [low, high], 0 < low < high."""
  low: float
  high: float
  when: dict = None
  grid: list = None
  type = 'log_uniform'


@dataclasses.dataclass(frozen=True)
class Int:
  """Integers in [low, high] (both included), every `step`; log-uniform if `log`."""
  low: int
  high: int
  step: int = 1
  log: bool = False
  when: dict = None
  grid: list = None
  type = 'int'


@dataclasses.dataclass(frozen=True)
class Categorical:
  """One of `choices`."""
  choices: list
  when: dict = None
  type = 'categorical'


_TYPES = {kind.type: kind for kind in (Uniform, LogUniform, Int, Categorical)}


def _parse_one(key, value):
  if isinstance(value, tuple(_TYPES.values())):
    return value
  if isinstance(value, dict) and value.get('type') in _TYPES:
    kind = _TYPES[value['type']]
    fields = {field.name for field in dataclasses.fields(kind)}
    unknown = sorted(set(value) - fields - {'type'})
    if unknown:
      raise SearchSpaceError(
          f"Search space key '{key}': unknown field '{unknown[0]}' for type "
          f"'{value['type']}' (fields: {sorted(fields)}).")
    try:
      return kind(**{name: item for name, item in value.items() if name != 'type'})
    except TypeError as error:
      raise SearchSpaceError(f"Search space key '{key}': {error}") from error
  raise SearchSpaceError(
      f"Search space key '{key}' must be a Uniform, LogUniform, Int or Categorical (or a "
      f"mapping with 'type' in {sorted(_TYPES)}), got {value!r}.")


def parse(space):
  """Returns a search space as an ordered dict of dotted key to distribution.

  Args:
    space: mapping of dotted keys to distributions or to their plain-mapping form.

  Raises:
    SearchSpaceError: the space is empty or an entry is malformed.
  """
  if not space:
    raise SearchSpaceError('The search space is empty: declare at least one hyperparameter.')
  return {key: _parse_one(key, value) for key, value in space.items()}


def to_plain(space):
  """The plain-mapping (YAML) form of a parsed space."""
  plain = {}
  for key, distribution in parse(space).items():
    fields = {name: value for name, value in dataclasses.asdict(distribution).items()
              if value is not None}
    plain[key] = dict(type=distribution.type, **fields)
  return plain


def _conditions(distribution):
  return {key: value if isinstance(value, list) else [value]
          for key, value in (distribution.when or {}).items()}


def check(space, config, config_label='the config'):
  """Validates a search space against a resolved config before any trial runs.

  Every key must be a key of the config; ranges must be ordered (and positive
  for log scales); both ends of a range and every choice must be accepted by
  the config's validation; a condition must name an earlier categorical key
  and one of its choices.

  Args:
    space: a search space (see the module docstring).
    config: the resolved config the trials start from.
    config_label: how the config is named in errors.

  Returns:
    The parsed space.

  Raises:
    SearchSpaceError: naming the culprit key.
  """
  space = parse(space)
  for position, (key, distribution) in enumerate(space.items()):
    try:
      resolution.dotted_key(key, configs.specs_for(config))
    except configs.ConfigError:
      raise SearchSpaceError(f"Search space key '{key}' is not a hyperparameter of "
                             f'{config_label}.') from None
    if isinstance(distribution, Categorical):
      if not distribution.choices:
        raise SearchSpaceError(f"Search space key '{key}' has no choices.")
      values = list(distribution.choices)
    else:
      if not distribution.low < distribution.high:
        raise SearchSpaceError(f"Search space key '{key}': low {distribution.low!r} must be "
                               f'below high {distribution.high!r}.')
      if (isinstance(distribution, LogUniform) or getattr(distribution, 'log', False)) \
          and distribution.low <= 0:
        raise SearchSpaceError(f"Search space key '{key}': a log scale needs low > 0, got "
                               f'{distribution.low!r}.')
      values = [distribution.low, distribution.high] + list(distribution.grid or [])
    for value in values:
      try:
        configs.apply_overrides(config, {key: value})
      except configs.ConfigError as error:
        raise SearchSpaceError(f"Search space key '{key}': value {value!r} is not accepted "
                               f'by {config_label}: {error}') from error
    earlier = list(space)[:position]
    for condition, allowed in _conditions(distribution).items():
      if condition not in earlier or not isinstance(space[condition], Categorical):
        raise SearchSpaceError(
            f"Search space key '{key}' is conditional on '{condition}', which must be a "
            'categorical key declared before it.')
      missing = [value for value in allowed if value not in space[condition].choices]
      if missing:
        raise SearchSpaceError(f"Search space key '{key}': condition value {missing[0]!r} is "
                               f"not a choice of '{condition}'.")
  return space


def sample(trial, space):
  """Samples the parameters of one Optuna trial, in declaration order.

  Args:
    trial: an `optuna.Trial`.
    space: a parsed search space.

  Returns:
    Dict of dotted key to value, without the conditional keys whose condition
    failed.
  """
  params = {}
  for key, distribution in space.items():
    conditions = _conditions(distribution)
    if any(params.get(condition) not in allowed for condition, allowed in conditions.items()):
      continue
    if isinstance(distribution, Categorical):
      # Optuna stores categorical choices as JSON-able scalars; lists go by index.
      scalar = all(isinstance(c, (str, int, float, bool)) or c is None
                   for c in distribution.choices)
      if scalar:
        params[key] = trial.suggest_categorical(key, list(distribution.choices))
      else:
        number = trial.suggest_categorical(key, list(range(len(distribution.choices))))
        params[key] = distribution.choices[number]
    elif isinstance(distribution, Int):
      params[key] = trial.suggest_int(key, distribution.low, distribution.high,
                                      step=distribution.step, log=distribution.log)
    else:
      params[key] = trial.suggest_float(key, distribution.low, distribution.high,
                                        log=isinstance(distribution, LogUniform))
  return params


def grid(space):
  """The grid of the 'grid' sampler: each key's values (choices, `grid`, or every int).

  Raises:
    SearchSpaceError: a float key has no `grid`, or an int range is over 100 values.
  """
  values = {}
  for key, distribution in space.items():
    if isinstance(distribution, Categorical):
      scalar = all(isinstance(c, (str, int, float, bool)) or c is None
                   for c in distribution.choices)
      values[key] = list(distribution.choices) if scalar else list(
          range(len(distribution.choices)))
    elif distribution.grid:
      values[key] = list(distribution.grid)
    elif isinstance(distribution, Int) and \
        (distribution.high - distribution.low) // distribution.step < 100:
      values[key] = list(range(distribution.low, distribution.high + 1, distribution.step))
    else:
      raise SearchSpaceError(f"Search space key '{key}' needs grid=[...] values for the "
                             "'grid' sampler.")
  return values
