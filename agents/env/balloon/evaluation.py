"""The balloon's evaluation plug-in: its slabs, seeds, wind, strata, metrics and baselines.

Named by the balloon's plug-in (`agents.env.balloon.plugin.BalloonPlugin`, imported when
read), so `agents.evaluation`, which names no environment, flies the balloon BLE's way:

- slabs: `BalloonVectorEnv` slabs (with `FlightPathSlab` when flight paths are kept),
  one per worker process, for a suite's episode length and wind;
- seeds: suite seed s is flown as episode seed `EVALUATION_SEED_BASE + s` (2**62 + s),
  a space the balloon never draws training episodes from;
- suites: the option `wind` ('generative', 'procedural' or 'static'), and the five
  difficulty strata of `big_eval` (`strata.json`, next to this module;
  `python -m agents.evaluation.strata` regenerates it) besides BLE's named suites, which
  every environment has;
- metrics: BLE's EvaluationResult fields per seed, `time_within_radius` (steps within
  50 km / steps flown), `twr50` (/ the suite's episode length, the headline metric),
  `out_of_power`, `envelope_burst`, `zeropressure`, and the flight path when asked;
- baselines: `station_seeker` and `random_walk`, batched, from per-seed streams;
  `mpc`, the planner of planner.py, which flies in the slab next to the simulator whose
  forecast and GP it plans with (`make_slab(..., controller='mpc')`); and
  `perciatelli44`, BLE's frozen network (perciatelli44.py), `perciatelli44:<PATH>` for
  weights at PATH;
- pictures: each flight drawn by `renderer.FlightRenderer`.

Nothing here imports `agents.evaluation` (a layer above the environments): the plug-in
is an `agents.plugins.EnvironmentPlugin`, whose fields `agents.evaluation.environments`
reads; the baselines are `agents.plugins.Baseline`s.
"""

import functools
import json
import os

import numpy as np

from agents import plugins
from agents.env.balloon import constants
from agents.env.balloon.constants import DEFAULT_WIND, LEGACY_WIND, WINDS
from agents.env.balloon.controllers import baselines, perciatelli44, planner
from agents.env.balloon.env import BalloonVectorEnv
from agents.env.balloon.episode_start import EVALUATION_SEED_BASE

FAILURES, FLIGHT_PATH_KEYS = constants.FAILURES, constants.FLIGHT_PATH_KEYS
STRATA = ('hardest_strata', 'hard_strata', 'mid_strata', 'easy_strata', 'easiest_strata')
STRATUM_SIZE = 2000
STRATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'strata.json')
# Flight-path keys and the step infos they are read from.
_PATH_INFOS = (('x', 'x'), ('y', 'y'), ('pressure', 'pressure'),
               ('superpressure', 'superpressure'), ('elapsed_time', 'time_elapsed_s'),
               ('battery_soc', 'battery_soc'))


def episode_seed(suite_seed):
  """The episode seed the balloon is reset with for a suite seed (2**62 + seed)."""
  return EVALUATION_SEED_BASE + int(suite_seed)


def check_options(options):
  """The suite options completed with their defaults: {'wind': ...}.

  Raises:
    ValueError: an unknown option, or a wind that is not one of WINDS (named key=value).
  """
  unknown = sorted(set(options) - {'wind'})
  if unknown:
    raise ValueError(f'option {unknown[0]}={options[unknown[0]]} is not one of the '
                     "balloon's suite options ['wind'].")
  wind = options.get('wind', DEFAULT_WIND)
  if wind not in WINDS:
    raise ValueError(f'wind must be one of {WINDS}, got {wind!r}.')
  return {'wind': wind}


def suite_defaults(env_kwargs):
  """The wind an agent trained with `env_kwargs` is flown in when a suite names none: its
  training wind (`procedural` for a config saved before the wind was named)."""
  return {'wind': env_kwargs.get('wind', LEGACY_WIND)}


@functools.cache
def strata_ranking():
  """The 10,000 `big_eval` seeds ranked hardest first, with how they were ranked.

  Raises:
    FileNotFoundError: strata.json is missing (the message says how to regenerate it).
  """
  try:
    with open(STRATA_PATH, encoding='utf-8') as file:
      return json.load(file)
  except FileNotFoundError:
    raise FileNotFoundError(f'the strata ranking {STRATA_PATH} is missing; regenerate it '
                            'with `python -m agents.evaluation.strata`.') from None


