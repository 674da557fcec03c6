"""Regression tests against BLE 1.0.1's own trajectories and observations.

testdata/ holds reference data dumped from the unmodified BLE 1.0.1 wheel (see
testdata/README.md; the files are trimmed copies of ../shared/reference/ble/): three
100-step episodes (seed 0: 30 × UP, 30 × STAY, 40 × DOWN) with BLE's static field without
and with noise and with its VAE wind, and the noise-free episode's 1099-float
observations. Each is replayed through the public API (an explicit `InitialState`, then
`BalloonEnv.step_with_wind` with the wind BLE applied) and compared record by record.

Tolerances: exact where our arithmetic is BLE's operation for operation; otherwise the
measured difference (in the comment, the largest over the three episodes) times a margin
of about 5-10, and the documented shortcut that causes it:

- dP/dh is the atmosphere's analytic −ρg, not BLE's 1 Pa finite difference of its
  height(P): pressure ≤ 1.4e-6 relative (≤ 0.013 Pa), and what follows from it
  (superpressure, ballonet air, ACS power, temperatures, the pressure features).
- The pump's mass flow is read from a 1e-4-step table of BLE's bilinear efficiency
  (≤ 1e-5 relative in flow): ballonet air and ACS power.
- Within an agent step, the sun's slow terms (declination, equation of time, flux,
  latitude and longitude) are interpolated between the step's ends (≤ 1e-8 relative):
  solar power, battery.
- Observations are float32, so features agree at best to one float32 rounding (6e-8).
- The GP predicts in float32 (docs/fidelity.md): uncertainty feature ≤ 2e-4.
"""

import datetime
import unittest

import numpy as np

from agents.env.balloon import ble_replay, constants
from agents.env.balloon.physics import sun_search

# BLE field -> relative tolerance (measured max in the comment).
_RELATIVE = {
    'pressure': 1e-5,              # 1.3e-6: dP/dh shortcut
    'superpressure': 2e-5,         # 2.6e-6: follows the pressure
    'envelope_volume': 1e-6,       # 4.6e-8
    'internal_temperature': 1e-6,  # 1.4e-7
    'ambient_temperature': 1e-6,   # 1.7e-7
    'mols_air': 2e-5,              # 3.1e-6: pressure and pump table
    'battery_charge_wh': 1e-7,     # 3.5e-9
    'battery_soc': 1e-7,           # 3.5e-9
}
# Fields BLE leaves at 0 (or unset) in the record after reset: compared from step 1 on.
_RELATIVE_AFTER_RESET = {
    'solar_charging_w': 1e-6,      # 5.2e-8: interpolated sun terms
    'acs_power_w': 2e-5,           # 2.5e-6: pump ratio follows the superpressure
    'power_load_w': 2e-5,          # 1.7e-6: hotel load + ACS power
}


class _Replayed:
  """Replays each trajectory once for all the tests."""
  cache = {}

  @classmethod
  def get(cls, name):
    if name not in cls.cache:
      reference = ble_replay.load(name)
      cls.cache[name] = (reference, ble_replay.replay(reference))
    return cls.cache[name]


class TrajectoryTest(unittest.TestCase):

  def _check(self, name):
    reference, ours = _Replayed.get(name)
    records = reference['records']
    self.assertEqual(len(ours['states']), len(records), 'episode ended early')
    states = ours['states']

    def series(key):
      return np.array([state[key] for state in states])

    # Exact: position (BLE's x += u·dt per sub-step), clock, status, actions, reward.
    for field, key in (('x_m', 'x'), ('y_m', 'y'), ('time_elapsed_s', 'time_elapsed_s')):
      np.testing.assert_array_equal(series(key), ble_replay.reference_series(reference, field),
                                    err_msg=f'{name}: {field}')
    np.testing.assert_array_equal(series('status'),
                                  ble_replay.reference_series(reference, 'status'))
    np.testing.assert_array_equal(series('last_command')[1:],
                                  ble_replay.reference_series(reference, 'last_command')[1:])
    np.testing.assert_array_equal(ours['effective_actions'][1:],
                                  [record['effective_action'] for record in records[1:]])
    self.assertEqual(ours['rewards'][1:], [record['reward'] for record in records[1:]])
    self.assertEqual(ours['terminated'][1:], [record['done'] for record in records[1:]])
    for field, tolerance in _RELATIVE.items():
      np.testing.assert_allclose(series(ble_replay.FIELDS[field]),
                                 ble_replay.reference_series(reference, field), rtol=tolerance,
                                 atol=0, err_msg=f'{name}: {field}')
    for field, tolerance in _RELATIVE_AFTER_RESET.items():
      np.testing.assert_allclose(series(ble_replay.FIELDS[field])[1:],
                                 ble_replay.reference_series(reference, field)[1:],
                                 rtol=tolerance, atol=1e-9, err_msg=f'{name}: {field}')

  def test_static_field_without_noise(self):
    self._check(ble_replay.TRAJECTORIES[0])

  def test_static_field_with_noise(self):
    self._check(ble_replay.TRAJECTORIES[1])

  def test_generative_wind_with_noise(self):
    self._check(ble_replay.TRAJECTORIES[2])


