"""BLE's model files, fetched from the BLE 1.0.1 wheel: Perciatelli44 and the wind decoder.

The wheel of BLE 1.0.1 (Apache-2.0) ships two files this project uses:

- `models/perciatelli44.pb`, Perciatelli44's frozen graph (controllers/perciatelli44.py);
- `models/offlineskies22_decoder.msgpack`, the decoder of BLE's generative wind
  (wind/generative.py).

Neither is in this repository. One fetch downloads the wheel with pip (no
dependencies, 35 MB) into a temporary folder, or reads `--wheel`, checks both files'
SHA-256 against BLE's and writes both to the user cache,
`$XDG_CACHE_HOME/agents/` (`~/.cache/agents/`):

```sh
python -m agents.env.balloon.ble_models fetch [--wheel=WHEEL]
```

A file is found, in this order: an explicit path; the file its environment variable
names (`$AGENTS_PERCIATELLI44`, `$AGENTS_OFFLINESKIES22`); an installed
`balloon_learning_environment` package; the cache. The generative wind's first use
fetches the files itself (`ensure`), saying so in one line; offline it fails in one
line naming the fetch command and the variable.
"""

import dataclasses
import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = 'balloon_learning_environment'
VERSION = '1.0.1'
FETCH_COMMAND = 'python -m agents.env.balloon.ble_models fetch'


@dataclasses.dataclass(frozen=True)
class ModelFile:
  """One of BLE's model files: its file name, SHA-256, environment variable and title."""
  name: str
  sha256: str
  env_var: str
  title: str

  @property
  def member(self) -> str:
    """Its path inside the wheel."""
    return f'{PACKAGE}/models/{self.name}'


PERCIATELLI44 = ModelFile(
    'perciatelli44.pb', 'f4185886e583324092d5424a2b9a4fa0956e1027e1ad2a05d35e15be59714fc8',
    'AGENTS_PERCIATELLI44', "Perciatelli44's weights")
OFFLINESKIES22 = ModelFile(
    'offlineskies22_decoder.msgpack',
    'f18da7f5bf148ad39f06d664a949fcedbc74553acf78baf80d254a8d6516f8b9',
    'AGENTS_OFFLINESKIES22', "the generative wind's decoder weights")
MODELS = (PERCIATELLI44, OFFLINESKIES22)


class WeightsError(ValueError):
  """A model file is missing, unreadable or not BLE's; the message is one line."""


def cache_directory() -> str:
  """`$XDG_CACHE_HOME/agents` (default `~/.cache/agents`)."""
  cache = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
  return os.path.join(cache, 'agents')


def cache_path(model: ModelFile) -> str:
  """Where `fetch` puts `model`."""
  return os.path.join(cache_directory(), model.name)


def package_path(model: ModelFile):
  """`model` in an installed BLE package (found without importing it), or None."""
  try:
    spec = importlib.util.find_spec(PACKAGE)
  except (ImportError, ValueError):
    return None
  if spec is None or not spec.submodule_search_locations:
    return None
  return os.path.join(list(spec.submodule_search_locations)[0], 'models', model.name)


def find(model: ModelFile, path=None):
  """`model`'s file: `path`, else its variable's, else BLE's package's, else the cache's.

  Returns:
    The path, or None when no file is found and no path or variable was given.

  Raises:
    WeightsError: `path` or the variable's file does not exist.
  """
  for given, what in ((path, f'{model.title} '), (os.environ.get(model.env_var),
                                                  f'${model.env_var}=')):
    if given:
      if not os.path.isfile(given):
        raise WeightsError(f'{what}{given}: no such file; fetch them with `{FETCH_COMMAND}`.')
      return given
  for candidate in (package_path(model), cache_path(model)):
    if candidate and os.path.isfile(candidate):
      return candidate
  return None


def missing_message(model: ModelFile) -> str:
  """The one line saying `model` is nowhere, naming the fetch command and the variable."""
  return (f'{model.title} are not on this machine (no ${model.env_var}, no {PACKAGE} package, '
          f'no {cache_path(model)}); fetch them with `{FETCH_COMMAND}`, or point '
          f'${model.env_var} at a copy.')


def ensure(model: ModelFile, path=None) -> str:
  """`find(model, path)`, fetching BLE's wheel into the cache on first use.

  Prints one line to stderr before downloading.

  Raises:
    WeightsError: as `find`, or the fetch fails (offline: one line naming the fetch
      command and the environment variable).
  """
  found = find(model, path)
  if found:
    return found
  print(f'agents: fetching {model.title} from the {PACKAGE} {VERSION} wheel (35 MB, once) '
        f'into {cache_directory()} ...', file=sys.stderr, flush=True)
  try:
    return fetch()[model.name]
  except WeightsError as error:
    raise WeightsError(f'{model.title} are not on this machine and could not be fetched '
                       f'({error}); fetch them with `{FETCH_COMMAND}` (or `--wheel=WHEEL` '
                       f'offline), or point ${model.env_var} at a copy.') from None


def sha256_of(path) -> str:
  """The hex SHA-256 of a file."""
  digest = hashlib.sha256()
  with open(path, 'rb') as file:
    for block in iter(lambda: file.read(1 << 20), b''):
      digest.update(block)
  return digest.hexdigest()


