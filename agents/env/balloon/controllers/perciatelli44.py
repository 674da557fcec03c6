"""BLE's Perciatelli44 on our balloon: the frozen graph BLE 1.0.1 ships, flown batched.

Perciatelli44 is the distributional Q-network of Bellemare et al. (Nature 2020), frozen
into a TensorFlow 1 graph and distributed in the wheel of BLE 1.0.1
(`balloon_learning_environment/models/perciatelli44.pb`, Apache-2.0). It reads BLE's
1099-float observation, which is our balloon's (the specification's §11), from the
placeholder `observation` ([None, 1099]) and acts by the argmax of `q_values` ([None, 3],
the means of its quantiles), as BLE's agent does. The weights are not in this repository;
they are found, in this order:

1. an explicit path: `--agent=perciatelli44:<PATH>`, `create_agent(..., path=PATH)`;
2. the file `$AGENTS_PERCIATELLI44` names;
3. an installed `balloon_learning_environment` package's `models/perciatelli44.pb`;
4. the user cache, `$XDG_CACHE_HOME/agents/perciatelli44.pb` (`~/.cache/agents/...`),
   which this command fills:

```sh
python -m agents.env.balloon.controllers.perciatelli44 fetch [--wheel=WHEEL] [--path=DEST]
```

It downloads BLE 1.0.1's wheel with pip (no dependencies, 35 MB) into a temporary
folder, or reads `--wheel`, extracts the graph and checks its SHA-256 (`SHA256`).
Then, batched over a whole slab:

```sh
python -m agents.scripts.evaluate --agent=perciatelli44 --suite=small_eval --output_dir=DIR
```

The balloon's evaluation plug-in lists `Perciatelli44` among its baselines, so the
evaluation and `run_helpers.create_agent('perciatelli44', 3, (1099,))` fly it; TensorFlow
is imported when the weights are loaded, not when this module is.
"""

import functools
import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

from agents.env.balloon import constants

PACKAGE = 'balloon_learning_environment'
VERSION = '1.0.1'
WHEEL_MEMBER = f'{PACKAGE}/models/perciatelli44.pb'
SHA256 = 'f4185886e583324092d5424a2b9a4fa0956e1027e1ad2a05d35e15be59714fc8'
ENV_VAR = 'AGENTS_PERCIATELLI44'
FETCH_COMMAND = 'python -m agents.env.balloon.controllers.perciatelli44 fetch'
OBSERVATION = 'observation'
Q_VALUES = 'q_values'
NUM_ACTIONS = 3


class WeightsError(ValueError):
  """Perciatelli44's weights are missing, unreadable or not its graph; the message is one line."""


def cache_path():
  """Where `fetch` puts the weights: `$XDG_CACHE_HOME/agents/perciatelli44.pb`."""
  cache = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
  return os.path.join(cache, 'agents', 'perciatelli44.pb')


def _package_path():
  """The graph of an installed BLE package (found without importing it), or None."""
  try:
    spec = importlib.util.find_spec(PACKAGE)
  except (ImportError, ValueError):
    return None
  if spec is None or not spec.submodule_search_locations:
    return None
  return os.path.join(list(spec.submodule_search_locations)[0], 'models', 'perciatelli44.pb')


def find_weights(path=None):
  """The weights' file: `path`, else `$AGENTS_PERCIATELLI44`'s, else BLE's, else the cache's.

  Raises:
    WeightsError: `path` or the variable's file does not exist, or no weights are found
      (the message names the fetch command).
  """
  for given, what in ((path, "Perciatelli44's weights "),
                      (os.environ.get(ENV_VAR), f'${ENV_VAR}=')):
    if given:
      if not os.path.isfile(given):
        raise WeightsError(f'{what}{given}: no such file; fetch them with `{FETCH_COMMAND}`.')
      return given
  for candidate in (_package_path(), cache_path()):
    if candidate and os.path.isfile(candidate):
      return candidate
  raise WeightsError(f"Perciatelli44's weights are not on this machine (no path given, no "
                     f'${ENV_VAR}, no {PACKAGE} package, no {cache_path()}); fetch them with '
                     f'`{FETCH_COMMAND}`.')


def sha256_of(path):
  """The hex SHA-256 of a file."""
  digest = hashlib.sha256()
  with open(path, 'rb') as file:
    for block in iter(lambda: file.read(1 << 20), b''):
      digest.update(block)
  return digest.hexdigest()


