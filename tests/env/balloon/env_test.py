"""Tests of agents/env/balloon/env.py and the registration: the Gymnasium faces."""

import unittest
import warnings

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import agents.env  # noqa: F401 - registers the environment
from agents.env import registration
from agents.env.balloon.env import BalloonEnv, BalloonVectorEnv
from agents.tools.batch_env import BatchEnv

ENV_ID = 'BalloonLearningEnvironment-v0'  # the public id, spelled out on purpose


class RegistrationTest(unittest.TestCase):

  def test_id_and_seed_bound_live_in_constants(self):
    from agents.env.balloon import constants, episode_start
    self.assertEqual(constants.BALLOON_ENV_ID, ENV_ID)
    self.assertIs(registration.BALLOON_ENV_ID, constants.BALLOON_ENV_ID)
    self.assertEqual(episode_start.check_seed(constants.MAX_SEED - 1), constants.MAX_SEED - 1)
    with self.assertRaises(ValueError):
      episode_start.check_seed(constants.MAX_SEED)

  def test_make_after_import(self):
    env = gymnasium.make(ENV_ID, wind='procedural')
    self.assertEqual(env.spec.max_episode_steps, 960)
    self.assertIsInstance(env.unwrapped, BalloonEnv)
    observation, _ = env.reset(seed=0)
    self.assertEqual(observation.shape, (1099,))
    env.close()

  def test_make_with_module_prefix(self):
    # Gymnasium 1.x no longer loads `gymnasium.envs` plugins by itself; the 'module:id'
    # form imports the registering module first.
    env = gymnasium.make('agents.env:BalloonLearningEnvironment-v0', wind='procedural')
    self.assertEqual(env.spec.max_episode_steps, 960)
    env.close()

  def test_register_all_is_idempotent_and_is_the_entry_point(self):
    with warnings.catch_warnings():
      warnings.simplefilter('error')
      registration.register_all()
    with open('setup.py') as setup:
      self.assertIn('agents.env.registration:register_all', setup.read())

  def test_make_vec_uses_the_slab(self):
    envs = gymnasium.make_vec(ENV_ID, num_envs=3, wind='static')
    self.assertIsInstance(envs.unwrapped, BalloonVectorEnv)
    self.assertEqual(envs.metadata['autoreset_mode'], AutoresetMode.DISABLED)
    self.assertEqual(envs.unwrapped.simulator.max_episode_steps, 960)
    envs.close()


class SingleEnvTest(unittest.TestCase):

  def test_env_checker(self):
    with warnings.catch_warnings():
      warnings.simplefilter('error')  # the checker reports problems as warnings
      # But one: the env keeps BLE's `seed(seed)` on purpose (docs/coming_from_ble.md),
      # which Gymnasium's checker flags as dropped from Gymnasium's API.
      warnings.filterwarnings('ignore', message='.*Official support for the `seed` function')
      check_env(gymnasium.make(ENV_ID, wind='static').unwrapped)

  def test_same_seed_same_episode(self):
    runs = []
    for _ in range(2):
      env = BalloonEnv(wind='procedural')
      observations = [env.reset(seed=123)[0]]
      for action in (0, 2, 1, 0):
        observations.append(env.step(action)[0])
      runs.append(np.array(observations))
    np.testing.assert_array_equal(runs[0], runs[1])

  def test_unseeded_resets_follow_the_first_seed(self):
    first, second = BalloonEnv(wind='static'), BalloonEnv(wind='static')
    first.reset(seed=5)
    second.reset(seed=5)
    np.testing.assert_array_equal(first.reset()[0], second.reset()[0])

  def test_step_returns_and_state(self):
    env = BalloonEnv(wind='static')
    env.reset(seed=2)
    observation, reward, terminated, truncated, info = env.step(np.int64(1))
    self.assertEqual(observation.dtype, np.float32)
    self.assertIsInstance(reward, float)
    self.assertFalse(terminated or truncated)
    for key in ('distance_km', 'out_of_power', 'envelope_burst', 'zeropressure',
                'time_elapsed_s', 'battery_soc', 'pressure', 'superpressure'):
      self.assertIn(key, info)
    state = env.read_state()
    for key in ('pressure', 'superpressure', 'volume', 'internal_temperature', 'mols_air',
                'battery_charge', 'solar_power', 'acs_power', 'power_load', 'status'):
      self.assertIn(key, state)
    self.assertEqual(state['time_elapsed_s'], 180.0)

  def test_explicit_wind_and_initial_state(self):
    env = BalloonEnv(wind='static')
    env.reset(seed=1, options={'initial_state': {
        'start_time': 1.37e9, 'station_lat_deg': 0.0, 'station_lng_deg': 0.0, 'x': 0.0,
        'y': 0.0, 'pressure': 9000.0}})
    env.step_with_wind(1, 3.0, 4.0)
    state = env.read_state()
    self.assertAlmostEqual(state['x'], 540.0)
    self.assertAlmostEqual(state['y'], 720.0)
    with self.assertRaisesRegex(ValueError, 'finite'):
      env.step_with_wind(1, np.inf, 0.0)

  def test_bad_input(self):
    env = BalloonEnv(wind='static')
    for seed, error in ((-3, ValueError), (2.5, TypeError), ('1', TypeError)):
      with self.assertRaises(error, msg=repr(seed)):
        env.reset(seed=seed)
    env.reset(seed=1)
    for action, error in ((3, ValueError), (-1, ValueError), ('up', TypeError),
                          (0.5, TypeError), (True, TypeError), ([0, 1], TypeError)):
      with self.assertRaises(error, msg=repr(action)):
        env.step(action)
    with self.assertRaisesRegex(ValueError, 'Unknown reset options'):
      env.reset(seed=1, options={'bogus': 1})