def strata_seeds(name):
  """The seeds of a stratum (or of `all_strata`, hardest first)."""
  ranked = strata_ranking()['seeds_hardest_first']
  if name == 'all_strata':
    return tuple(ranked)
  index = STRATA.index(name)
  return tuple(ranked[index * STRATUM_SIZE:(index + 1) * STRATUM_SIZE])


class FlightPathSlab(BalloonVectorEnv):
  """A slab whose step infos also carry each balloon's x and y (m), for flight paths."""

  def step(self, actions):
    observ, reward, terminated, truncated, infos = super().step(actions)
    infos['x'], infos['y'] = self.simulator.x.copy(), self.simulator.y.copy()
    return observ, reward, terminated, truncated, infos


def make_slab(num_envs, episode_length, options, flight_paths=False, controller=None,
              lookahead=None):
  """A slab of `num_envs` balloons for a suite (BLE's reward, the suite's wind).

  `controller` names a baseline that acts in the slab (`SLAB_CONTROLLERS`): the slab's
  steps then take its actions. `lookahead` is the observation option an agent trained
  with (lookahead.py; `observation_kwargs`).
  """
  cls = FlightPathSlab if flight_paths else BalloonVectorEnv
  slab = cls(num_envs, max_episode_steps=episode_length, wind=check_options(options)['wind'],
             lookahead=lookahead)
  if controller is None:
    return slab
  if controller not in SLAB_CONTROLLERS:
    raise ValueError(f'controller must be one of {sorted(SLAB_CONTROLLERS)}, got '
                     f'{controller!r}.')
  return SLAB_CONTROLLERS[controller](slab)


class EpisodeMetrics:
  """BLE's per-seed metrics of the episodes in flight, one row per balloon of the batch."""

  def __init__(self, batch_size, episode_length, flight_paths=False):
    self._episode_length = episode_length
    self._within = np.zeros(batch_size, np.int64)
    self._steps = np.zeros(batch_size, np.int64)
    self._paths = [None] * batch_size if flight_paths else None

  def start(self, rows):
    """Episodes begin at batch rows `rows`."""
    self._within[rows] = 0
    self._steps[rows] = 0
    if self._paths is not None:
      for row in rows:
        self._paths[row] = {key: [] for key in FLIGHT_PATH_KEYS}

  def record(self, active, reward, infos):
    """One step of the batch; `active` marks the rows that flew it."""
    del reward
    # BLE counts the position after every step flown, the last one included.
    self._within += active & (infos['distance_km'] <= constants.STATION_RADIUS_KM)
    self._steps += active
    if self._paths is not None:
      for row in np.flatnonzero(active):
        path = self._paths[row]
        for key, info_key in _PATH_INFOS:
          path[key].append(round(float(infos[info_key][row]), 3))

  def result(self, row, infos):
    """The metrics of the episode that ended at `row` (infos: those of its last step)."""
    steps = int(self._steps[row])
    metrics = {
        'time_within_radius': float(self._within[row] / max(steps, 1)),
        'twr50': float(self._within[row] / self._episode_length),
        **{name: bool(infos[name][row]) for name in FAILURES},
    }
    if self._paths is not None:
      metrics['flight_path'] = self._paths[row]
    return metrics


class StationSeeker(plugins.Baseline):
  """BLE's StationSeeker for a batch, stateless."""

  def __call__(self, observations):
    return baselines.station_seeker(observations)


