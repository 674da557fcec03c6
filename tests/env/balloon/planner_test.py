"""Tests of agents/env/balloon/controllers/planner.py: the model-predictive baseline `mpc`."""

import unittest

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon import evaluation as balloon_evaluation
from agents.env.balloon.controllers import baselines, planner
from agents.env.balloon.env import BalloonVectorEnv
from agents.env.balloon.episode_start import EVALUATION_SEED_BASE
from agents.env.balloon.wind import forecast_error
from agents.evaluation import environments, runner, suites

SEEDS = [EVALUATION_SEED_BASE + seed for seed in (3, 5, 7)]
# A short horizon keeps the tests fast; the planning is the same.
FAST = planner.PlannerConfig(num_levels=6, horizon_s=3 * 3600.0, rollout_step_s=1800.0,
                             second_levels=0)
TWO_STAGES = planner.PlannerConfig(num_levels=4, horizon_s=4 * 3600.0, rollout_step_s=1800.0,
                                   second_levels=3, switch_after_s=3600.0)


def flown_slab(steps=12, config=FAST):
  """A planned slab of the SEEDS after `steps` steps (the GP holds measurements)."""
  slab = planner.PlannedSlab(BalloonVectorEnv(len(SEEDS), wind='procedural'), config)
  slab.reset(seed=SEEDS)
  for _ in range(steps):
    slab.step(np.full(len(SEEDS), constants.STAY))
  return slab


class EstimatedWindTest(unittest.TestCase):

  def test_gp_mean_at_points_is_predicts_mean(self):
    simulator = flown_slab().simulator
    pressures = np.linspace(6000.0, 11000.0, 5)[None].repeat(len(SEEDS), 0)
    x, y, t = simulator.x, simulator.y, simulator.time_elapsed_s
    mean_u, mean_v, _ = simulator._wind.gp.predict(x, y, pressures, t)
    at_u, at_v = simulator._wind.gp.mean_at(
        *np.broadcast_arrays(x[:, None], y[:, None], pressures, t[:, None]))
    # predict works in float32, mean_at in float64.
    np.testing.assert_allclose(at_u, mean_u, atol=2e-3)
    np.testing.assert_allclose(at_v, mean_v, atol=2e-3)
    self.assertGreater(np.abs(at_u).max(), 0.01)  # the GP has learnt something

  def test_float32_gp_mean_is_close_to_float64(self):
    simulator = flown_slab().simulator
    rng = np.random.default_rng(0)
    shape = (len(SEEDS), 40)
    x = simulator.x[:, None] + rng.uniform(-2e5, 2e5, shape)
    y = simulator.y[:, None] + rng.uniform(-2e5, 2e5, shape)
    pressure = rng.uniform(5000.0, 14000.0, shape)
    t = simulator.time_elapsed_s[:, None] + rng.uniform(0.0, 12 * 3600.0, shape)
    exact = simulator._wind.gp.mean_at(x, y, pressure, t)
    fast = simulator._wind.gp.mean_at(x, y, pressure, t, float32=True)
    self.assertGreater(np.abs(exact[0]).max(), 0.01)
    for fast_part, exact_part in zip(fast, exact):
      np.testing.assert_allclose(fast_part, exact_part, atol=1e-4)

  def test_estimate_is_forecast_plus_gp_mean(self):
    simulator = flown_slab().simulator
    x = simulator.x[:, None] + np.array([[0.0, 1e5]])
    y = simulator.y[:, None] + np.zeros((1, 2))
    pressure = np.full(x.shape, 9000.0)
    t = simulator.time_elapsed_s[:, None] + np.array([[0.0, 7200.0]])
    u, v = simulator.estimated_wind(x, y, pressure, t)
    rows = np.repeat(np.arange(len(SEEDS)), 2)
    forecast_u, forecast_v = simulator._wind.forecast.query(rows, x.ravel(), y.ravel(),
                                                            pressure.ravel(), t.ravel())
    error_u, error_v = simulator._wind.gp.mean_at(x, y, pressure, t)
    np.testing.assert_allclose(u, forecast_u.reshape(x.shape) + error_u)
    np.testing.assert_allclose(v, forecast_v.reshape(x.shape) + error_v)
    alone_u, alone_v = simulator.forecast_wind(x, y, pressure, t)
    np.testing.assert_array_equal(alone_u, forecast_u.reshape(x.shape))
    np.testing.assert_array_equal(alone_v, forecast_v.reshape(x.shape))