class VectorEnvTest(unittest.TestCase):

  def test_reset_mask_and_truncation(self):
    envs = BalloonVectorEnv(3, max_episode_steps=2, wind='static')
    observation, infos = envs.reset(seed=10)
    self.assertEqual(observation.shape, (3, 1099))
    np.testing.assert_array_equal(infos['episode_seed'], [10, 11, 12])
    envs.step(np.array([0, 1, 2]))
    _, reward, terminated, truncated, infos = envs.step(np.array([0, 1, 2]))
    np.testing.assert_array_equal(truncated, True)
    self.assertEqual(infos['distance_km'].shape, (3,))
    self.assertTrue(infos['_distance_km'].all())
    mask = np.array([False, True, False])
    observation, infos = envs.reset(seed=[None, 42, None], options={'reset_mask': mask})
    np.testing.assert_array_equal(infos['_episode_seed'], mask)
    self.assertEqual(infos['episode_seed'][1], 42)
    _, _, _, truncated, _ = envs.step(np.array([1, 1, 1]))
    np.testing.assert_array_equal(truncated, [True, False, True])

  def test_unseeded_slab_resets_follow_the_seeds_given(self):
    # Training seeds each balloon's first episode and lets a balloon that ends draw the
    # next one: two slabs seeded alike draw the same (the slabs themselves are unseeded).
    drawn = []
    for _ in range(2):
      envs = BalloonVectorEnv(3, wind='static')
      envs.reset(seed=[11, 12, 13])
      mask = np.array([True, False, True])
      _, infos = envs.reset(options={'reset_mask': mask})
      drawn.append(infos['episode_seed'][mask])
    np.testing.assert_array_equal(drawn[0], drawn[1])
    self.assertFalse(np.isin(drawn[0], [11, 12, 13]).any())

  def test_slab_seed_matches_single_env(self):
    envs = BalloonVectorEnv(2, wind='static')
    observation, _ = envs.reset(seed=[7, 8])
    env = BalloonEnv(wind='static')
    np.testing.assert_allclose(observation[1], env.reset(seed=8)[0], atol=1e-6)

  def test_batch_env_contract(self):
    batch = BatchEnv([BalloonVectorEnv(3, wind='static')])
    self.assertEqual(len(batch), 3)
    observation, infos = batch.reset()
    self.assertEqual(observation.shape, (3, 1099))
    observation, reward, terminated, truncated, infos = batch.step(np.array([0, 1, 2]))
    self.assertEqual(observation.shape, (3, 1099))
    self.assertEqual(reward.shape, (3,))
    observation, infos = batch.reset(indices=[2], seeds=[5])
    self.assertEqual(observation.shape, (1, 1099))
    batch.close()

  def test_bad_input(self):
    envs = BalloonVectorEnv(2, wind='static')
    envs.reset(seed=1)
    with self.assertRaises(ValueError):
      envs.step(np.array([0, 5]))
    with self.assertRaises(ValueError):
      envs.reset(seed=[1])
    with self.assertRaises(ValueError):
      envs.reset(options={'reset_mask': np.array([1, 0])})
    with self.assertRaisesRegex(ValueError, 'finite'):
      envs.step_with_wind(np.array([1, 1]), np.array([0.0, np.nan]), np.zeros(2))


if __name__ == '__main__':
  unittest.main()