class RandomWalk(plugins.Baseline):
  """BLE's random walk (see `baselines.RandomWalkPolicy`), from a stream per suite seed.

  Row i's target and noise are drawn at `begin_episode` from a generator seeded by the
  suite seed, so a seed's flight does not depend on the row or batch it is flown in.
  """

  def __init__(self, batch_size, episode_length=constants.EPISODE_STEPS, seed=0):
    self._seed = seed
    self._length = episode_length
    self._step = np.zeros(batch_size, np.intp)
    self._rows = np.arange(batch_size)
    self._fresh = np.random.default_rng([seed, 2 ** 31])  # rows begun without a seed
    self._noise = np.zeros((batch_size, episode_length))
    self._target = np.zeros(batch_size)

  def begin_episode(self, indices, seeds=None):
    seeds = [None] * len(indices) if seeds is None else seeds
    for row, seed in zip(indices, seeds):
      generator = np.random.default_rng(
          self._fresh.integers(2 ** 63) if seed is None else [self._seed, int(seed)])
      self._target[row] = generator.uniform(6500.0, 11400.0)
      self._noise[row] = generator.standard_normal(self._length)
      self._step[row] = 0

  def __call__(self, observations):
    step = np.minimum(self._step, self._length - 1)
    self._step += 1
    # The spread of the target's step grows with the time elapsed (BLE's rule).
    elapsed_s = step * constants.AGENT_STEP_S
    self._target += elapsed_s * 0.1666 * self._noise[self._rows, step]
    pressure = constants.COLUMN_MIN_PRESSURE + np.asarray(observations)[:, 0] * (
        constants.COLUMN_MAX_PRESSURE - constants.COLUMN_MIN_PRESSURE)
    return np.where(pressure - 100.0 > self._target, constants.UP,
                    np.where(pressure + 100.0 < self._target, constants.DOWN,
                             constants.STAY)).astype(np.int64)


class ModelPredictive(plugins.Baseline):
  """The planner of planner.py (`mpc`): it acts in the slab, this policy sends placeholders.

  `acts_in_slab` makes the evaluation ask for slabs built with `controller='mpc'`
  (`PlannedSlab`), whose steps take the planner's actions; the STAY actions returned here
  are ignored.
  """

  acts_in_slab = True

  def __call__(self, observations):
    return np.full(len(observations), constants.STAY, np.int64)


# Baselines that act in the slab: name -> the wrapper of a slab that runs them.
SLAB_CONTROLLERS = {'mpc': planner.PlannedSlab}


def flight_renderer(slab, row):
  """The renderer of balloon `row` of a slab: `record()` after each step, `draw(figure)`."""
  from agents.env.balloon.renderer import FlightRenderer
  return FlightRenderer(slab.simulator, row)


def playback_summary(trace):
  """The TWR50 of a played episode over the steps played, from its `distance_km` infos."""
  distances = trace.get('distance_km')
  if not distances:
    return {}
  return {'twr50': float(np.mean(np.asarray(distances) <= constants.STATION_RADIUS_KM))}


# The balloon's baselines (`agents.plugins.EnvironmentPlugin.baselines`).
BASELINES = {'station_seeker': StationSeeker, 'random_walk': RandomWalk,
             'mpc': ModelPredictive, 'perciatelli44': perciatelli44.Perciatelli44}
# The difficulty strata, besides BLE's named suites.
NAMED_SUITES = {name: functools.partial(strata_seeds, name) for name in (*STRATA, 'all_strata')}


def fly(policy, seeds, wind=DEFAULT_WIND, steps=constants.EPISODE_STEPS):
  """Flies one episode per seed as one slab and returns per-episode metrics.

  Args:
    policy: callable observations [B, 1099] -> actions [B], with begin_episode(indices).
    seeds: episode seeds, one balloon each.
    wind: 'generative', 'procedural' or 'static'.
    steps: episode length (960 for TWR50).

  Returns:
    dict of float arrays [len(seeds)]: 'twr50' (fraction of the `steps` steps within
    50 km; steps after a termination count as outside), 'reward' (sum), 'terminated'.
  """
  seeds = [int(seed) for seed in seeds]
  env = BalloonVectorEnv(len(seeds), max_episode_steps=steps, wind=wind)
  observations, _ = env.reset(seed=seeds)
  policy.begin_episode(np.arange(len(seeds)))
  within = np.zeros(len(seeds))
  total_reward = np.zeros(len(seeds))
  done = np.zeros(len(seeds), bool)
  terminated_any = np.zeros(len(seeds), bool)
  for _ in range(steps):
    observations, reward, terminated, truncated, info = env.step(policy(observations))
    alive = ~done
    within += alive & (info['distance_km'] <= constants.STATION_RADIUS_KM) & ~terminated
    total_reward += np.where(alive, reward, 0.0)
    terminated_any |= alive & terminated
    done |= terminated | truncated
    if done.all():
      break
  env.close()
  return {'twr50': within / steps, 'reward': total_reward, 'terminated': terminated_any}