class PlannerTest(unittest.TestCase):

  def test_never_reads_the_true_wind(self):
    slab = flown_slab(config=TWO_STAGES)
    target, candidates, scores = slab.planner.plan()
    actions = slab.planner.actions_towards(target)
    # Another true error field, the forecast and the GP's measurements unchanged.
    error = forecast_error.ForecastError(len(SEEDS))
    error.sample(np.arange(len(SEEDS)), [np.random.default_rng(99 + i) for i in range(3)])
    slab.simulator._wind.error = error
    again = slab.planner.plan()
    np.testing.assert_array_equal(again[0], target)
    np.testing.assert_array_equal(again[1], candidates)
    np.testing.assert_array_equal(again[2], scores)
    np.testing.assert_array_equal(slab.planner.actions_towards(again[0]), actions)

  def test_plans_with_the_gp(self):
    slab = flown_slab()
    _, _, scores = slab.planner.plan()
    slab.simulator._wind.gp.reset()  # forget the measurements: forecast only
    _, _, forecast_only = slab.planner.plan()
    self.assertFalse(np.array_equal(scores, forecast_only))

  def test_actions_are_valid_and_deterministic(self):
    for config in (FAST, TWO_STAGES):
      with self.subTest(second_levels=config.second_levels):
        self.check_valid_and_deterministic(config)

  def check_valid_and_deterministic(self, config):
    flights = []
    for _ in range(2):
      slab = planner.PlannedSlab(BalloonVectorEnv(len(SEEDS), wind='procedural'), config)
      slab.reset(seed=SEEDS)
      actions = []
      for _ in range(30):
        action = slab.planner()
        slab.env.step(action)
        actions.append(action)
      flights.append(np.array(actions))
    self.assertTrue(np.isin(flights[0], [constants.DOWN, constants.STAY, constants.UP]).all())
    self.assertEqual(flights[0].dtype, np.int64)
    np.testing.assert_array_equal(flights[0], flights[1])
    self.assertGreater(len(np.unique(flights[0])), 1)  # it steers

  def test_targets_lie_in_the_reachable_range_and_are_held(self):
    slab = flown_slab(steps=0)
    target, candidates, scores = slab.planner.plan()
    lowest, highest = slab.simulator.reachable_pressures()
    levels = candidates[:, :FAST.num_levels]
    self.assertTrue(((levels >= lowest[:, None] - 1e-6)
                     & (levels <= highest[:, None] + 1e-6)).all())
    np.testing.assert_array_equal(target, candidates[np.arange(len(SEEDS)),
                                                     scores.argmax(axis=1)])
    # With a held target, a new one must beat it by the margin.
    held = planner.Planner(slab.simulator, FAST)
    held.target = target.copy()
    np.testing.assert_array_equal(held.plan()[0], target)

  def test_slab_ignores_the_actions_sent(self):
    down = planner.PlannedSlab(BalloonVectorEnv(len(SEEDS), wind='procedural'), FAST)
    up = planner.PlannedSlab(BalloonVectorEnv(len(SEEDS), wind='procedural'), FAST)
    down.reset(seed=SEEDS)
    up.reset(seed=SEEDS)
    for _ in range(5):
      from_down = down.step(np.full(len(SEEDS), constants.DOWN))
      from_up = up.step(np.full(len(SEEDS), constants.UP))
    np.testing.assert_array_equal(from_down[0], from_up[0])
    np.testing.assert_array_equal(from_down[4]['effective_action'],
                                  from_up[4]['effective_action'])

  def test_steers_towards_the_station_when_the_estimate_is_the_truth(self):
    # Static wind has no error field, so the planner's wind is the true one: 10 m/s west
    # between 10000 and 12000 Pa, east above 8000 Pa. Started 100 km east of the station
    # in the westward band it rides the wind to the station; started 100 km west of it,
    # it climbs to the eastward band and comes within 50 km.
    slab = planner.PlannedSlab(BalloonVectorEnv(2, wind='static'), FAST)
    slab.reset(seed=[1, 2], options={'initial_states': [
        {'start_time': 1.35e9, 'station_lat_deg': 0.0, 'station_lng_deg': 0.0,
         'x': x, 'y': 0.0, 'pressure': 11000.0} for x in (100e3, -100e3)]})
    closest = np.full(2, np.inf)
    for _ in range(120):
      _, _, _, _, info = slab.step(np.zeros(2, np.int64))
      closest = np.minimum(closest, info['distance_km'])
    self.assertLess(closest[0], 5.0)
    self.assertLess(closest[1], constants.STATION_RADIUS_KM)


