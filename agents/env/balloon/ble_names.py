"""BLE 1.0.1's constructor keywords of the balloon environment, mapped to the project's.

`gymnasium.make('BalloonLearningEnvironment-v0', ...)` takes BLE's keywords beside the
project's (`BalloonEnv`):

- `wind_field_factory`: BLE's wind fields by name: `'simple'` (or BLE's
  `SimpleStaticWindField`) is the static field (`wind='static'`), `'generative'` (or
  BLE's `generative_wind_field_factory`) BLE's generative wind (`wind='generative'`,
  the default, as in BLE); a project wind mode
  (`'procedural'`, `'static'`) is taken as it is. `run_helpers.get_wind_field_factory`
  returns these factories by BLE's names.
- `seed`: seeds the stream of episode seeds that `reset()` without a seed draws from;
- `renderer`: `'matplotlib'` (BLE's `--renderer`) or BLE's `MatplotlibRenderer` draws
  as `render_mode='rgb_array'`;
- `station_keeping_radius_km`: the reward's radius (`env.unwrapped.radius`).
"""

import dataclasses
import numbers

from agents.env.balloon import constants

# BLE's wind field names -> the balloon's wind mode of the same meaning.
WIND_FIELDS = {'simple': 'static', 'generative': 'generative'}
# BLE's own factories, by their names (a BLE user passes the callable itself).
_BLE_FACTORY_NAMES = {'SimpleStaticWindField': 'simple',
                      'generative_wind_field_factory': 'generative'}


def wind_modes():
  """The balloon's wind modes (`constants.WIND_MODES`, which its suites accept too)."""
  return tuple(constants.WIND_MODES)


def wind_mode(name):
  """The balloon's wind mode for BLE's wind field `name` or a project mode.

  Raises:
    ValueError: a name that is neither (the message lists both kinds).
  """
  modes = wind_modes()
  mode = WIND_FIELDS.get(name, name)
  if mode not in modes:
    raise ValueError(f'unknown wind field {name!r}: BLE names {sorted(WIND_FIELDS)}, '
                     f'wind modes {list(modes)}.')
  return mode


@dataclasses.dataclass(frozen=True)
class WindFieldFactory:
  """BLE's wind field factory by name; calling it gives the balloon's wind mode (the
  wind fields themselves live in the simulator, one per balloon)."""
  name: str

  @property
  def __name__(self):
    return self.name

  def __call__(self):
    return wind_mode(self.name)


def get_wind_field_factory(name):
  """BLE's `run_helpers.get_wind_field_factory`: the factory of wind field `name`.

  Raises:
    ValueError: an unknown name, as BLE's (the message lists the names).
  """
  wind_mode(name)
  return WindFieldFactory(name)


def wind_of_factory(factory):
  """The wind mode of BLE's `wind_field_factory` keyword: a name, a `WindFieldFactory`, or
  BLE's own factory (known by its name).

  Raises:
    TypeError: a factory known by no name here (the message names what is accepted).
  """
  if isinstance(factory, str):
    return wind_mode(factory)
  if isinstance(factory, WindFieldFactory):
    return factory()
  name = getattr(factory, '__name__', type(factory).__name__)
  if name in _BLE_FACTORY_NAMES:
    return wind_mode(_BLE_FACTORY_NAMES[name])
  raise TypeError(f'wind_field_factory={name}: the balloon builds its wind fields itself; '
                  f"pass a name ({sorted(WIND_FIELDS)} or a wind mode) or "
                  'run_helpers.get_wind_field_factory(name).')


def render_mode_of(renderer, render_mode):
  """The `render_mode` BLE's `renderer` keyword asks for (None: `render_mode` as given).

  Raises:
    TypeError: a renderer other than matplotlib's (BLE's other renderers do not carry over).
  """
  if renderer is None:
    return render_mode
  name = renderer if isinstance(renderer, str) else type(renderer).__name__
  if name not in ('matplotlib', 'MatplotlibRenderer'):
    raise TypeError(f"renderer={name}: Gymnasium draws through render_mode; pass "
                    "render_mode='rgb_array' or 'human' (or renderer='matplotlib').")
  return render_mode or 'rgb_array'


@dataclasses.dataclass(frozen=True)
class Distance:
  """A distance with BLE's `units.Distance` accessors (`env.unwrapped.radius`)."""
  km: float

  @property
  def kilometers(self):
    return self.km

  @property
  def m(self):
    return self.km * 1000.0

  @property
  def meters(self):
    return self.m

  def __float__(self):
    return float(self.km)


def radius(station_keeping_radius_km):
  """The reward's radius as a `Distance`.

  Raises:
    ValueError: a radius that is not a positive number of km.
  """
  value = station_keeping_radius_km
  if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
    raise ValueError(f'station_keeping_radius_km must be a positive number, got {value!r}.')
  return Distance(float(value))


DEFAULT_RADIUS_KM = constants.STATION_RADIUS_KM
