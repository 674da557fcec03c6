"""Tests of agents/env/balloon/renderer.py: rgb_array frames and human mode."""

import unittest

import matplotlib

matplotlib.use('Agg')

import numpy as np  # noqa: E402

from agents.env.balloon.env import BalloonEnv, BalloonVectorEnv  # noqa: E402


class RendererTest(unittest.TestCase):

  def test_rgb_array_frame(self):
    env = BalloonEnv(render_mode='rgb_array', wind='static')
    env.reset(seed=3)
    for action in (0, 1, 2):
      env.step(action)
    frame = env.render()
    self.assertEqual(frame.dtype, np.uint8)
    self.assertEqual(frame.ndim, 3)
    self.assertEqual(frame.shape[2], 3)
    self.assertGreater(frame.std(), 0)
    flight = env._renderer.flight()  # noqa: SLF001
    self.assertEqual(len(flight['x']), 4)
    env.close()

  def test_human_mode_draws(self):
    env = BalloonEnv(render_mode='human', wind='static')
    env.reset(seed=3)
    env.step(1)
    self.assertIsNone(env.render())
    env.close()

  def test_no_render_mode(self):
    env = BalloonEnv(wind='static')
    env.reset(seed=1)
    self.assertIsNone(env.render())
    with self.assertRaises(ValueError):
      BalloonEnv(render_mode='ansi')

  def test_vector_env_renders_balloon_zero(self):
    envs = BalloonVectorEnv(2, wind='static', render_mode='rgb_array')
    envs.reset(seed=1)
    envs.step(np.array([1, 1]))
    self.assertEqual(envs.render().ndim, 3)


if __name__ == '__main__':
  unittest.main()
