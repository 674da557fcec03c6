"""Config fields declared once: type, default, allowed values and a one-line doc.

Every section of a run config (environment, network, algorithm, loop) is a
frozen dataclass whose fields are made with `param`:

    @dataclasses.dataclass(frozen=True)
    class MyConfig:
      learning_rate: float = param(1e-2, 'step size', low=0, low_open=True)
      layers: tuple[int, ...] = param((64, 64), 'hidden sizes', low=1)
      kind: str = param('a', 'which kind', choices=('a', 'b'))

The type comes from the annotation; `low`/`high` bound numbers (for a list,
each element); `choices` lists the allowed values; `resumable=True` marks a
field that may change when a run is resumed (the step budget, cadences).
`specs(cls)` reads the declarations back, `defaults(cls)` gives the plain
mapping of defaults, and `check_value` validates one value, raising
`ConfigError` with the key, the value and what is allowed. NaN and infinities
are refused for every float.

This module imports nothing from the package, so algorithms, the config
resolver and the builders can all use it.
"""

import dataclasses
import math
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

T = TypeVar('T')


class _NoLegacy:
  """`param`'s `legacy` when the key was always there."""

  def __repr__(self) -> str:
    return 'NO_LEGACY'


NO_LEGACY: Any = _NoLegacy()


class ConfigError(ValueError):
  """A config key is unknown or missing, or its value has the wrong type or range."""


@dataclasses.dataclass(frozen=True)
class Spec:
  """What one field accepts; built from a dataclass field by `specs`.

  Attributes:
    name: the field name.
    kind: the scalar type: int, float, bool, str or dict; or a tuple of scalar types
      (declared as `bool | str`, usually with `choices`).
    is_list: a list of `kind` (declared as `tuple[kind, ...]`).
    nullable: None is allowed (declared as `kind | None`).
    doc: one line saying what the field is.
    low, high: bounds of numbers (of each element of a list), or None.
    low_open, high_open: the bound itself is excluded.
    choices: allowed values, or None.
    resumable: the field may change when a run is resumed.
    min_length: the fewest elements a list may have.
    legacy: for a key added after runs were saved, the value those runs ran with: a saved
      config (a run's config.yaml, a policy record's) that lacks the key reads it, so it
      resumes and evaluates as it ran. `NO_LEGACY`: the key was always there.
  """
  name: str
  kind: type | tuple
  is_list: bool
  nullable: bool
  doc: str
  low: float | None = None
  high: float | None = None
  low_open: bool = False
  high_open: bool = False
  choices: tuple | None = None
  resumable: bool = False
  min_length: int = 0
  legacy: Any = NO_LEGACY

  def allowed(self) -> str:
    """Says in words what the field accepts, e.g. 'a float in (0, 1]'."""
    if self.choices is not None:
      text = 'one of ' + ', '.join(_choice(choice) for choice in self.choices)
    elif isinstance(self.kind, tuple):
      text = ' or '.join(kind.__name__ for kind in self.kind)
    else:
      text = f'{"an" if self.kind is int else "a"} {self.kind.__name__}'
      if self.low is not None or self.high is not None:
        if self.low is not None and self.high is not None:
          text += (f' in {"(" if self.low_open else "["}{_number(self.low)}, '
                   f'{_number(self.high)}{")" if self.high_open else "]"}')
        elif self.low is not None:
          text += f' {">" if self.low_open else ">="} {_number(self.low)}'
        else:
          text += f' {"<" if self.high_open else "<="} {_number(self.high)}'
      if self.kind is float and self.low is None and self.high is None:
        text = 'a finite float'
    if self.is_list:
      least = f' of at least {self.min_length} elements' if self.min_length else ''
      text = f'a list{least}, each {text}'
    if self.nullable:
      text += ' or null'
    return text


def param(default: Any, doc: str, *, low: float | None = None, high: float | None = None,
          low_open: bool = False, high_open: bool = False,
          choices: Iterable[Any] | None = None, resumable: bool = False,
          min_length: int = 0, legacy: Any = NO_LEGACY) -> Any:
  """Declares one config field; use as the default value of a dataclass field.

  Args:
    default: the default value (a tuple for a list field: dataclasses are frozen).
    doc: one line saying what the field is.
    low, high: bounds of a number, or of each element of a list.
    low_open, high_open: exclude the bound itself.
    choices: the allowed values.
    resumable: the field may change when a run is resumed.
    min_length: the fewest elements a list field may have.
    legacy: for a key added later, the value configs saved before it ran with (read
      where a saved config lacks the key); omit for a key that was always there.

  Returns:
    A `dataclasses.field` carrying the declaration in its metadata.
  """
  metadata = dict(doc=doc, low=low, high=high, low_open=low_open, high_open=high_open,
                  choices=tuple(choices) if choices is not None else None,
                  resumable=resumable, min_length=min_length, legacy=legacy)
  if isinstance(default, dict):
    return dataclasses.field(default_factory=lambda: dict(default), metadata=metadata)
  return dataclasses.field(default=default, metadata=metadata)


