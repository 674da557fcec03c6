"""Tests of agents/env/mujoco: the MuJoCo slab against Gymnasium's tasks, and its plug-in."""

import unittest

import gymnasium
import numpy as np

from agents import plugins
from agents.env.mujoco import plugin, vector


def _references(env_id, count, max_episode_steps, **kwargs):
  return [gymnasium.make(env_id, max_episode_steps=max_episode_steps, **kwargs)
          for _ in range(count)]


def _step_both(test, env_id, steps, count=3, max_episode_steps=60, num_threads=None,
               **kwargs):
  """Steps the slab and Gymnasium's environments with the same random actions, resetting
  what ends with the same seeds; asserts every value equal; returns the episodes ended."""
  slab = vector.MujocoVectorEnv(env_id, count, max_episode_steps=max_episode_steps,
                                num_threads=num_threads, **kwargs)
  references = _references(env_id, count, max_episode_steps, **kwargs)
  seeds = [7 + index for index in range(count)]
  observ, _ = slab.reset(seed=seeds)
  expected = np.stack([env.reset(seed=seed)[0] for env, seed in zip(references, seeds)])
  np.testing.assert_array_equal(observ, expected)
  rng = np.random.default_rng(0)
  space = slab.single_action_space
  ended = 0
  for step in range(steps):
    # Beyond the bounds too: Gymnasium's tasks take such actions as they are.
    actions = rng.uniform(-1.5, 1.5, (count, *space.shape)).astype(space.dtype)
    observ, reward, terminated, truncated, infos = slab.step(actions)
    results = [env.step(action) for env, action in zip(references, actions)]
    with test.subTest(env_id=env_id, step=step):
      np.testing.assert_array_equal(observ, np.stack([result[0] for result in results]))
      np.testing.assert_array_equal(reward, [result[1] for result in results])
      np.testing.assert_array_equal(terminated, [result[2] for result in results])
      np.testing.assert_array_equal(truncated, [result[3] for result in results])
      for key in results[0][4]:
        np.testing.assert_array_equal(infos[key], [result[4][key] for result in results])
        test.assertTrue(infos[f'_{key}'].all())
    done = terminated | truncated
    if done.any():
      ended += int(done.sum())
      new_seeds = [100 * step + index if end else None for index, end in enumerate(done)]
      slab.reset(seed=new_seeds, options={'reset_mask': done})
      for index in np.flatnonzero(done):
        references[index].reset(seed=new_seeds[index])
  slab.close()
  return ended


class ExactnessTest(unittest.TestCase):
  """Bit for bit Gymnasium's: observations, rewards, ends and infos, through resets."""

  def test_every_task(self):
    for env_id in vector.TASKS:
      # Random actions end Hopper's, Walker2d's and Ant's episodes early, HalfCheetah's at
      # the time limit: resets are covered on every task.
      self.assertGreater(_step_both(self, env_id, 80), 0)

  def test_the_same_in_any_number_of_threads(self):
    for threads in (1, 3):
      _step_both(self, 'Walker2d-v5', 30, num_threads=threads)

  def test_task_options_mean_what_they_mean_in_gymnasium(self):
    _step_both(self, 'Hopper-v5', 40, healthy_reward=2.0, ctrl_cost_weight=0.01,
               exclude_current_positions_from_observation=False)
    _step_both(self, 'Ant-v5', 30, include_cfrc_ext_in_observation=False, main_body='torso',
               contact_cost_weight=1e-3)


class SlabTest(unittest.TestCase):

  def test_reset_mask_resets_only_those_rows(self):
    slab = vector.MujocoVectorEnv('HalfCheetah-v5', 3)
    first, _ = slab.reset(seed=0)
    slab.step(np.ones((3, 6), np.float32))
    moved = slab._observe()  # pylint: disable=protected-access
    observ, infos = slab.reset(seed=[None, 1, None],
                               options={'reset_mask': np.array([False, True, False])})
    np.testing.assert_array_equal(observ[[0, 2]], moved[[0, 2]])
    reference = gymnasium.make('HalfCheetah-v5')
    np.testing.assert_array_equal(observ[1], reference.reset(seed=1)[0])
    # An int seeds environment i with seed + i, as Gymnasium's vector environments do.
    np.testing.assert_array_equal(first[2], reference.reset(seed=2)[0])
    np.testing.assert_array_equal(infos['_x_position'], [False, True, False])
    slab.close()

  def test_bad_input_is_named(self):
    with self.assertRaisesRegex(ValueError, "not 'Humanoid-v5'"):
      vector.MujocoVectorEnv('Humanoid-v5', 2)
    with self.assertRaisesRegex(ValueError, 'num_threads must be at least 1, got 0'):
      vector.MujocoVectorEnv('HalfCheetah-v5', 2, num_threads=0)
    with self.assertRaisesRegex(ValueError, 'does not render'):
      vector.MujocoVectorEnv('HalfCheetah-v5', 2, render_mode='rgb_array')
    slab = vector.MujocoVectorEnv('HalfCheetah-v5', 2)
    slab.reset(seed=0)
    with self.assertRaisesRegex(ValueError, r'expected actions of shape \(2, 6\), got \(6,\)'):
      slab.step(np.zeros(6, np.float32))
    slab.close()


class PluginTest(unittest.TestCase):

  def test_registered_for_the_tasks_it_steps(self):
    self.assertEqual(set(plugin.TASK_IDS), set(vector.TASKS))
    for env_id in plugin.TASK_IDS:
      self.assertIs(plugins.VECTOR_ENVIRONMENTS.get(env_id), vector.MujocoVectorEnv)
    self.assertNotIn('Pendulum-v1', plugins.VECTOR_ENVIRONMENTS)

  def test_batchppo_configs_step_the_slab(self):
    from agents import configs
    from agents.training import builders
    config = configs.resolve('cheetah', {'environment.num_agents': 4})
    self.assertTrue(config.environment.vector)
    self.assertFalse(configs.resolve('agents.scripts.configs:pendulum', {}).environment.vector)
    slab = builders.make_vector_env(config, 4)
    self.assertIsInstance(slab, vector.MujocoVectorEnv)
    self.assertEqual(slab.max_episode_steps, 1000)
    slab.close()


if __name__ == '__main__':
  unittest.main()