class EvaluationTest(unittest.TestCase):

  def test_mpc_is_a_baseline_that_acts_in_the_slab(self):
    environment = environments.get(constants.BALLOON_ENV_ID)
    self.assertIn('mpc', environment.baselines)
    self.assertTrue(environment.acts_in_slab('mpc'))
    self.assertFalse(environment.acts_in_slab('station_seeker'))
    procedural = {'wind': 'procedural'}
    slab = environment.slab_constructor(2, 20, procedural, agent='mpc')()
    self.assertIsInstance(slab, planner.PlannedSlab)
    self.assertNotIsInstance(environment.slab_constructor(2, 20, procedural)(),
                             planner.PlannedSlab)
    flight_paths = balloon_evaluation.make_slab(2, 20, {'wind': 'procedural'}, True,
                                                   controller='mpc')
    self.assertIsInstance(flight_paths.env, balloon_evaluation.FlightPathSlab)
    with self.assertRaisesRegex(ValueError, 'controller'):
      balloon_evaluation.make_slab(2, 20, {}, controller='nope')
    with self.assertRaisesRegex(ValueError, 'switch_after_s'):
      planner.PlannerConfig(horizon_s=3600.0, switch_after_s=7200.0)

  def test_evaluation_flies_the_planner(self):
    suite = suites.Suite('short', range(3), episode_length=20, wind='procedural')
    results = {result.seed: result for result in runner.fly('mpc', suite, suite.seeds,
                                                            workers=0)}
    slab = planner.PlannedSlab(BalloonVectorEnv(3, max_episode_steps=20, wind='procedural'))
    slab.reset(seed=[suites.episode_seed(seed) for seed in suite.seeds])
    rewards = np.zeros(3)
    for _ in range(20):
      _, reward, _, _, _ = slab.step(np.zeros(3, np.int64))
      rewards += reward
    for seed in suite.seeds:
      self.assertAlmostEqual(results[seed].cumulative_reward, rewards[seed], places=4)
      self.assertEqual(results[seed].final_timestep, 20)

  def test_seeker_is_unchanged_by_the_hook(self):
    suite = suites.Suite('short', range(2), episode_length=10, wind='procedural')
    flown = runner.fly('station_seeker', suite, suite.seeds, workers=0)
    direct = balloon_evaluation.fly(baselines.StationSeekerPolicy(),
                                [suites.episode_seed(seed) for seed in suite.seeds],
                                wind='procedural', steps=10)
    self.assertAlmostEqual(sorted(flown, key=lambda r: r.seed)[0].cumulative_reward,
                           direct['reward'][0], places=4)


if __name__ == '__main__':
  unittest.main()
