"""Tests of agents/env/balloon/simulator.py: the slab core."""

import datetime
import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.episode_start import InitialState
from agents.env.balloon.simulator import BalloonSimulator


def _actions(rng, count):
  return rng.integers(0, 3, count)


class DeterminismTest(unittest.TestCase):

  def test_same_seed_same_episode(self):
    runs = []
    for _ in range(2):
      sim = BalloonSimulator(2, wind='procedural')
      observations = [sim.reset(seeds=[11, 12])]
      rng = np.random.default_rng(0)
      for _ in range(8):
        observations.append(sim.step(_actions(rng, 2))[0])
      runs.append((np.array(observations), sim.read_state()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    for key in runs[0][1]:
      np.testing.assert_array_equal(runs[0][1][key], runs[1][1][key], key)

  def test_different_seeds_differ(self):
    sim = BalloonSimulator(2, wind='procedural')
    observation = sim.reset(seeds=[1, 2])
    self.assertFalse(np.array_equal(observation[0], observation[1]))

  def test_slab_equals_balloons_stepped_one_at_a_time(self):
    seeds = [21, 22, 23]
    slab = BalloonSimulator(3, wind='procedural')
    slab_observations = [slab.reset(seeds=seeds)]
    singles = [BalloonSimulator(1, wind='procedural') for _ in seeds]
    single_observations = [[sim.reset(seeds=[seed])[0]] for sim, seed in zip(singles, seeds)]
    rng = np.random.default_rng(3)
    for _ in range(12):
      actions = _actions(rng, 3)
      slab_observations.append(slab.step(actions)[0])
      for index, sim in enumerate(singles):
        single_observations[index].append(sim.step(actions[index:index + 1])[0][0])
    slab_state = slab.read_state()
    for index, sim in enumerate(singles):
      np.testing.assert_allclose(np.array(slab_observations)[:, index],
                                 np.array(single_observations[index]), atol=1e-5)
      single_state = sim.read_state()
      for key in ('pressure', 'superpressure', 'internal_temperature', 'mols_air', 'x', 'y',
                  'battery_charge'):
        np.testing.assert_allclose(slab_state[key][index], single_state[key][0], rtol=1e-9,
                                   err_msg=key)


class InitialStateTest(unittest.TestCase):

  def _initial_state(self, **overrides):
    values = dict(start_time=datetime.datetime(2013, 3, 1, 6, tzinfo=datetime.timezone.utc),
                  station_lat_deg=2.0, station_lng_deg=-30.0, x=20e3, y=-10e3, pressure=9000.0,
                  atmosphere_alpha=0.25, upwelling_infrared=300.0)
    values.update(overrides)
    return InitialState(**values)

  def test_explicit_initial_state_is_used(self):
    sim = BalloonSimulator(2, wind='static')
    sim.reset(seeds=[1, 2], initial_states=[self._initial_state(), None])
    state = sim.read_state()
    self.assertEqual(state['x'][0], 20e3)
    self.assertEqual(state['y'][0], -10e3)
    self.assertEqual(state['pressure'][0], 9000.0)
    self.assertEqual(state['atmosphere_alpha'][0], 0.25)
    self.assertEqual(state['upwelling_infrared'][0], 300.0)
    self.assertEqual(state['station_lat_deg'][0], 2.0)
    self.assertEqual(state['unix_time_s'][0], self._initial_state().unix_time())
    self.assertGreater(state['superpressure'][0], 0.0)
    self.assertEqual(state['battery_charge'][0], 2905.6)  # BLE's start charge
    self.assertEqual(state['status'][0], constants.STATUS_OK)

  def test_naive_datetime_is_rejected(self):
    sim = BalloonSimulator(1, wind='static')
    with self.assertRaisesRegex(ValueError, 'timezone'):
      sim.reset(seeds=[1], initial_states=[self._initial_state(
          start_time=datetime.datetime(2013, 3, 1))])

  def test_explicit_wind_drives_the_drift(self):
    sim = BalloonSimulator(2, wind='static')
    sim.reset(seeds=[1, 2], initial_states=[self._initial_state()] * 2)
    before = sim.read_state()
    sim.step(np.array([1, 1]), wind=(np.array([10.0, 0.0]), np.array([0.0, -5.0])))
    after = sim.read_state()
    np.testing.assert_allclose(after['x'] - before['x'], [1800.0, 0.0])
    np.testing.assert_allclose(after['y'] - before['y'], [0.0, -900.0])
    np.testing.assert_allclose(after['time_elapsed_s'], 180.0)

  def test_static_wind_below_8000_pa_blows_east(self):
    sim = BalloonSimulator(1, wind='static')
    sim.reset(seeds=[1], initial_states=[self._initial_state(pressure=7000.0)])
    sim.step(np.array([1]))
    self.assertAlmostEqual(sim.read_state()['x'][0], 20e3 + 1800.0)


class ConservationTest(unittest.TestCase):

  def test_lift_gas_fixed_and_ballonet_non_negative(self):
    sim = BalloonSimulator(4, wind='static')
    sim.reset(seeds=[1, 2, 3, 4])
    rng = np.random.default_rng(1)
    for step in range(40):
      # Long runs of venting push ballonets to empty.
      actions = np.full(4, constants.UP) if step < 30 else _actions(rng, 4)
      sim.step(actions)
      state = sim.read_state()
      self.assertTrue(np.all(state['mols_air'] >= 0.0))
      np.testing.assert_array_equal(state['mols_helium'], constants.HELIUM_MOLS)
    # The helium the volume model sees is still 6830 mol: recompute the free volume.
    self.assertTrue(np.all(np.isfinite(state['volume'])))


class StepTest(unittest.TestCase):

  def test_info_and_shapes(self):
    sim = BalloonSimulator(3, wind='static', max_episode_steps=2)
    sim.reset(seeds=[1, 2, 3])
    observation, reward, terminated, truncated, info = sim.step(np.array([0, 1, 2]))
    self.assertEqual(observation.shape, (3, 1099))
    self.assertEqual(observation.dtype, np.float32)
    self.assertEqual(reward.shape, (3,))
    for key in ('distance_km', 'out_of_power', 'envelope_burst', 'zeropressure',
                'time_elapsed_s', 'battery_soc', 'pressure', 'superpressure'):
      self.assertEqual(np.shape(info[key]), (3,), key)
    np.testing.assert_array_equal(truncated, False)
    _, _, _, truncated, _ = sim.step(np.array([0, 1, 2]))
    np.testing.assert_array_equal(truncated, True)
    # A truncated balloon is frozen until reset.
    before = sim.read_state()
    sim.step(np.array([0, 1, 2]))
    np.testing.assert_array_equal(sim.read_state()['pressure'], before['pressure'])

  def test_partial_reset_leaves_others_alone(self):
    sim = BalloonSimulator(3, wind='static')
    first = sim.reset(seeds=[1, 2, 3])
    sim.step(np.array([1, 1, 1]))
    before = sim.read_state()
    observation = sim.reset(indices=[1], seeds=[9])
    after = sim.read_state()
    for index in (0, 2):
      self.assertEqual(after['x'][index], before['x'][index])
    self.assertEqual(after['time_elapsed_s'][1], 0.0)
    self.assertEqual(after['episode_seed'][1], 9)
    self.assertFalse(np.array_equal(observation[1], first[1]))

  def test_terminated_balloon_reports_status(self):
    sim = BalloonSimulator(1, wind='static')
    midnight = InitialState(datetime.datetime(2013, 3, 1, 0, tzinfo=datetime.timezone.utc),
                            0.0, 0.0, 0.0, 0.0, 9000.0)
    sim.reset(seeds=[4], initial_states=[midnight])
    sim.battery_charge[:] = 1e-3  # the night's hotel load drains it in the first sub-step
    _, _, terminated, _, info = sim.step(np.array([constants.DOWN]))
    self.assertTrue(terminated[0])
    self.assertTrue(info['out_of_power'][0])


class ActiveMaskTest(unittest.TestCase):

  def _slab_with_one_truncated(self):
    sim = BalloonSimulator(2, wind='static', max_episode_steps=1)
    sim.reset(seeds=[1, 2])
    sim.step(np.array([1, 1]))
    sim.reset([1], seeds=[3])  # balloon 0 truncated (inactive), balloon 1 active
    return sim

  def test_truncated_balloon_is_frozen_and_stays_ok(self):
    sim = self._slab_with_one_truncated()
    before = sim.read_state()
    sim.step(np.array([0, 0]))
    after = sim.read_state()
    for key in ('x', 'pressure', 'battery_charge', 'time_elapsed_s', 'steps'):
      self.assertEqual(after[key][0], before[key][0], key)
      self.assertNotEqual(after[key][1], before[key][1], key)
    np.testing.assert_array_equal(after['status'], [constants.STATUS_OK] * 2)

  def test_no_status_left_behind_when_physics_raises(self):
    sim = self._slab_with_one_truncated()

    def broken(pressure):
      raise RuntimeError('atmosphere broke')

    sim.atmosphere.temperature_at_pressure = broken
    with self.assertRaisesRegex(RuntimeError, 'atmosphere broke'):
      sim.step(np.array([1, 1]))
    np.testing.assert_array_equal(sim.status, [constants.STATUS_OK] * 2)


class BadInputTest(unittest.TestCase):

  def setUp(self):
    self.sim = BalloonSimulator(2, wind='static')
    self.sim.reset(seeds=[1, 2])

  def test_invalid_actions(self):
    with self.assertRaisesRegex(ValueError, 'balloons \\[1\\]'):
      self.sim.step(np.array([0, 3]))
    with self.assertRaisesRegex(ValueError, 'shape'):
      self.sim.step(np.array([0, 1, 2]))
    with self.assertRaises(TypeError):
      self.sim.step(np.array([0.5, 1.0]))

  def test_non_finite_wind(self):
    with self.assertRaisesRegex(ValueError, 'finite; balloons \\[0\\]'):
      self.sim.step(np.array([1, 1]), wind=(np.array([np.nan, 1.0]), np.array([0.0, 0.0])))

  def test_bad_seeds(self):
    for seed, error in ((-1, ValueError), (1.5, TypeError), ('7', TypeError), (True, TypeError),
                        (2 ** 64, ValueError)):
      with self.assertRaises(error, msg=repr(seed)):
        self.sim.reset(indices=[0], seeds=[seed])

  def test_step_before_reset(self):
    with self.assertRaisesRegex(RuntimeError, 'before'):
      BalloonSimulator(1, wind='static').step(np.array([1]))


if __name__ == '__main__':
  unittest.main()