# Observation index -> absolute tolerance, float32 features (measured max in the comment).
_FLOAT32 = 1.2e-7  # about one float32 rounding of a value in [0, 1]
_FEATURE_TOLERANCES = {
    0: 1e-5,            # pressure: 1.4e-6, the dP/dh shortcut
    1: 1e-6,            # state of charge: 6e-8
    2: _FLOAT32,        # solar elevation: 5e-10
    3: _FLOAT32,        # sin of the solar-cycle phase: 5e-10 (BLE's grid and rounding)
    4: _FLOAT32,        # cos of the solar-cycle phase: 5e-10
    5: _FLOAT32,        # sin of the heading: 5e-10
    6: _FLOAT32,        # cos of the heading: 5e-10
    7: _FLOAT32,        # distance: 5e-10
    15: 5e-6,           # pressure ratio: 4.8e-7, follows the superpressure
}
_EXACT_FEATURES = range(8, 15)  # last command, navigation paused, excess energy, cost


class ObservationTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.reference = ble_replay.load(ble_replay.OBSERVATIONS)
    _, ours = _Replayed.get(ble_replay.TRAJECTORIES[0])
    cls.ours = ours['observations'].astype(np.float64)
    cls.theirs = np.array([record['observation'] for record in cls.reference['records']])

  def test_same_episode(self):
    trajectory, _ = _Replayed.get(ble_replay.TRAJECTORIES[0])
    self.assertEqual(self.theirs.shape, (101, constants.OBSERVATION_SIZE))
    self.assertEqual(self.ours.shape, self.theirs.shape)
    for record, state in zip(self.reference['records'], trajectory['records']):
      self.assertEqual(record['state']['pressure'], state['pressure'])

  def test_ambient_features(self):
    for index, tolerance in _FEATURE_TOLERANCES.items():
      np.testing.assert_allclose(self.ours[:, index], self.theirs[:, index], rtol=0,
                                 atol=tolerance, err_msg=f'feature {index}')
    for index in _EXACT_FEATURES:
      np.testing.assert_array_equal(self.ours[:, index], self.theirs[:, index],
                                    err_msg=f'feature {index}')

  def test_wind_column(self):
    ours = self.ours[:, constants.NUM_AMBIENT_FEATURES:].reshape(101, -1, 3)
    theirs = self.theirs[:, constants.NUM_AMBIENT_FEATURES:].reshape(101, -1, 3)
    # Padding and unreachable levels (0, 1, 1) in the same places: the reachable range and
    # the balloon's level agree.
    np.testing.assert_array_equal(ours[..., 1] == 1.0, theirs[..., 1] == 1.0)
    # Uncertainty: the float32 GP (measured 6.1e-5 here; up to 1.5e-4 in a 960-step
    # episode, docs/fidelity.md).
    np.testing.assert_allclose(ours[..., 0], theirs[..., 0], rtol=0, atol=2e-4)
    np.testing.assert_allclose(ours[..., 1], theirs[..., 1], rtol=0, atol=1e-6)  # 5e-10
    np.testing.assert_allclose(ours[..., 2], theirs[..., 2], rtol=0, atol=_FLOAT32)  # 0

  def test_reachable_range_and_level(self):
    levels = np.array([int(np.argmax(row[:, 1] != 1.0)) for row in
                       self.theirs[:, 16:].reshape(101, -1, 3)])
    ours = np.array([int(np.argmax(row[:, 1] != 1.0)) for row in
                     self.ours[:, 16:].reshape(101, -1, 3)])
    np.testing.assert_array_equal(ours, levels)


