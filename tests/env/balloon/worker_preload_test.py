"""Tests of agents/env/balloon/worker_preload.py and of `launch.preload_environment`: the
balloon's worker processes start with its Numba kernels loaded.

In a fresh process (a forkserver starts once per process, with the preload of that
moment): a worker forked after `preload_environment(balloon)` finds every kernel loaded
before it runs anything of the balloon, and a worker started without it (spawn) finds
none, so the check can fail.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from agents import plugins
from agents.env.balloon import constants
from agents.tools.transport import launch
from tests.helpers.processes import ROOT

_PROBE = """
import json, sys

import numba

from agents.tools.transport import launch


def loaded_kernels(_):
  # What this worker has loaded, before anything here runs a kernel.
  from agents.env.balloon.controllers import baselines
  from agents.env.balloon.wind import kernels
  return sorted(f'{module.__name__}.{name}' for module in (kernels, baselines)
                for name, value in vars(module).items()
                if isinstance(value, numba.core.registry.CPUDispatcher) and value.signatures)


if __name__ == '__main__':
  launch.preload_environment(sys.argv[1])
  found = {}
  for method in ('spawn', 'forkserver'):
    with launch.get_context(method).Pool(1) as pool:
      found[method] = pool.map(loaded_kernels, [0])[0]
  print(json.dumps(found))
"""


class WorkerPreloadTest(unittest.TestCase):

  def test_the_balloon_registers_its_preload(self):
    self.assertEqual(plugins.ENVIRONMENTS.get(constants.BALLOON_ENV_ID).worker_preloads,
                     ('agents.env.balloon.worker_preload',))

  def test_preload_environment_adds_the_modules_once_and_nothing_for_others(self):
    # The list as a process starts (an earlier test here may have added the balloon's).
    before = [module for module in launch.FORKSERVER_PRELOAD if 'balloon' not in module]
    with mock.patch.object(launch, 'FORKSERVER_PRELOAD', list(before)):
      launch.preload_environment('CartPole-v1')
      self.assertEqual(launch.FORKSERVER_PRELOAD, before)
      for _ in range(2):
        launch.preload_environment(constants.BALLOON_ENV_ID)
      self.assertEqual(launch.FORKSERVER_PRELOAD,
                       before + ['agents.env.balloon.worker_preload'])

  def test_a_forked_worker_starts_with_the_kernels_loaded(self):
    script = os.path.join(tempfile.mkdtemp(prefix='worker-preload-'), 'probe.py')
    with open(script, 'w', encoding='utf-8') as file:
      file.write(_PROBE)
    process = subprocess.run(
        [sys.executable, script, constants.BALLOON_ENV_ID], cwd=ROOT, capture_output=True,
        text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT), check=False)
    self.assertEqual(process.returncode, 0, process.stderr[-3000:])
    found = json.loads(process.stdout.strip().splitlines()[-1])
    self.assertEqual(found['spawn'], [])
    self.assertIn('agents.env.balloon.wind.kernels.posterior_means', found['forkserver'])
    self.assertGreaterEqual(len(found['forkserver']), 9, found['forkserver'])


if __name__ == '__main__':
  unittest.main()