class Perciatelli44Network:
  """The frozen graph as a function of a batch: observations [B, 1099] -> Q-values [B, 3].

  Built by `load`; any batch size flies in one call of one TensorFlow function.

  Raises (at construction):
    WeightsError: the bytes are not a GraphDef, lack the `observation` or `q_values`
      tensor, or map a [1, 1099] observation to other than [1, 3] Q-values.
  """

  def __init__(self, serialized, name='the graph'):
    import tensorflow as tf
    from google.protobuf.message import DecodeError
    self._tf = tf
    graph_def = tf.compat.v1.GraphDef()
    try:
      graph_def.ParseFromString(serialized)
    except DecodeError as error:
      raise WeightsError(f'{name} is not a frozen TensorFlow graph (GraphDef): '
                         f'{error}.') from None
    missing = [tensor for tensor in (OBSERVATION, Q_VALUES)
               if tensor not in {node.name for node in graph_def.node}]
    if missing:
      raise WeightsError(f"{name} is not Perciatelli44's graph: it has no tensor "
                         f'{", ".join(missing)} (it needs {OBSERVATION} and {Q_VALUES}).')
    try:
      wrapped = tf.compat.v1.wrap_function(
          lambda: tf.graph_util.import_graph_def(graph_def, name=''), [])
      graph = wrapped.graph
      self._q_values = wrapped.prune(feeds=[graph.get_tensor_by_name(f'{OBSERVATION}:0')],
                                     fetches=graph.get_tensor_by_name(f'{Q_VALUES}:0'))
      q_values = self.q_values(np.zeros((1, constants.OBSERVATION_SIZE), np.float32))
    except (ValueError, TypeError, tf.errors.OpError) as error:
      raise WeightsError(f"{name} is not Perciatelli44's graph: "
                         f'{" ".join(str(error).split())[:300]}') from None
    if q_values.shape != (1, NUM_ACTIONS):
      raise WeightsError(f"{name} is not Perciatelli44's graph: {Q_VALUES} of one "
                         f'observation has shape {q_values.shape}, not (1, {NUM_ACTIONS}).')

  def q_values(self, observations):
    """The Q-values [B, 3] (float32) of observations [B, 1099]."""
    observations = self._tf.convert_to_tensor(np.asarray(observations, np.float32))
    return self._q_values(observations).numpy()

  def __call__(self, observations):
    """The greedy actions [B] (int64): the argmax of the Q-values, the first on ties."""
    return np.argmax(self.q_values(observations), axis=1).astype(np.int64)


@functools.lru_cache(maxsize=4)
def _load_file(path, modified_ns, size):
  del modified_ns, size  # the cache key: a file rewritten in place is loaded again
  try:
    with open(path, 'rb') as file:
      serialized = file.read()
  except OSError as error:
    raise WeightsError(f'cannot read Perciatelli44 weights {path}: {error.strerror}.') from None
  return Perciatelli44Network(serialized, name=path)


def load(path=None):
  """The network of `find_weights(path)`, loaded once per file and process.

  Raises:
    WeightsError: as `find_weights` and `Perciatelli44Network`.
  """
  path = os.path.realpath(find_weights(path))
  status = os.stat(path)
  return _load_file(path, status.st_mtime_ns, status.st_size)


# The released network: 7 hidden ReLU layers of 600 and 51 quantiles per action.
HIDDEN_LAYERS = (600,) * 7
NUM_QUANTILES = 51
_LAYER = 'Online/fully_connected'


def layer_weights(path=None):
  """The released network's [(kernel, bias), ...], first hidden layer first, output last.

  They fill QR-DQN's `mlp` quantile network of `HIDDEN_LAYERS`, `NUM_QUANTILES` quantiles
  and ReLU (`network.initial_weights`), whose output [B, 3 * 51] reshapes to [B, 3, 51]
  as the graph's does.

  Raises:
    WeightsError: as `find_weights`, or the graph lacks a layer's constants (one line).
  """
  import tensorflow as tf
  from tensorflow.python.framework import tensor_util
  path = os.path.realpath(find_weights(path))
  graph_def = tf.compat.v1.GraphDef()
  try:
    with open(path, 'rb') as file:
      graph_def.ParseFromString(file.read())
  except Exception as error:  # DecodeError or OSError: either way not the weights
    raise WeightsError(f'cannot read Perciatelli44 weights {path}: {error}.') from None
  constants_ = {node.name: node for node in graph_def.node if node.op == 'Const'}
  weights = []
  for index in range(len(HIDDEN_LAYERS) + 1):
    scope = _LAYER + (f'_{index}' if index else '')
    try:
      weights.append(tuple(tensor_util.MakeNdarray(constants_[f'{scope}/{part}'].attr['value']
                                                   .tensor).astype(np.float32)
                           for part in ('weights', 'biases')))
    except KeyError as error:
      raise WeightsError(f"{path} is not Perciatelli44's graph: no constant {error}.") from None
  return weights


