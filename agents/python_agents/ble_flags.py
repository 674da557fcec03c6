"""absl-style flags for the BLE commands (`train`, `eval`): BLE's names, kinds and defaults.

BLE's scripts define their flags with absl (`flags.DEFINE_string`, `DEFINE_integer`,
`DEFINE_multi_string`, `DEFINE_boolean`, `DEFINE_enum`); `Flags` defines the same kinds
over the project's one-line argument parser, with absl's syntax:

- `--name=value` or `--name value`;
- a boolean as `--name`, `--noname` or `--name=true|false` (also 1/0, t/f, yes/no);
- a multi-string flag repeated (`--collectors=console --collectors=pickle`); the values
  given replace its default;
- an integer's `lower_bound`, an enum's choices and a required flag are checked.

A bad flag or value exits with code 2 after one line naming the flag
(`<prog>: error: ...`), before anything is written.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from typing import Any

from agents.env.balloon import ble_names
from agents.training.command_line import OneLineArgumentParser

_TRUE = ('true', 't', '1', 'yes', 'y')
_FALSE = ('false', 'f', '0', 'no', 'n')


class Flags:
  """A set of absl-style flags; `parse(argv)` returns them as an `argparse.Namespace`."""

  def __init__(self, prog: str, description: str) -> None:
    self.parser = OneLineArgumentParser(prog=prog, description=description,
                                        allow_abbrev=False)
    self._required: list[str] = []
    self._bounds: dict[str, int] = {}
    self._multi: dict[str, list[str]] = {}

  def string(self, name: str, default: str | None, help_text: str,
             required: bool = False) -> None:
    """absl's `DEFINE_string` (with `mark_flag_as_required` when `required`)."""
    self.parser.add_argument(f'--{name}', default=default, help=help_text)
    if required:
      self._required.append(name)

  def integer(self, name: str, default: int | None, help_text: str,
              lower_bound: int | None = None) -> None:
    """absl's `DEFINE_integer`, with its `lower_bound`."""
    self.parser.add_argument(f'--{name}', default=default, type=_integer, help=help_text,
                             metavar='INT')
    if lower_bound is not None:
      self._bounds[name] = lower_bound

  def boolean(self, name: str, default: bool, help_text: str) -> None:
    """absl's `DEFINE_boolean`: `--name`, `--noname`, `--name=false`."""
    self.parser.add_argument(f'--{name}', dest=name, nargs='?', const=True, default=default,
                             type=_boolean, help=help_text, metavar='BOOL')
    self.parser.add_argument(f'--no{name}', dest=name, action='store_false',
                             help=argparse.SUPPRESS)

  def multi_string(self, name: str, default: Iterable[str], help_text: str) -> None:
    """absl's `DEFINE_multi_string`: repeat the flag; the values given replace `default`."""
    self.parser.add_argument(f'--{name}', action='append', default=None, help=help_text)
    self._multi[name] = list(default)

  def enum(self, name: str, default: str | None, choices: Sequence[str],
           help_text: str) -> None:
    """absl's `DEFINE_enum`."""
    self.parser.add_argument(f'--{name}', default=default, choices=list(choices),
                             help=help_text, metavar='{' + ','.join(choices) + '}')

  def error(self, message: str) -> None:
    """Exits with code 2 after `<prog>: error: <message>` on one line."""
    self.parser.error(message)

  def parse(self, argv: Sequence[str] | None) -> Any:
    """The flags of `argv` (without the program name); exits with code 2 on bad input."""
    args, extra = self.parser.parse_known_args(argv)
    if extra:
      unknown = [arg for arg in extra if arg.startswith('-')]
      self.error(f'unknown command line flag {unknown[0]!r}' if unknown else
                 f'too many command-line arguments: {" ".join(extra)}')
    for name in self._required:
      if getattr(args, name) is None:
        self.error(f'flag --{name} must have a value other than None.')
    for name, bound in self._bounds.items():
      value = getattr(args, name)
      if value is not None and value < bound:
        self.error(f'flag --{name}={value}: {value} is not >= {bound}.')
    for name, default in self._multi.items():
      if getattr(args, name) is None:
        setattr(args, name, list(default))
    return args


def _integer(text: str) -> int:
  try:
    return int(text, 10)
  except ValueError:
    raise argparse.ArgumentTypeError(f'invalid int value: {text!r}') from None


def _boolean(text: str | bool) -> bool:
  if isinstance(text, bool):
    return text
  if text.lower() in _TRUE:
    return True
  if text.lower() in _FALSE:
    return False
  raise argparse.ArgumentTypeError(f'invalid boolean value: {text!r} (true or false)')


def wind_option(wind_field: str) -> str:
  """The balloon's `wind` for BLE's `--wind_field`, by name (`ble_names.wind_mode`):
  'generative' -> 'generative' (BLE's VAE forecast and simplex noise), 'simple' ->
  'static' (BLE's simple static field), and this project's 'procedural' (its own
  generated field) -> 'procedural'."""
  return ble_names.wind_mode(wind_field)


WIND_FIELDS = (*ble_names.WIND_FIELDS, 'procedural')
RENDERERS = ('matplotlib',)