def specs(cls: type) -> dict[str, Spec]:
  """Returns {name: Spec} for the fields of a dataclass declared with `param`."""
  hints = typing.get_type_hints(cls)
  result = {}
  for field in dataclasses.fields(cls):
    kind, is_list, nullable = _parse_annotation(hints[field.name], cls, field.name)
    result[field.name] = Spec(name=field.name, kind=kind, is_list=is_list, nullable=nullable,
                              **field.metadata)
  return result


def defaults(cls: type) -> dict[str, Any]:
  """The defaults of a declared dataclass as a plain mapping (lists for list fields)."""
  return to_plain(cls())


def to_plain(instance: Any) -> dict[str, Any]:
  """A declared dataclass instance as a plain mapping (tuples become lists, for YAML)."""
  return {field.name: _plain(getattr(instance, field.name))
          for field in dataclasses.fields(instance)}


def from_mapping(cls: type[T], mapping: Mapping[str, Any]) -> T:
  """Builds the dataclass from a validated mapping (lists become tuples)."""
  names = {field.name for field in dataclasses.fields(typing.cast(Any, cls))}
  return cls(**{key: tuple(value) if isinstance(value, list) else value
                for key, value in mapping.items() if key in names})


def check_value(key: str, value: Any, spec: Spec) -> Any:
  """Checks one value against its declaration; returns it normalised.

  Ints are accepted for floats (and become floats); lists stay lists.

  Args:
    key: the dotted key, for the message, e.g. 'algorithm.discount'.
    value: the value to check.
    spec: the field's `Spec`.

  Returns:
    The value, with ints of float fields converted to float.

  Raises:
    ConfigError: naming the key, the value and what is allowed.
  """
  if value is None:
    if spec.nullable:
      return None
    raise _error(key, value, spec)
  if spec.is_list:
    if not isinstance(value, (list, tuple)) or len(value) < spec.min_length:
      raise _error(key, value, spec)
    return [_check_scalar(key, element, spec, value) for element in value]
  return _check_scalar(key, value, spec, value)


def _check_scalar(key, value, spec, whole):
  kind = spec.kind
  if kind is float and isinstance(value, int) and not isinstance(value, bool):
    value = float(value)
  if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
    raise _error(key, whole, spec)
  if not isinstance(value, kind):
    raise _error(key, whole, spec)
  if kind is float and not math.isfinite(value):
    raise _error(key, whole, spec)
  if spec.choices is not None and value not in spec.choices:
    raise _error(key, whole, spec)
  if kind in (int, float):
    if spec.low is not None and (value < spec.low or (spec.low_open and value == spec.low)):
      raise _error(key, whole, spec)
    if spec.high is not None and (value > spec.high or (spec.high_open and value == spec.high)):
      raise _error(key, whole, spec)
  return value


def _error(key, value, spec):
  return ConfigError(f'Config key {key!r} ({spec.doc}) must be {spec.allowed()}, '
                     f'got {_show(value)}.')


def _choice(value):
  """A choice as YAML spells it: true, false, 'auto'."""
  return str(value).lower() if isinstance(value, bool) else repr(value)


def _show(value):
  if isinstance(value, str):
    return repr(value)
  if isinstance(value, float) and not math.isfinite(value):
    return str(value)
  text = repr(value)
  return text if len(text) <= 80 else text[:77] + '...'


def _number(value):
  return repr(value) if isinstance(value, float) and value != int(value) else str(
      int(value) if isinstance(value, float) else value)


def _plain(value):
  if isinstance(value, tuple):
    return list(value)
  if isinstance(value, dict):
    return dict(value)
  return value


def _parse_annotation(annotation, cls, name):
  """(kind, is_list, nullable) from `int`, `float | None`, `tuple[int, ...]`, `dict`,
  `bool | str`..."""
  nullable = False
  origin = typing.get_origin(annotation)
  if origin in (typing.Union, types.UnionType):
    arguments = [arg for arg in typing.get_args(annotation) if arg is not types.NoneType]
    nullable = len(arguments) < len(typing.get_args(annotation))
    if len(arguments) > 1:
      if not set(arguments) <= {bool, int, str}:
        raise TypeError(f'{cls.__name__}.{name}: a field of several types takes bool, int '
                        f'and str only, got {annotation!r}.')
      return tuple(arguments), False, nullable
    annotation = arguments[0]
    origin = typing.get_origin(annotation)
  if origin is tuple:
    element = typing.get_args(annotation)[0]
    return element, True, nullable
  if origin is dict:
    return dict, False, nullable
  if annotation not in (int, float, bool, str, dict):
    raise TypeError(f'{cls.__name__}.{name}: unsupported field type {annotation!r}.')
  return annotation, False, nullable