class SlabReplayTest(unittest.TestCase):
  """The vector slab (numpy path) replays BLE's episode as the one-balloon path does."""

  def test_slab_matches_single(self):
    from agents.env.balloon import env as env_lib
    reference, single = _Replayed.get(ble_replay.TRAJECTORIES[1])
    slab = env_lib.BalloonVectorEnv(2, wind='static', max_episode_steps=None)
    start = ble_replay.initial_state(reference)
    observation, _ = slab.reset(seed=[0, 1], options={'initial_states': [start, start]})
    observations = [observation]
    for record in reference['records'][1:]:
      wind = record['wind_applied']
      observation, reward, _, _, info = slab.step_with_wind(
          np.full(2, record['action']), np.full(2, wind['u_mps']), np.full(2, wind['v_mps']))
      observations.append(observation)
      self.assertEqual(reward.tolist(), [record['reward']] * 2)
      np.testing.assert_array_equal(info['effective_action'], record['effective_action'])
    state = slab.read_state()
    for key in ('x', 'y', 'pressure', 'superpressure', 'battery_charge', 'mols_air'):
      np.testing.assert_allclose(state[key], single['states'][-1][key], rtol=1e-12, err_msg=key)
    observations = np.array(observations)
    # The ambient features; the column also depends on each balloon's own seeded wind.
    np.testing.assert_allclose(observations[:, 0, :16], single['observations'][:, :16],
                               atol=1e-6)
    slab.close()


class SunriseSearchTest(unittest.TestCase):
  """BLE's next sunrise and sunset, which its power layer fixes at the start."""

  def test_search_and_snap_match_ble_in_every_state(self):
    # The snap matches BLE's bisection only where that finds the nearest grid point: here
    # in all 101 states, in general in about 70 % (docs/fidelity.md).
    reference = ble_replay.load(ble_replay.OBSERVATIONS)
    parse = lambda text: datetime.datetime.fromisoformat(text).timestamp()  # noqa: E731
    time = np.array([parse(record['state']['date_time']) for record in reference['records']])
    latitude = np.array([record['state']['lat_deg'] for record in reference['records']])
    longitude = np.array([record['state']['lng_deg'] for record in reference['records']])
    sunrise = np.array([parse(record['diagnostics']['next_sunrise'])
                        for record in reference['records']])
    sunset = np.array([parse(record['diagnostics']['next_sunset'])
                       for record in reference['records']])
    got_sunrise, got_sunset = sun_search.next_sunrise_sunset(time, latitude, longitude)
    np.testing.assert_array_equal(got_sunrise, sunrise)
    np.testing.assert_array_equal(got_sunset, sunset)
    from agents.env.balloon.physics import solar
    _, _, _, _, to_sunset, to_sunrise = solar.sun_state(time, latitude, longitude)
    snapped_sunset, snapped_sunrise = sun_search.snap_to_search_grid(
        time, latitude, longitude, to_sunset, to_sunrise)
    np.testing.assert_array_equal(snapped_sunrise, sunrise - time)
    np.testing.assert_array_equal(snapped_sunset, sunset - time)
    phase = sun_search.solar_cycle_phase(snapped_sunset, snapped_sunrise)
    np.testing.assert_array_equal(
        phase, [record['diagnostics']['solar_cycle_phase'] for record in reference['records']])

  def test_one_balloon_path_matches_numpy(self):
    reference = ble_replay.load(ble_replay.OBSERVATIONS)
    from agents.env.balloon.physics import solar
    for record in reference['records'][::10]:
      state = record['state']
      when = datetime.datetime.fromisoformat(state['date_time']).timestamp()
      args = (when, state['lat_deg'], state['lng_deg'])
      closed = solar.scalar_sun_state(*args)[4:]
      scalar = sun_search.scalar_snap_to_search_grid(*args, *closed)
      vector = sun_search.snap_to_search_grid(*(np.array([value]) for value in args + closed))
      self.assertEqual(scalar, (vector[0][0], vector[1][0]))
      self.assertEqual(sun_search.scalar_solar_cycle_phase(*scalar),
                       sun_search.solar_cycle_phase(*vector)[0])

  def test_power_layer_takes_the_start_sunrise(self):
    from agents.env.balloon import env as env_lib
    reference = ble_replay.load(ble_replay.TRAJECTORIES[0])
    diagnostics = ble_replay.load(ble_replay.OBSERVATIONS)['records'][0]['diagnostics']
    env = env_lib.BalloonEnv(wind='static')
    env.reset(seed=0, options={'initial_state': ble_replay.initial_state(reference)})
    layers = env.simulator.safety
    self.assertEqual(layers.delayed_sunrise[0],
                     datetime.datetime.fromisoformat(diagnostics['next_sunrise']).timestamp()
                     + constants.POWER_SAFETY_SUNRISE_DELAY_S)
    self.assertEqual(layers.sunset[0],
                     datetime.datetime.fromisoformat(diagnostics['next_sunset']).timestamp())
    self.assertEqual(env.read_state()['battery_charge'], 2905.6)


if __name__ == '__main__':
  unittest.main()
