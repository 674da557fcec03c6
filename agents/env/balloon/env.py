"""Gymnasium faces of the balloon simulator: one balloon, or a vector slab of them.

Both are thin wrappers around the same core, `simulator.BalloonSimulator`: a single
environment is a slab of one. `BalloonEnv` is registered as
`BalloonLearningEnvironment-v0` with a 960-step TimeLimit; `BalloonVectorEnv` is its
vector entry point, applies the 960-step truncation per balloon itself and never resets
automatically (metadata `autoreset_mode` is `AutoresetMode.DISABLED`): the caller resets
finished balloons with `reset(seed=..., options={'reset_mask': mask})`.

Observation: Box of 1099 float32 (balloon.md §11); action: Discrete(3), 0 DOWN, 1 STAY,
2 UP (§13); reward and termination as in §12.

Deviations from BLE (balloon.md §15; keep this list true):

- The default wind ('generative') is BLE's own, its VAE decoder run in NumPy plus its
  simplex noise, drawn from the episode's NumPy generator, and decoded in float32 by
  the machine's BLAS; `wind='procedural'` is this project's generated wind (BLE's
  statistics, our own smooth noise with BLE's scales).
- Random streams are numpy Generators, not JAX keys, so seed N is not BLE's seed N.
- Gymnasium API (5-tuple step, terminated vs truncated; reset before the first step); BLE's
  constructor keywords are taken beside ours (`ble_names`), and `seed()`, `radius`,
  `get_simulator_state()` and `info['time_elapsed']` answer as BLE's; the 960-step limit comes from
  the registration (TimeLimit) for the single environment and from the slab itself for
  the vector environment.
- Small numerical choices, each measured against BLE's own trajectories
  (docs/fidelity.md, tests/env/balloon/ble_reference_test.py): dP/dh is the analytic −ρg
  of the atmosphere instead of a 1 Pa finite difference (pressure within 1.4e-6
  relative over 100 steps); the pump's mass flow is read from a 1e-4-step table of BLE's
  bilinear efficiency (≤1e-5 relative); within an agent step the sun's declination,
  equation of time and flux and the balloon's latitude and longitude are interpolated
  between the step's start and end (≤1e-8 relative; the elevation itself is evaluated
  every sub-step); sunrise and sunset start from a closed form and are snapped to BLE's
  3-minute search grid (BLE's own search decides the power layer's times at reset; the
  observation's features 3–4 differ by up to 0.07 in the ~30 % of states where BLE's
  bisection lands off the nearest grid point); the
  reachable pressure range is tabulated hourly at the station per episode instead of
  recomputed every step at the balloon; the wind GP predicts in float32 (the uncertainty
  feature within 2e-4 of float64); the wind column's forecast and GP are evaluated only
  over each balloon's reachable band (the other levels are padding anyway).
- `power_sun='balloon'` (not the default) makes the power safety layer follow the
  balloon's current position instead of BLE's sunrise fixed at the start.
- The observation space declares the true ranges: features 3–6 (sines and cosines) lie
  in [−1, 1] and feature 15 (the pressure ratio, unscaled) in [1, 2] (BLE declares [0, 1]).
"""

from __future__ import annotations

import collections
import datetime
import types
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from agents.env.balloon import ble_names, constants
from agents.env.balloon import simulator as simulator_lib
from agents.env.balloon.episode_start import EVALUATION_SEED_BASE, InitialState, check_seed
from agents.env.balloon.observation import lookahead as lookahead_lib


def observation_space(lookahead: lookahead_lib.Lookahead | None = None) -> gymnasium.spaces.Box:
  """The Box of one balloon's 1099-float observation (and a `Lookahead`'s block after it)."""
  size = constants.OBSERVATION_SIZE + (0 if lookahead is None else lookahead.size)
  low = np.zeros(size, np.float32)
  high = np.ones(size, np.float32)
  low[3:7] = -1.0
  low[15], high[15] = 1.0, 2.0  # 1 + sp/P stays far below 2 (burst at 2380 Pa)
  return gymnasium.spaces.Box(low, high, dtype=np.float32)


