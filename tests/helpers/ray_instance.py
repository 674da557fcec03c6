"""The local Ray instance of the tests that use Ray, started as the package starts it."""

import io
import logging
import os
import sys
from unittest import mock

from tests.helpers.processes import ROOT


def start(num_cpus=2):
  """Starts a local Ray instance through `ray_runner.init`, the package's one start-up of Ray
  (its workers run at niceness 0, not Ray's 15, which on a busy machine starves them), with
  this checkout first on the workers' PYTHONPATH; returns the `ray` module.

  Ray's start-up lines (the instance started, its token authentication) are held back, and
  shown only if the start fails: they are about the fixture, not about a test.
  """
  from agents.evaluation import ray_runner
  paths = [ROOT] + [os.path.abspath(path)
                    for path in os.environ.get('PYTHONPATH', '').split(os.pathsep) if path]
  # Importing Ray configures its logger, whose handler keeps the stderr of that moment.
  import ray  # noqa: F401
  logger = logging.getLogger('ray')
  handlers = logger.handlers[:]
  held = io.StringIO()
  logger.handlers = [logging.StreamHandler(held)]
  try:
    with mock.patch.dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys(paths))):
      return ray_runner.init(num_cpus=num_cpus)
  except BaseException:
    sys.stderr.write(held.getvalue())
    raise
  finally:
    logger.handlers = handlers