def read_wheel(wheel, models=MODELS) -> dict:
  """{file name: bytes} of `models` from a BLE wheel.

  Raises:
    WeightsError: the file is not a zip archive or lacks one of them.
  """
  try:
    with zipfile.ZipFile(wheel) as archive:
      return {model.name: archive.read(model.member) for model in models}
  except (OSError, zipfile.BadZipFile, KeyError) as error:
    raise WeightsError(f'cannot read BLE model files from {wheel}: {error}.') from None


def download_wheel(directory) -> str:
  """Downloads BLE's wheel (no dependencies) into `directory` with pip; returns its path.

  Raises:
    WeightsError: pip fails (e.g. offline) or leaves no wheel.
  """
  command = [sys.executable, '-m', 'pip', 'download', f'{PACKAGE}=={VERSION}', '--no-deps',
             '--only-binary=:all:', '--quiet', '--dest', directory]
  result = subprocess.run(command, check=False, capture_output=True, text=True)
  if result.returncode != 0:
    last = (result.stderr.strip().splitlines() or ['no output'])[-1]
    raise WeightsError(f'`pip download {PACKAGE}=={VERSION}` failed: {last}')
  wheels = sorted(name for name in os.listdir(directory) if name.endswith('.whl'))
  if not wheels:
    raise WeightsError(f'pip left no wheel of {PACKAGE}=={VERSION} in {directory}.')
  return os.path.join(directory, wheels[0])


def write_checked(data: bytes, path, expected_sha256, what) -> str:
  """Writes `data` to `path` (atomically) if its SHA-256 is `expected_sha256`.

  Raises:
    WeightsError: another digest (nothing written).
  """
  digest = hashlib.sha256(data).hexdigest()
  if digest != expected_sha256:
    raise WeightsError(f'{what} has SHA-256 {digest}, not {expected_sha256} '
                       f'(BLE {VERSION} ships the latter); nothing written.')
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  # A name of this process's own: worker processes that start together may all fetch.
  partial = f'{path}.{os.getpid()}.partial'
  with open(partial, 'wb') as file:
    file.write(data)
  os.replace(partial, path)
  return path


def fetch(wheel=None, directory=None, expected=None) -> dict:
  """Extracts every model file from BLE's wheel (downloaded unless given) into `directory`.

  Both SHA-256 sums are checked before anything is written.

  Args:
    wheel: a BLE 1.0.1 wheel on disk (None: download it with pip).
    directory: where to write (None: `cache_directory()`).
    expected: {file name: SHA-256} overriding BLE's (for tests).

  Returns:
    {file name: path written}.

  Raises:
    WeightsError: the download fails, the wheel lacks a file, or a digest differs.
  """
  directory = directory or cache_directory()
  expected = {model.name: model.sha256 for model in MODELS} | dict(expected or {})
  with tempfile.TemporaryDirectory() as scratch:
    contents = read_wheel(wheel or download_wheel(scratch))
  for name, data in contents.items():
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected[name]:
      raise WeightsError(f'{PACKAGE}/models/{name} has SHA-256 {digest}, not {expected[name]} '
                         f'(BLE {VERSION} ships the latter); nothing written.')
  return {name: write_checked(data, os.path.join(directory, name), expected[name], name)
          for name, data in contents.items()}


def fetch_command(prog, description, destination, fetch_to, report, argv=None) -> int:
  """A `fetch [--wheel=WHEEL] [--<destination>=PATH]` command line; returns the exit code.

  Args:
    prog: the command's name, for its messages.
    description: its one-line description.
    destination: (flag, help) of the option that says where to write.
    fetch_to: callable(wheel, destination) that fetches and returns what `report` prints.
    report: callable(result) -> the lines to print on success.
    argv: the arguments; None reads `sys.argv`.
  """
  from agents.training.command_line import OneLineArgumentParser
  parser = OneLineArgumentParser(prog=prog, description=description)
  commands = parser.add_subparsers(dest='command', required=True,
                                   parser_class=OneLineArgumentParser)
  fetch_parser = commands.add_parser(
      'fetch', help=f"extract BLE {VERSION}'s model files from its wheel into the cache")
  fetch_parser.add_argument('--wheel', default=None,
                            help=f'a {PACKAGE}-{VERSION} wheel on disk (default: pip '
                            'downloads it into a temporary folder)')
  flag, where = destination
  fetch_parser.add_argument(f'--{flag}', default=None, dest='destination',
                            metavar=flag.upper(), help=where)
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  try:
    result = fetch_to(args.wheel, args.destination)
  except WeightsError as error:
    print(f'{prog.rsplit(".", 1)[-1]}: error: {error}', file=sys.stderr)
    return 2
  for line in report(result):
    print(line)
  return 0


def main(argv=None) -> int:
  """Command line: `fetch [--wheel=WHEEL] [--dir=DIR]`; returns the exit code."""
  return fetch_command(
      'agents.env.balloon.ble_models', __doc__.split('\n', maxsplit=1)[0],
      ('dir', f'where to write them (default: {cache_directory()})'), fetch,
      lambda paths: [f'Wrote {path} (SHA-256 checked).' for path in paths.values()], argv)


if __name__ == '__main__':
  sys.exit(main())
