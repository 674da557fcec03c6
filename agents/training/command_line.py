"""What the command lines share: an argument parser whose errors are one line.

argparse prints the whole usage before a bad flag's message; every command of
`agents.scripts` refuses bad input in one line (`<prog>: error: <message>`) with exit
code 2, the same for a bad flag as for a bad value found later, so users and scripts
read one kind of refusal. (It lives here, not in `agents/scripts/`, whose every module
is a command with a console script.)
"""

from __future__ import annotations

import argparse
from typing import NoReturn

USAGE_EXIT_CODE = 2


class OneLineArgumentParser(argparse.ArgumentParser):
  """An `argparse.ArgumentParser` that reports a bad flag in one line and exits with code 2.

  Pass it as `parser_class` to `add_subparsers` so that subcommands do the same.
  """

  def error(self, message: str) -> NoReturn:
    """Prints `<prog>: error: <message>` (on one line) to stderr and exits with code 2."""
    self.exit(USAGE_EXIT_CODE, f'{self.prog}: error: {" ".join(message.split())}\n')


_TRUE = ('true', 't', '1')
_FALSE = ('false', 'f', '0')


def absl_bool(text: str) -> bool:
  """A boolean flag's value as absl (BatchPPO's flags) reads it: true/false, t/f, 1/0."""
  if text.lower() in _TRUE:
    return True
  if text.lower() in _FALSE:
    return False
  raise argparse.ArgumentTypeError(f'expected true or false, got {text!r}')


def add_boolean_flag(parser: argparse.ArgumentParser, name: str, default: bool | None,
                     help_true: str, help_false: str) -> None:
  """Adds `--NAME`, `--NAME=true|false` and `--noNAME`, as absl defines a boolean flag
  (BatchPPO's commands took them so: `--env_processes=False`)."""
  parser.add_argument(f'--{name}', dest=name, nargs='?', const=True, default=default,
                      type=absl_bool, metavar='true|false', help=help_true)
  parser.add_argument(f'--no{name}', dest=name, action='store_const', const=False,
                      help=help_false)
