"""The float32 GP prediction against a float64 GP, seen through the observation.

Two slabs of the same seeds step in lockstep with the same actions, one predicting in
float32 (the environment's default) and one in float64. The GP feeds only the
observation, so the physics stays identical and the wind column's features differ only
by the GP's rounding: the uncertainty feature within 2e-4 (docs/fidelity.md).
"""

import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.env import BalloonVectorEnv
from agents.env.balloon.wind import wind_gp

_BALLOONS = 4
_STEPS = 120


def _slab(dtype):
  env = BalloonVectorEnv(_BALLOONS, wind='procedural')
  env.simulator._wind.gp = wind_gp.WindGP(_BALLOONS, predict_dtype=dtype)  # noqa: SLF001
  env.reset(seed=0)
  return env


class Float32PredictionTest(unittest.TestCase):

  def test_holding_altitude_keeps_the_column_within_its_tolerance_and_the_physics_equal(self):
    # Holding altitude crowds the GP's window at one pressure: the worst case for rounding.
    envs = [_slab(np.float32), _slab(np.float64)]
    self.addCleanup(lambda: [env.close() for env in envs])
    actions = np.full(_BALLOONS, constants.STAY)
    worst = np.zeros(3)
    for _ in range(_STEPS):
      single, double = (env.step(actions)[0].astype(np.float64) for env in envs)
      ambient = constants.NUM_AMBIENT_FEATURES
      np.testing.assert_array_equal(single[:, :ambient], double[:, :ambient])
      column = np.abs(single[:, ambient:] - double[:, ambient:]).reshape(_BALLOONS, -1, 3)
      worst = np.maximum(worst, column.max(axis=(0, 1)))
    uncertainty, bearing, speed = worst
    self.assertLess(uncertainty, 2e-4)
    self.assertLess(speed, 1e-5)
    self.assertLess(bearing, 1e-5)


if __name__ == '__main__':
  unittest.main()
