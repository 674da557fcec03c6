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
