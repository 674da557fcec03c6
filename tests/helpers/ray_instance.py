"""The Ray instances of the tests that use Ray: a local one, started as the package starts
it, and multi-node test clusters, both as cheap to start as Ray allows.

Ray's start-up options that cost CPU and check nothing here are turned off:
  - no worker processes started ahead of the first task or actor
    (`RAY_prestart_worker_first_driver=0`): the package's tasks and actors carry a runtime
    environment of their own, so Ray starts fresh workers for them anyway;
  - on a test cluster, no autoscaler monitor and no log monitor (the package reads no
    worker logs through the driver: `log_to_driver=False`), and no dashboard.
"""

import contextlib
import io
import logging
import os
import sys
from unittest import mock

from tests.helpers.processes import ROOT

# Read by each raylet as it starts (a node's raylet inherits the starting process's
# environment).
RAYLET_ENVIRON = {'RAY_prestart_worker_first_driver': '0'}
# The nodes of a test cluster: one CPU each, so that a run's one-CPU slabs spread.
NODE_ARGS = {'num_cpus': 1, 'include_dashboard': False}
HEAD_ARGS = dict(NODE_ARGS, no_monitor=True, include_log_monitor=False)


def _worker_paths():
  """This checkout first, then the caller's PYTHONPATH: what Ray's workers import from."""
  paths = [ROOT] + [os.path.abspath(path)
                    for path in os.environ.get('PYTHONPATH', '').split(os.pathsep) if path]
  return os.pathsep.join(dict.fromkeys(paths))


@contextlib.contextmanager
def _start_up_lines_held():
  """Holds back Ray's start-up lines (the instance started, its token authentication),
  shown only if the start fails: they are about the fixture, not about a test."""
  # Importing Ray configures its logger, whose handler keeps the stderr of that moment.
  import ray  # noqa: F401
  logger = logging.getLogger('ray')
  handlers = logger.handlers[:]
  held = io.StringIO()
  logger.handlers = [logging.StreamHandler(held)]
  try:
    yield
  except BaseException:
    sys.stderr.write(held.getvalue())
    raise
  finally:
    logger.handlers = handlers


def start(num_cpus=1):
  """Starts a local Ray instance through `ray_runner.init`, the package's one start-up of Ray
  (its workers run at niceness 0, not Ray's 15, which on a busy machine starves them), with
  this checkout first on the workers' PYTHONPATH; returns the `ray` module.

  One CPU by default: one worker then runs every task in turn, and imports the package (and
  TensorFlow) once instead of once per CPU.
  """
  from agents.evaluation import ray_runner
  with _start_up_lines_held(), mock.patch.dict(
      os.environ, PYTHONPATH=_worker_paths(), **RAYLET_ENVIRON):
    return ray_runner.init(num_cpus=num_cpus)


def cluster_environ():
  """The environment a test cluster's nodes (and so its actors) start with, beside this
  process's: this checkout on PYTHONPATH, workers at niceness 0, one BLAS thread each."""
  return {'PYTHONPATH': ROOT, 'RAY_worker_niceness': '0',
          'OPENBLAS_NUM_THREADS': '1', 'OMP_NUM_THREADS': '1'}


def start_cluster(num_nodes=2):
  """A `ray.cluster_utils.Cluster` of `num_nodes` one-CPU nodes (the head among them), all
  up, started with `cluster_environ`; the caller shuts it down. The driver is not
  connected to it."""
  from ray import cluster_utils
  with _start_up_lines_held(), mock.patch.dict(os.environ, **cluster_environ(),
                                               **RAYLET_ENVIRON):
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args=dict(HEAD_ARGS))
    for _ in range(num_nodes - 1):
      cluster.add_node(**NODE_ARGS)
    cluster.wait_for_nodes()
  return cluster


def join(address):
  """Connects this process to the test cluster at `address` as the package does
  (`ray_cluster.init`), without Ray's lines about connecting."""
  from agents.tools import ray_cluster
  with _start_up_lines_held():
    ray_cluster.init(address)