def _initial_state(value: InitialState | Mapping[str, Any] | None,
                   where: str) -> InitialState | None:
  if value is None or isinstance(value, InitialState):
    return value
  if isinstance(value, dict):
    try:
      return InitialState(**value)
    except TypeError as error:
      raise TypeError(f'{where}: {error}') from error
  raise TypeError(f'{where} must be an InitialState or a dict of its fields, got '
                  f'{type(value).__name__}.')


class BalloonEnv(gymnasium.Env):
  """One stratospheric balloon station-keeping near its ground station.

  reset(seed=..., options={'initial_state': InitialState | dict}) starts an episode;
  step(action) advances 180 s. `step_with_wind(action, u, v)` steps with an explicit
  wind; `read_state()` returns the physical state; `simulator` is the core (a slab of one).
  """

  metadata = {'render_modes': ['human', 'rgb_array'], 'render_fps': 10}
  # A finished balloon stays put when stepped (evaluation flies ended rows on);
  # slabs need not refuse it (`agents.tools.errors.EpisodeEndedError`).
  steps_finished_episodes = True

  def __init__(self, render_mode: str | None = None, wind: str | None = None,
               power_sun: str = 'episode_start', gp_predict_dtype: type = np.float32,
               progress_reward: float = 0.0, lookahead: Any = None, *,
               wind_field_factory: Any = None, seed: int | None = None, renderer: Any = None,
               station_keeping_radius_km: float = constants.STATION_RADIUS_KM) -> None:
    """Creates the environment.

    Args:
      render_mode: None, 'human' (draws a matplotlib figure) or 'rgb_array'.
      wind: 'generative' (BLE's: its VAE decoder's forecast + its simplex noise; the
        default), 'procedural' (§10 forecast + error field) or 'static' (§10 static field).
      power_sun: the power safety layer's sunrise and sunset: 'episode_start' (BLE) or
        'balloon' (at the balloon's current position; see safety.py).
      gp_predict_dtype: np.float32 (default) or np.float64, the wind GP's prediction.
      progress_reward: weight of the optional shaped training reward, per km gained toward
        the station each step (BalloonSimulator); 0 (default) is BLE's reward.
      lookahead: an observation option (lookahead.py): None (default) is BLE's
        observation; True, a dict of `Lookahead` fields or a `Lookahead` appends what
        heading for each level would do over the hours ahead.
      wind_field_factory: BLE's keyword for the wind, by name (`ble_names`: 'simple' is
        'static', 'generative' the generative wind); not with `wind`.
      seed: BLE's keyword: seeds the episode seeds `reset()` draws when given none.
      renderer: BLE's keyword: 'matplotlib' (or BLE's `MatplotlibRenderer`) draws as
        `render_mode='rgb_array'`.
      station_keeping_radius_km: BLE's keyword: the reward's radius (`radius`); the
        evaluation's TWR50 keeps 50 km.
    """
    if wind is not None and wind_field_factory is not None:
      raise ValueError('pass the wind once: wind (a wind mode) or wind_field_factory (BLE\'s '
                       'name for it), not both.')
    self.wind = (constants.DEFAULT_WIND if wind is None else wind) if (
        wind_field_factory is None) else (
        ble_names.wind_of_factory(wind_field_factory))
    self.radius = ble_names.radius(station_keeping_radius_km)
    render_mode = ble_names.render_mode_of(renderer, render_mode)
    self.lookahead = lookahead_lib.check_lookahead(lookahead)
    if render_mode is not None and render_mode not in self.metadata['render_modes']:
      raise ValueError(f'render_mode must be None or one of {self.metadata["render_modes"]}, '
                       f'got {render_mode!r}.')
    self.render_mode = render_mode
    self.observation_space = observation_space(self.lookahead)
    self.action_space = gymnasium.spaces.Discrete(3)
    self.simulator = simulator_lib.BalloonSimulator(1, wind=self.wind, power_sun=power_sun,
                                                    gp_predict_dtype=gp_predict_dtype,
                                                    progress_reward=progress_reward)
    self.simulator.station_radius_km = self.radius.km
    if seed is not None:
      self.seed(seed)
    self._renderer = None
    if render_mode is not None:
      from agents.env.balloon import renderer
      self._renderer = renderer.FlightRenderer(self.simulator, 0)

  def reset(self, *, seed: int | None = None,
            options: Mapping[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Starts an episode.

    Args:
      seed: a non-negative int: the episode seed (same seed, same episode). None draws
        the episode seed from the environment's generator.
      options: optional dict; 'initial_state' (InitialState or dict of its fields) sets
        the start explicitly (the wind still comes from the seed).

    Returns:
      (observation float32 [1099], info dict).
    """
    if seed is not None:
      seed = check_seed(seed)
    super().reset(seed=seed)
    episode_seed = seed if seed is not None else int(
        self.np_random.integers(EVALUATION_SEED_BASE))
    options = dict(options or {})
    initial_state = _initial_state(options.pop('initial_state', None), 'initial_state')
    if options:
      raise ValueError(f'Unknown reset options {sorted(options)}; expected initial_state.')
    observation = self.simulator.reset(seeds=[episode_seed], initial_states=[initial_state])
    if self._renderer is not None:
      self._renderer.reset()
    return _with_lookahead(observation, self.simulator, self.lookahead)[0], self._reset_info()

  def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
    """Advances 180 s; returns (observation, reward, terminated, truncated, info)."""
    return self._step(action, None)

  def step_with_wind(self, action: Any, wind_u: float,
                     wind_v: float) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
    """`step` with an explicit wind (m/s) at the balloon held over the step."""
    return self._step(action, (np.array([wind_u], np.float64).reshape(-1),
                               np.array([wind_v], np.float64).reshape(-1)))

  def _step(
      self, action: Any, wind: tuple[np.ndarray, np.ndarray] | None,
  ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
    observation, reward, terminated, truncated, info = _step_and_record(
        self.simulator, np.array([_check_action(action)]), wind, self._renderer)
    info = _with_time_elapsed({key: value[0].item() for key, value in info.items()})
    observation = _with_lookahead(observation, self.simulator, self.lookahead)
    return observation[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), info

  def read_state(self) -> dict[str, Any]:
    """The physical state after the last step: a dict of Python scalars."""
    return {key: value[0].item() for key, value in self.simulator.read_state().items()}

  def seed(self, seed: int | None) -> None:
    """BLE's `seed(seed)`: seeds the episode seeds the next `reset()` without a seed draws
    (as `reset(seed=seed)` does, without starting an episode)."""
    self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(
        check_seed(seed))

  def get_simulator_state(self) -> SimulatorState:
    """BLE's `get_simulator_state()`: a `SimulatorState` whose `balloon_state` holds the
    physical state after the last step (`read_state()`'s keys as attributes; x and y in
    metres, `time_elapsed` a timedelta)."""
    state = self.read_state()
    state['time_elapsed'] = datetime.timedelta(seconds=state['time_elapsed_s'])
    return SimulatorState(types.SimpleNamespace(**state))

  def render(self) -> np.ndarray | None:
    """Draws the flight so far: an RGB array in 'rgb_array' mode, a figure in 'human' mode."""
    if self._renderer is None:
      return None
    return self._renderer.render(self.render_mode)

  def close(self) -> None:
    if self._renderer is not None:
      self._renderer.close()

  def _reset_info(self) -> dict[str, Any]:
    state = self.simulator.read_state()
    return {'episode_seed': int(state['episode_seed'][0]),
            'pressure': float(state['pressure'][0]),
            'superpressure': float(state['superpressure'][0]),
            'battery_soc': float(state['battery_soc'][0]),
            'distance_km': float(np.hypot(state['x'][0], state['y'][0]) / 1000.0),
            'time_elapsed_s': 0.0, 'time_elapsed': datetime.timedelta()}


class BalloonVectorEnv(VectorEnv):
  """A slab of balloons as a Gymnasium vector environment (no autoreset).

  reset(seed=int | list, options={'reset_mask': bool[B], 'initial_states': list}) resets
  all balloons or those in the mask; step(actions int[B]) steps all of them. Balloons
  truncate after `max_episode_steps` steps. Infos are dicts of [B] arrays with '_key' masks.
  """

  metadata = {'autoreset_mode': AutoresetMode.DISABLED, 'render_modes': ['rgb_array'],
              'render_fps': 10}
  # A finished balloon stays put when stepped (evaluation flies ended rows on);
  # slabs need not refuse it (`agents.tools.errors.EpisodeEndedError`).
  steps_finished_episodes = True

  def __init__(self, num_envs: int = 1, max_episode_steps: int = constants.EPISODE_STEPS,
               wind: str = constants.DEFAULT_WIND, render_mode: str | None = None,
               seed: int | None = None, power_sun: str = 'episode_start',
               gp_predict_dtype: type = np.float32, progress_reward: float = 0.0,
               lookahead: Any = None) -> None:
    """Creates the slab.

    Args:
      num_envs: number of balloons B.
      max_episode_steps: steps before truncation (None: never).
      wind: 'generative', 'procedural' or 'static' (as for BalloonEnv).
      render_mode: None or 'rgb_array' (draws balloon 0).
      seed: seeds the stream of episode seeds used when reset gets no seed.
      power_sun: as for BalloonEnv.
      gp_predict_dtype: as for BalloonEnv.
      progress_reward: as for BalloonEnv.
      lookahead: as for BalloonEnv.
    """
    self.wind = wind
    self.lookahead = lookahead_lib.check_lookahead(lookahead)
    if render_mode is not None and render_mode not in self.metadata['render_modes']:
      raise ValueError(f'render_mode must be None or one of {self.metadata["render_modes"]}, '
                       f'got {render_mode!r}.')
    self.simulator = simulator_lib.BalloonSimulator(
        num_envs, wind=wind, max_episode_steps=max_episode_steps, seed=seed,
        power_sun=power_sun, gp_predict_dtype=gp_predict_dtype, progress_reward=progress_reward)
    self.num_envs = self.simulator.num_balloons
    self.render_mode = render_mode
    self.single_observation_space = observation_space(self.lookahead)
    self.single_action_space = gymnasium.spaces.Discrete(3)
    self.observation_space = batch_space(self.single_observation_space, self.num_envs)
    self.action_space = batch_space(self.single_action_space, self.num_envs)
    self._renderer = None
    if render_mode is not None:
      from agents.env.balloon import renderer
      self._renderer = renderer.FlightRenderer(self.simulator, 0)

  def reset(self, *, seed: int | list[int] | None = None,
            options: Mapping[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Resets all balloons, or those in options['reset_mask'].

    Args:
      seed: None; an int (balloon i gets seed + i, as Gymnasium does); or a list of B
        entries, each a non-negative int or None.
      options: optional dict with 'reset_mask' (bool [B]) and 'initial_states' (list of B
        InitialState / dict / None).

    Returns:
      (observation float32 [B, 1099], infos with '_key' masks marking the reset balloons).
    """
    options = dict(options or {})
    mask = options.pop('reset_mask', None)
    initial_states = options.pop('initial_states', None)
    if options:
      raise ValueError(f'Unknown reset options {sorted(options)}; expected reset_mask, '
                       'initial_states.')
    if mask is None:
      mask = np.ones(self.num_envs, bool)
    mask = np.asarray(mask)
    if mask.shape != (self.num_envs,) or mask.dtype != bool:
      raise ValueError(f'reset_mask must be a bool array of shape ({self.num_envs},), got '
                       f'{mask.dtype} {mask.shape}.')
    indices = np.flatnonzero(mask)
    if seed is None:
      seeds = [None] * self.num_envs
    elif isinstance(seed, (list, tuple, np.ndarray)):
      if len(seed) != self.num_envs:
        raise ValueError(f'seed list must have {self.num_envs} entries, got {len(seed)}.')
      seeds = [None if value is None else check_seed(value, f'seed[{index}]')
               for index, value in enumerate(seed)]
    else:
      base = check_seed(seed)
      seeds = [base + index for index in range(self.num_envs)]
      self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(base)
    if initial_states is None:
      initial_states = [None] * self.num_envs
    if len(initial_states) != self.num_envs:
      raise ValueError(f'initial_states must have {self.num_envs} entries, got '
                       f'{len(initial_states)}.')
    states = [_initial_state(initial_states[index], f'initial_states[{index}]')
              for index in indices]
    observation = self.simulator.reset(indices, [seeds[index] for index in indices], states)
    if self._renderer is not None and mask[0]:
      self._renderer.reset()
    state = self.simulator.read_state()
    infos = {}
    for key, value in (('episode_seed', state['episode_seed']), ('pressure', state['pressure']),
                       ('superpressure', state['superpressure']),
                       ('battery_soc', state['battery_soc'])):
      infos[key] = value
      infos['_' + key] = mask.copy()
    return _with_lookahead(observation, self.simulator, self.lookahead), infos

  def step(
      self, actions: Any,
  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Steps every balloon; returns (obs [B, 1099], reward, terminated, truncated, infos)."""
    return self._step(actions, None)

  def step_with_wind(
      self, actions: Any, wind_u: np.ndarray, wind_v: np.ndarray,
  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """`step` with explicit winds (m/s), arrays [B], held over the step."""
    return self._step(actions, (wind_u, wind_v))

  def _step(
      self, actions: Any, wind: tuple[np.ndarray, np.ndarray] | None,
  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    observation, reward, terminated, truncated, info = _step_and_record(
        self.simulator, actions, wind, self._renderer)
    mask = np.ones(self.num_envs, bool)
    infos = {}
    for key, value in info.items():
      infos[key] = value
      infos['_' + key] = mask
    observation = _with_lookahead(observation, self.simulator, self.lookahead)
    return observation, reward, terminated, truncated, infos

  def read_state(self) -> dict[str, np.ndarray]:
    """The physical state of every balloon after the last step: dict of [B] arrays."""
    return self.simulator.read_state()

  def render(self) -> Any:
    """An RGB array of balloon 0's flight ('rgb_array' mode), else None."""
    if self._renderer is None:
      return None
    return self._renderer.render(self.render_mode)

  def close_extras(self, **kwargs: Any) -> None:  # pylint: disable=unused-argument
    if self._renderer is not None:
      self._renderer.close()


class SimulatorState(collections.namedtuple('SimulatorState', ['balloon_state'])):
  """BLE's `SimulatorState`, with the one field code outside BLE reads: `balloon_state`."""


def _with_time_elapsed(info: dict[str, Any]) -> dict[str, Any]:
  """One balloon's info with BLE's `time_elapsed` (a timedelta) beside `time_elapsed_s`."""
  info['time_elapsed'] = datetime.timedelta(seconds=info['time_elapsed_s'])
  return info


def _with_lookahead(observation: np.ndarray, simulator: simulator_lib.BalloonSimulator,
                    lookahead: lookahead_lib.Lookahead | None) -> np.ndarray:
  """The observation [B, 1099] with the lookahead block appended (unchanged if none)."""
  if lookahead is None:
    return observation
  return np.concatenate([observation, lookahead_lib.lookahead_block(simulator, lookahead)], 1)


def _check_action(action: Any) -> int:
  """Returns a single action as an int in {0, 1, 2}; raises a clear error otherwise."""
  value = np.asarray(action)
  if value.size != 1 or value.dtype.kind not in 'iub':
    if not (value.size == 1 and value.dtype.kind == 'f' and np.isfinite(value).all()
            and float(value.reshape(())) == round(float(value.reshape(())))):
      raise TypeError(f'action must be an integer in {{0, 1, 2}} (0 DOWN, 1 STAY, 2 UP), got '
                      f'{action!r}.')
  if value.dtype.kind == 'b':
    raise TypeError(f'action must be an integer in {{0, 1, 2}}, got the bool {action!r}.')
  number = int(value.reshape(()))
  if number not in (0, 1, 2):
    raise ValueError(f'action must be 0 (DOWN), 1 (STAY) or 2 (UP), got {number}.')
  return number


def _step_and_record(simulator: simulator_lib.BalloonSimulator, actions: np.ndarray,
                     wind: tuple[np.ndarray, np.ndarray] | None, renderer: Any) -> Any:
  """Steps `simulator` once and adds the step to the flight the renderer draws, if any."""
  result = simulator.step(actions, wind=wind)
  if renderer is not None:
    renderer.record()
  return result
