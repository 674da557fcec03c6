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
   which one fetch fills with it and the generative wind's decoder (ble_models.py):

```sh
python -m agents.env.balloon.ble_models fetch [--wheel=WHEEL]
```

It downloads BLE 1.0.1's wheel with pip (no dependencies, 35 MB) into a temporary
folder, or reads `--wheel`, extracts both files and checks their SHA-256 (`SHA256` here).
`python -m agents.env.balloon.controllers.perciatelli44 fetch [--wheel=WHEEL]
[--path=DEST]` still works: without `--path` it is that fetch; with it, it writes the graph
alone to DEST. Then, batched over a whole slab:

```sh
python -m agents.scripts.evaluate --agent=perciatelli44 --suite=small_eval --output_dir=DIR
```

The balloon's evaluation plug-in lists `Perciatelli44` among its baselines, so the
evaluation and `run_helpers.create_agent('perciatelli44', 3, (1099,))` fly it; TensorFlow
is imported when the weights are loaded, not when this module is.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents import plugins
from agents.env.balloon import ble_models, constants
from agents.env.balloon.ble_models import WeightsError, sha256_of

__all__ = ['WeightsError', 'sha256_of']

PACKAGE = ble_models.PACKAGE
VERSION = ble_models.VERSION
MODEL = ble_models.PERCIATELLI44
WHEEL_MEMBER = MODEL.member
SHA256 = MODEL.sha256
ENV_VAR = MODEL.env_var
FETCH_COMMAND = ble_models.FETCH_COMMAND
OBSERVATION = 'observation'
Q_VALUES = 'q_values'
NUM_ACTIONS = 3


def cache_path() -> str:
  """Where `fetch` puts the weights: `$XDG_CACHE_HOME/agents/perciatelli44.pb`."""
  return ble_models.cache_path(MODEL)


def find_weights(path: str | None = None) -> str:
  """The weights' file: `path`, else `$AGENTS_PERCIATELLI44`'s, else BLE's, else the cache's.

  Raises:
    WeightsError: `path` or the variable's file does not exist, or no weights are found
      (the message names the fetch command).
  """
  found = ble_models.find(MODEL, path)
  if found is None:
    raise WeightsError(ble_models.missing_message(MODEL))
  return found


class Perciatelli44Network:
  """The frozen graph as a function of a batch: observations [B, 1099] -> Q-values [B, 3].

  Built by `load`; any batch size flies in one call of one TensorFlow function.

  Raises (at construction):
    WeightsError: the bytes are not a GraphDef, lack the `observation` or `q_values`
      tensor, or map a [1, 1099] observation to other than [1, 3] Q-values.
  """

  def __init__(self, serialized: bytes, name: str = 'the graph') -> None:
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

  def q_values(self, observations: np.ndarray) -> np.ndarray:
    """The Q-values [B, 3] (float32) of observations [B, 1099]."""
    observations = self._tf.convert_to_tensor(np.asarray(observations, np.float32))
    return self._q_values(observations).numpy()

  def __call__(self, observations: np.ndarray) -> np.ndarray:
    """The greedy actions [B] (int64): the argmax of the Q-values, the first on ties."""
    return np.argmax(self.q_values(observations), axis=1).astype(np.int64)


@functools.lru_cache(maxsize=4)
def _load_file(path: str, modified_ns: int, size: int) -> Perciatelli44Network:
  del modified_ns, size  # the cache key: a file rewritten in place is loaded again
  try:
    with open(path, 'rb') as file:
      serialized = file.read()
  except OSError as error:
    raise WeightsError(f'cannot read Perciatelli44 weights {path}: {error.strerror}.') from None
  return Perciatelli44Network(serialized, name=path)


def load(path: str | None = None) -> Perciatelli44Network:
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


def layer_weights(path: str | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
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


def describe(path: str | None = None) -> dict[str, Any]:
  """What identifies the weights flown, for an evaluation's records; loads them.

  Raises:
    WeightsError: as `load`.
  """
  weights = os.path.realpath(find_weights(path))
  load(weights)
  return {'weights_sha256': sha256_of(weights)}


class Perciatelli44(plugins.Baseline):
  """Perciatelli44 for a batch (a baseline of the balloon's evaluation plug-in), stateless.

  Args:
    batch_size: rows of the batch (any: the network takes any batch).
    episode_length: unused (the policy has no per-episode state).
    path: the weights (None: see `find_weights`).

  Raises (at construction):
    WeightsError: as `load`.
  """

  # The spec `perciatelli44:<PATH>` flies the weights at PATH (`agents.plugins.Baseline`).
  spec_argument = 'PATH'
  describe = staticmethod(describe)

  def __init__(self, batch_size: int | None = None, episode_length: int | None = None,
               path: str | None = None) -> None:
    del batch_size, episode_length
    self._network = load(path)

  def __call__(self, observations: np.ndarray) -> np.ndarray:
    return self._network(observations)


def read_wheel(wheel: str) -> bytes:
  """The graph's bytes from a BLE wheel.

  Raises:
    WeightsError: the file is not a zip archive or holds no `WHEEL_MEMBER`.
  """
  return ble_models.read_wheel(wheel, (MODEL,))[MODEL.name]


def fetch(path: str | None = None, wheel: str | None = None,
          expected_sha256: str = SHA256) -> str:
  """Extracts Perciatelli44's weights from BLE's wheel (downloaded unless given).

  Args:
    path: where to write the graph alone (None: `ble_models.fetch`, which writes it and
      the generative wind's decoder to the cache).
    wheel: a BLE 1.0.1 wheel already on disk (None: download it with pip).
    expected_sha256: the weights' SHA-256, checked before anything is written.

  Returns:
    The path written.

  Raises:
    WeightsError: the download fails, the wheel holds no weights, or other weights.
  """
  if path is None:
    return ble_models.fetch(wheel, expected={MODEL.name: expected_sha256})[MODEL.name]
  with tempfile.TemporaryDirectory() as directory:
    serialized = read_wheel(wheel or ble_models.download_wheel(directory))
  return ble_models.write_checked(serialized, path, expected_sha256, WHEEL_MEMBER)


def main(argv: Sequence[str] | None = None) -> int:
  """Command line: `fetch [--wheel=WHEEL] [--path=DEST]`; returns the exit code."""
  return ble_models.fetch_command(
      'agents.env.balloon.controllers.perciatelli44', __doc__.split('\n', maxsplit=1)[0],
      ('path', f'where to write the weights (default: {cache_path()})'),
      lambda wheel, path: fetch(path, wheel),
      lambda path: [f'Wrote {path} (SHA-256 {SHA256}); fly it with '
                    '`python -m agents.scripts.evaluate --agent=perciatelli44 ...`.'], argv)


if __name__ == '__main__':
  sys.exit(main())
