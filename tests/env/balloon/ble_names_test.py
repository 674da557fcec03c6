"""Tests for agents/env/balloon/ble_names.py: BLE's constructor keywords of the balloon,
and the BLE names the environment answers (`seed`, `radius`, `get_simulator_state`,
`info['time_elapsed']`)."""

import datetime
import unittest

import gymnasium
import numpy as np

import agents.env  # noqa: F401 - registers the balloon
from agents.env.balloon import ble_names, constants

ENV_ID = constants.BALLOON_ENV_ID


def make(**kwargs):
  env = gymnasium.make(ENV_ID, **kwargs)
  return env


class WindFieldTest(unittest.TestCase):

  def test_bles_names_map_to_wind_modes(self):
    self.assertEqual(ble_names.wind_mode('simple'), 'static')
    self.assertEqual(ble_names.wind_mode('generative'), 'generative')
    self.assertEqual(ble_names.wind_mode('procedural'), 'procedural')
    with self.assertRaisesRegex(ValueError, "unknown wind field 'gusty'"):
      ble_names.wind_mode('gusty')

  def test_the_factory_keyword_takes_names_factories_and_bles_callables(self):
    self.assertEqual(make(wind_field_factory='simple').unwrapped.wind, 'static')
    factory = ble_names.get_wind_field_factory('simple')
    self.assertEqual(factory(), 'static')
    self.assertEqual(make(wind_field_factory=factory).unwrapped.wind, 'static')

    def SimpleStaticWindField():  # noqa: N802 - BLE's class, known by its name
      raise AssertionError('never called')
    self.assertEqual(make(wind_field_factory=SimpleStaticWindField).unwrapped.wind, 'static')
    self.assertEqual(make().unwrapped.wind, 'generative')  # BLE's default
    with self.assertRaisesRegex(TypeError, 'wind_field_factory=other: .*get_wind_field_factory'):
      def other():
        return None
      make(wind_field_factory=other)
    with self.assertRaisesRegex(ValueError, 'pass the wind once'):
      make(wind_field_factory='simple', wind='static')
    with self.assertRaises(ValueError):
      ble_names.get_wind_field_factory('not_a_valid_wind_field')

  def test_the_static_field_is_flown(self):
    simple = make(wind_field_factory='simple')
    static = make(wind='static')
    first = simple.reset(seed=4)[0]
    np.testing.assert_array_equal(first, static.reset(seed=4)[0])
    np.testing.assert_array_equal(simple.step(2)[0], static.step(2)[0])


class EnvironmentTest(unittest.TestCase):

  def test_seed_at_construction_and_by_method_make_resets_repeat(self):
    first = make(seed=7).reset()[1]['episode_seed']
    self.assertEqual(make(seed=7).reset()[1]['episode_seed'], first)
    env = make()
    env.unwrapped.seed(7)
    self.assertEqual(env.reset()[1]['episode_seed'], first)
    self.assertNotEqual(env.reset()[1]['episode_seed'], first)  # the stream goes on
    with self.assertRaises(ValueError):
      env.unwrapped.seed(-1)

  def test_radius_is_the_rewards(self):
    env = make(station_keeping_radius_km=10.0)
    self.assertEqual((env.unwrapped.radius.km, env.unwrapped.radius.meters), (10.0, 10_000.0))
    self.assertEqual(make().unwrapped.radius.kilometers, 50.0)
    wide = make(station_keeping_radius_km=5000.0)
    _, info = wide.reset(seed=3)
    reward = wide.step(1)[1]
    self.assertGreater(info['distance_km'], 50.0)  # outside BLE's 50 km, inside 5,000 km
    self.assertEqual(reward, 1.0)
    for bad in (0, -5, 'far', True):
      with self.assertRaisesRegex(ValueError, 'station_keeping_radius_km'):
        make(station_keeping_radius_km=bad)

  def test_time_elapsed_is_a_timedelta_beside_seconds(self):
    env = make()
    _, info = env.reset(seed=1)
    self.assertEqual(info['time_elapsed'], datetime.timedelta())
    for step in range(1, 4):
      info = env.step(1)[4]
      self.assertEqual(info['time_elapsed'], datetime.timedelta(minutes=3 * step))
      self.assertEqual(info['time_elapsed_s'], 180.0 * step)

  def test_simulator_state_repeats_with_the_seed(self):
    states = []
    for _ in range(2):
      env = make()
      env.reset(seed=11)
      for action in (0, 2, 2, 1):
        env.step(action)
      states.append(env.unwrapped.get_simulator_state().balloon_state)
    self.assertEqual(states[0], states[1])
    self.assertEqual(states[0].time_elapsed, datetime.timedelta(minutes=12))
    self.assertEqual(states[0].x, env.unwrapped.read_state()['x'])

  def test_renderer_matplotlib_is_render_mode_rgb_array(self):
    self.assertEqual(make(renderer='matplotlib').unwrapped.render_mode, 'rgb_array')
    with self.assertRaisesRegex(TypeError, 'renderer=object: Gymnasium draws through '
                                'render_mode'):
      make(renderer=object())


if __name__ == '__main__':
  unittest.main()
