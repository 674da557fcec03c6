"""The local Ray instance of the tests that use Ray, started as the package starts it."""

import os
from unittest import mock

from tests.helpers.processes import ROOT


def start(num_cpus=2):
  """Starts a local Ray instance through `ray_runner.init`, the package's one start-up of Ray
  (its workers run at niceness 0, not Ray's 15, which on a busy machine starves them), with
  this checkout first on the workers' PYTHONPATH; returns the `ray` module."""
  from agents.evaluation import ray_runner
  paths = [ROOT] + [os.path.abspath(path)
                    for path in os.environ.get('PYTHONPATH', '').split(os.pathsep) if path]
  with mock.patch.dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys(paths))):
    return ray_runner.init(num_cpus=num_cpus)