def describe(path=None):
  """What identifies the weights flown, for an evaluation's records; loads them.

  Raises:
    WeightsError: as `load`.
  """
  weights = os.path.realpath(find_weights(path))
  load(weights)
  return {'weights_sha256': sha256_of(weights)}


class Perciatelli44:
  """Perciatelli44 for a batch (a baseline of the balloon's evaluation plug-in), stateless.

  Args:
    batch_size: rows of the batch (any: the network takes any batch).
    episode_length: unused (the policy has no per-episode state).
    path: the weights (None: see `find_weights`).

  Raises (at construction):
    WeightsError: as `load`.
  """

  # The spec `perciatelli44:<PATH>` flies the weights at PATH (`agents.plugins.EVALUATION`).
  spec_argument = 'PATH'
  describe = staticmethod(describe)

  def __init__(self, batch_size=None, episode_length=None, path=None):
    del batch_size, episode_length
    self._network = load(path)

  def begin_episode(self, indices, seeds=None):
    del indices, seeds

  def __call__(self, observations):
    return self._network(observations)


def read_wheel(wheel):
  """The graph's bytes from a BLE wheel.

  Raises:
    WeightsError: the file is not a zip archive or holds no `WHEEL_MEMBER`.
  """
  try:
    with zipfile.ZipFile(wheel) as archive:
      return archive.read(WHEEL_MEMBER)
  except (OSError, zipfile.BadZipFile, KeyError) as error:
    raise WeightsError(f'cannot read {WHEEL_MEMBER} from {wheel}: {error}.') from None


def download_wheel(directory):
  """Downloads BLE's wheel (no dependencies) into `directory` with pip; returns its path.

  Raises:
    WeightsError: pip fails or leaves no wheel.
  """
  command = [sys.executable, '-m', 'pip', 'download', f'{PACKAGE}=={VERSION}', '--no-deps',
             '--only-binary=:all:', '--dest', directory]
  if subprocess.run(command, check=False).returncode != 0:
    raise WeightsError(f'`{" ".join(command[2:])}` failed (see its output above); download '
                       f'the wheel elsewhere and pass it with --wheel.')
  wheels = sorted(name for name in os.listdir(directory) if name.endswith('.whl'))
  if not wheels:
    raise WeightsError(f'pip left no wheel of {PACKAGE}=={VERSION} in {directory}.')
  return os.path.join(directory, wheels[0])


def fetch(path=None, wheel=None, expected_sha256=SHA256):
  """Extracts Perciatelli44's weights from BLE's wheel (downloaded unless given) into `path`.

  Args:
    path: where to write them (None: `cache_path()`).
    wheel: a BLE 1.0.1 wheel already on disk (None: download it with pip).
    expected_sha256: the weights' SHA-256, checked before anything is written.

  Returns:
    The path written.

  Raises:
    WeightsError: the download fails, the wheel holds no weights, or other weights.
  """
  path = path or cache_path()
  with tempfile.TemporaryDirectory() as directory:
    serialized = read_wheel(wheel or download_wheel(directory))
  digest = hashlib.sha256(serialized).hexdigest()
  if digest != expected_sha256:
    raise WeightsError(f'{WHEEL_MEMBER} has SHA-256 {digest}, not {expected_sha256} '
                       f'(BLE {VERSION} ships the latter); nothing written.')
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  partial = f'{path}.partial'
  with open(partial, 'wb') as file:
    file.write(serialized)
  os.replace(partial, path)
  return path


def main(argv=None):
  """Command line: `fetch [--wheel=WHEEL] [--path=DEST]`; returns the exit code."""
  from agents.training.command_line import OneLineArgumentParser
  parser = OneLineArgumentParser(prog='agents.env.balloon.controllers.perciatelli44',
                                 description=__doc__.split('\n', maxsplit=1)[0])
  commands = parser.add_subparsers(dest='command', required=True,
                                   parser_class=OneLineArgumentParser)
  fetch_parser = commands.add_parser(
      'fetch', help=f"extract the weights from BLE {VERSION}'s wheel into the cache")
  fetch_parser.add_argument('--wheel', default=None,
                            help=f'a {PACKAGE}-{VERSION} wheel on disk (default: pip '
                            'downloads it into a temporary folder)')
  fetch_parser.add_argument('--path', default=None,
                            help=f'where to write the weights (default: {cache_path()})')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  try:
    path = fetch(args.path, args.wheel)
  except WeightsError as error:
    print(f'perciatelli44: error: {error}', file=sys.stderr)
    return 2
  print(f'Wrote {path} (SHA-256 {SHA256}); fly it with '
        '`python -m agents.scripts.evaluate --agent=perciatelli44 ...`.')
  return 0


if __name__ == '__main__':
  sys.exit(main())
