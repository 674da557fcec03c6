"""Tests of agents/env/balloon/precompile.py: it runs every kernel a run or an evaluation uses."""

import unittest

import numba

from agents.env.balloon import precompile
from agents.env.balloon.controllers import baselines
from agents.env.balloon.wind import kernels

# Kernels only the tests call.
_TEST_ONLY = {'exp_negative'}


class PrecompileTest(unittest.TestCase):

  def test_every_kernel_is_compiled(self):
    precompile.precompile()
    dispatchers = {f'{module.__name__}.{name}': value
                   for module in (kernels, baselines) for name, value in vars(module).items()
                   if isinstance(value, numba.core.registry.CPUDispatcher)
                   and name not in _TEST_ONLY and not value.targetoptions.get('inline')}
    self.assertGreaterEqual(len(dispatchers), 9)
    self.assertEqual([name for name, dispatcher in dispatchers.items()
                      if not dispatcher.signatures], [])


if __name__ == '__main__':
  unittest.main()
