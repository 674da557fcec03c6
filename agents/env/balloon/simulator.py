"""The slab core: state arrays for B balloons, reset from seeds or explicit states, and step.

`BalloonSimulator` holds every balloon's state as float64 arrays (structure of arrays).
One `step(actions)` runs the safety layers, the 18 physics sub-steps, the wind
measurement and GP update, the 1099-float observation and the reward for the whole
slab, with no Python loop over balloons or levels. The Gymnasium faces in env.py (one
balloon, or a vector slab) are thin wrappers around it.

An episode starts from the seeded draws of balloon.md §9 or an explicit `InitialState`
(episode_start.py); the slab's wind fields are wind/slab_wind.py's.
"""

import numpy as np

from agents.env.balloon import constants, episode_start
from agents.env.balloon.episode_start import EVALUATION_SEED_BASE, check_seed
from agents.env.balloon.observation import features, reachable_range
from agents.env.balloon.physics import atmosphere as atmosphere_lib
from agents.env.balloon.physics import physics, safety, solar, stable_start, sun_search, thermal
from agents.env.balloon.physics import reward as reward_lib
from agents.env.balloon.physics.array_math import NUMPY

INFO_KEYS = ('distance_km', 'out_of_power', 'envelope_burst', 'zeropressure', 'time_elapsed_s',
             'battery_soc', 'pressure', 'superpressure', 'status', 'effective_action',
             'acs_power', 'solar_power', 'internal_temperature', 'volume', 'mols_air')


def _physical_field(name):
  """A property reading and writing field `name` of the simulator's physics.SlabState."""
  def get(self):
    return getattr(self.physical, name)

  def set_(self, value):
    setattr(self.physical, name, value)

  return property(get, set_, doc=f'The `{name}` field of `physical` (physics.SlabState).')


class BalloonSimulator:
  """A slab of B balloons stepped together.

  Attributes (float64 [B] unless stated; read them after `step`, or use `read_state`):
    x, y: position relative to the station (m).
    physical: the physics.SlabState the sub-steps advance; its fields are also attributes
      of the simulator: pressure, superpressure (Pa), volume (m³), internal_temperature,
      ambient_temperature (K), mols_air (ballonet air, mol), battery_charge (Wh),
      solar_power, acs_power (W), status (int8, constants.STATUS_*).
    last_command: int8, the last commanded action.
    effective_action: int8, what the safety layers let through.
    time_elapsed_s: seconds since the episode start. steps: int64 agent steps taken.
    atmosphere: the slab's Atmosphere. safety: the SafetyLayers.
  """

  pressure = _physical_field('pressure')
  internal_temperature = _physical_field('internal_temperature')
  mols_air = _physical_field('mols_air')
  volume = _physical_field('volume')
  superpressure = _physical_field('superpressure')
  battery_charge = _physical_field('battery_charge')
  ambient_temperature = _physical_field('ambient_temperature')
  acs_power = _physical_field('acs_power')
  solar_power = _physical_field('solar_power')
  status = _physical_field('status')

  def __init__(self, num_balloons, wind=constants.DEFAULT_WIND, max_episode_steps=None,
               seed=None, power_sun='episode_start', gp_predict_dtype=np.float32,
               progress_reward=0.0):
    """Creates the slab; call `reset` before `step`.

    Args:
      num_balloons: B ≥ 1.
      wind: 'generative' (BLE's: its VAE decoder's forecast + its simplex noise),
        'procedural' (§10 forecast + error field) or 'static' (§10 static field).
      max_episode_steps: if set, a balloon is truncated after this many steps (the vector
        face uses 960); None leaves truncation to a TimeLimit wrapper.
      seed: seeds the stream of episode seeds used when `reset` gets no seed.
      power_sun: where the power safety layer takes sunrise and sunset: 'episode_start'
        (BLE: found once at the start position, then advanced by whole days) or
        'balloon' (at the balloon's current position each step; see safety.py).
      gp_predict_dtype: float type of the wind GP's prediction: float32 (default; the
        uncertainty feature within 2e-4 of float64, docs/fidelity.md) or float64 (about
        45 % slower for a slab of 256).
      progress_reward: weight w of an optional shaped *training* reward: each step adds
        w · (distance before − distance after) in km to BLE's reward, so moving 1 km
        toward the station earns w. 0 (default) keeps BLE's reward exactly; evaluation
        always flies with 0 (see reward.progress_bonus).
    """
    if isinstance(num_balloons, bool) or not isinstance(num_balloons, (int, np.integer)) or (
        num_balloons < 1):
      raise ValueError(f'num_balloons must be a positive integer, got {num_balloons!r}.')
    if max_episode_steps is not None and max_episode_steps < 1:
      raise ValueError(f'max_episode_steps must be positive or None, got {max_episode_steps}.')
    count = self.num_balloons = int(num_balloons)
    self.max_episode_steps = max_episode_steps
    self.progress_reward = reward_lib.check_progress_weight(progress_reward)
    # The reward's station-keeping radius (BLE's station_keeping_radius_km); the
    # evaluation's TWR50 keeps 50 km.
    self.station_radius_km = constants.STATION_RADIUS_KM
    from agents.env.balloon.wind import slab_wind  # numba's kernels load with the first slab
    self._wind = slab_wind.SlabWind(count, wind, gp_predict_dtype)
    self._seed_stream = np.random.default_rng(None if seed is None else check_seed(seed))
    self.atmosphere = atmosphere_lib.Atmosphere(np.full(count, 0.5))
    self.safety = safety.SafetyLayers(count, power_sun)

    def zeros():
      return np.zeros(count)

    self.start_unix_s, self.station_lat_deg, self.station_lng_deg = zeros(), zeros(), zeros()
    self.x, self.y, self.time_elapsed_s = zeros(), zeros(), zeros()
    self.physical = physics.SlabState.zeros(count)
    self.hotel_load = np.full(count, constants.HOTEL_LOAD_NIGHT_W)
    self.upwelling_infrared, self.earth_heat = zeros(), zeros()
    self.wind_u, self.wind_v = zeros(), zeros()
    self.last_command = np.full(count, constants.STAY, np.int8)
    self.effective_action = np.full(count, constants.STAY, np.int8)
    self.steps = np.zeros(count, np.int64)
    self.episode_seeds = np.zeros(count, np.int64)
    self._seconds_to_sunset, self._seconds_to_sunrise = zeros(), zeros()
    self._excess_energy = np.zeros(count, bool)
    self._range_table = np.zeros((count, reachable_range.TABLE_TIMES, 2))
    self._observation = np.zeros((count, constants.OBSERVATION_SIZE), np.float32)
    self._scalar_temperature = None
    self._triples = self._scratch = None
    self._rows = np.arange(count)
    self._has_reset = np.zeros(count, bool)

  # ---------------------------------------------------------------- reset

  def reset(self, indices=None, seeds=None, initial_states=None):
    """Starts new episodes for balloons `indices`.

    Args:
      indices: int balloons to reset (None: all).
      seeds: per index a non-negative int or None (drawn from the seed stream); or None.
        Any int given also reseeds the stream from the ints given, so what later
        unseeded resets draw follows from them.
      initial_states: per index an InitialState or None (seeded draws); or None.

    Returns:
      float32 [B, 1099]: the observation of the whole slab (rows not reset unchanged).
    """
    indices = self._check_indices(indices)
    count = len(indices)
    seeds = [None] * count if seeds is None else list(seeds)
    states = [None] * count if initial_states is None else list(initial_states)
    if len(seeds) != count or len(states) != count:
      raise ValueError(f'reset got {count} indices but {len(seeds)} seeds and '
                       f'{len(states)} initial states.')
    episode_seeds = np.array([
        int(self._seed_stream.integers(EVALUATION_SEED_BASE)) if seed is None
        else check_seed(seed, f'seed for balloon {index}') for index, seed in zip(indices, seeds)],
        np.int64)
    given = [int(seed) for seed, asked in zip(episode_seeds, seeds) if asked is not None]
    if given:
      # Seeded resets seed the stream as well (as Gymnasium's reset(seed=...) seeds the
      # environment's generator), so the episodes a later unseeded reset draws (a balloon
      # that ended, in training) are the same in every run.
      self._seed_stream = np.random.default_rng(given)
    starts = episode_start.episode_starts(indices, episode_seeds, states)
    rngs, alpha, start = starts.rngs, starts.alpha, starts.start
    latitude, longitude, x, y = starts.latitude, starts.longitude, starts.x, starts.y
    pressure, infrared, episode_atmosphere = starts.pressure, starts.infrared, starts.atmosphere
    self._wind.sample(indices, rngs)
    self.atmosphere.set_alphas(indices, alpha)
    altitude_pressures = episode_atmosphere.pressure_at_height(
        np.broadcast_to(np.asarray(safety.ALTITUDE_THRESHOLDS_M), (count, 3)))
    earth_heat = thermal.earth_heat_per_area(NUMPY, infrared)
    # §7 stable start at the start pressure, in the sun of the start place and time.
    lat, lng = solar.latlng_from_offset(latitude, longitude, x, y)
    # The power layer's sunrise and sunset, found once at the start (BLE).
    sunrise, sunset = (sun_search.next_sunrise_sunset(start, lat, lng)
                       if self.safety.power_sun == 'episode_start' else (None, None))
    self.safety.reset(indices, altitude_pressures, sunrise, sunset)
    elevation, _, flux = solar.solar_position(start, lat, lng)
    _, ambient_temperature, _ = episode_atmosphere.at_pressure(pressure)
    mols_air, internal_temperature, volume, superpressure = stable_start.stable_state(
        pressure, ambient_temperature,
        stable_start.sun_heat_per_area(elevation, flux, pressure), earth_heat)
    self._range_table[indices] = reachable_range.build_table(
        episode_atmosphere, start, latitude, longitude, earth_heat)
    for name, values in (
        ('start_unix_s', start), ('station_lat_deg', latitude), ('station_lng_deg', longitude),
        ('x', x), ('y', y), ('pressure', pressure), ('upwelling_infrared', infrared),
        ('earth_heat', earth_heat), ('mols_air', mols_air),
        ('internal_temperature', internal_temperature), ('ambient_temperature',
                                                         ambient_temperature),
        ('volume', volume), ('superpressure', superpressure)):
      getattr(self, name)[indices] = values
    self.time_elapsed_s[indices] = 0.0
    self.battery_charge[indices] = constants.BATTERY_START_WH
    self.acs_power[indices] = 0.0
    self.solar_power[indices] = 0.0
    self.status[indices] = constants.STATUS_OK
    self.last_command[indices] = constants.STAY
    self.effective_action[indices] = constants.STAY
    self.steps[indices] = 0
    self.episode_seeds[indices] = episode_seeds
    self._has_reset[indices] = True
    if self.num_balloons == 1:
      self._scalar_temperature = self.atmosphere.scalar_temperature_function(0)
    self._wind.gp.reset(indices)
    self._measure_wind(indices)
    self._update_observation(indices)
    return self._observation.copy()

  # ---------------------------------------------------------------- step

  def step(self, actions, wind=None):
    """Advances every balloon by one 180 s agent step.

    Args:
      actions: int [B] in {0 DOWN, 1 STAY, 2 UP}.
      wind: optional (u, v), each float [B] in m/s: an explicit wind held over this step
        instead of the true wind at the balloon (the GP still measures the wind fields).

    Returns:
      (observation float32 [B, 1099], reward float64 [B], terminated bool [B],
      truncated bool [B], info dict of [B] arrays; keys INFO_KEYS).
      Balloons already terminated or truncated are left unchanged (reset them).
    """
    if not self._has_reset.all():
      raise RuntimeError('BalloonSimulator.step called before every balloon was reset; '
                         f'balloons never reset: {np.flatnonzero(~self._has_reset).tolist()}.')
    actions = self._check_actions(actions)
    active = self.status == constants.STATUS_OK
    if self.max_episode_steps is not None:
      active &= self.steps < self.max_episode_steps
    all_active = bool(active.all())
    if wind is None:
      wind_u, wind_v = self.wind_u, self.wind_v
    else:
      wind_u, wind_v = self._check_wind(wind)
    np.copyto(self.last_command, actions, where=active, casting='unsafe')
    now = self.start_unix_s + self.time_elapsed_s
    effective = self.safety.apply(actions, now, self._seconds_to_sunset,
                                  self._seconds_to_sunrise, self.battery_charge,
                                  self.superpressure, self.pressure,
                                  None if all_active else active)
    np.copyto(self.effective_action, effective, where=active, casting='unsafe')
    pump_on = (effective == constants.DOWN).astype(np.float64)
    vent_on = (effective == constants.UP).astype(np.float64)
    drift_x, drift_y = wind_u * constants.SUBSTEP_S, wind_v * constants.SUBSTEP_S
    if self.progress_reward:
      distance_before_km = np.hypot(self.x, self.y) / 1000.0
    if self.num_balloons == 1:
      sun = physics.ScalarSunForcing(
          float(now[0]), float(self.station_lat_deg[0]), float(self.station_lng_deg[0]),
          float(self.x[0]), float(self.y[0]), float(drift_x[0]), float(drift_y[0]))
      ran = physics.advance_one(
          self.physical, 0, float(pump_on[0]), float(vent_on[0]), sun,
          self._scalar_temperature, float(self.earth_heat[0])) if active[0] else 0.0
      substeps = np.array([ran])
      if ran:
        self.hotel_load[0] = sun.hotel_load[int(ran) - 1]
    else:
      sun = physics.SunForcing(now, self.station_lat_deg, self.station_lng_deg, self.x, self.y,
                               drift_x, drift_y)
      substeps = physics.advance_slab(self.physical, None if all_active else active, pump_on,
                                      vent_on, sun, self.atmosphere.temperature_at_pressure,
                                      self.earth_heat)
      last = np.maximum(substeps.astype(np.intp) - 1, 0)
      self.hotel_load = np.where(substeps > 0, sun.hotel_load[last, self._rows], self.hotel_load)
    ran_all = bool((substeps == constants.SUBSTEPS_PER_STEP).all())
    self._drift(drift_x, drift_y, substeps, ran_all)
    self.time_elapsed_s += constants.SUBSTEP_S * substeps
    self.steps += active
    # Balloons that ran all 18 sub-steps are where SunForcing's end values were computed.
    sun_end = sun.end if ran_all else None
    if all_active:
      # Every balloon measures: one forecast query serves the measurement and the column,
      # and the GP observes and predicts in one pass over its windows.
      self._update_observation(None, sun_end, measure=True)
    else:
      self._measure_wind(np.flatnonzero(active))
      self._update_observation(None, sun_end)
    reward = reward_lib.station_keeping_reward(self.x, self.y, self.last_command,
                                               self._excess_energy, self.acs_power,
                                               self.station_radius_km)
    distance_km = np.hypot(self.x, self.y) / 1000.0
    if self.progress_reward:
      reward = reward + reward_lib.progress_bonus(distance_before_km, distance_km,
                                                  self.progress_reward)
    terminated = self.status != constants.STATUS_OK
    if self.max_episode_steps is None:
      truncated = np.zeros(self.num_balloons, bool)
    else:
      truncated = (self.steps >= self.max_episode_steps) & ~terminated
    info = self._info(distance_km)
    return self._observation.copy(), reward, terminated, truncated, info

  def read_state(self):
    """A snapshot (copies) of the state after the last step or reset, arrays [B]."""
    return {
        'x': self.x.copy(), 'y': self.y.copy(), 'pressure': self.pressure.copy(),
        'superpressure': self.superpressure.copy(), 'volume': self.volume.copy(),
        'internal_temperature': self.internal_temperature.copy(),
        'ambient_temperature': self.ambient_temperature.copy(),
        'mols_air': self.mols_air.copy(), 'mols_helium': np.full(
            self.num_balloons, constants.HELIUM_MOLS),
        'battery_charge': self.battery_charge.copy(),
        'battery_soc': self.battery_charge / constants.BATTERY_CAPACITY_WH,
        'solar_power': self.solar_power.copy(), 'acs_power': self.acs_power.copy(),
        'power_load': self.hotel_load + self.acs_power, 'status': self.status.copy(),
        'last_command': self.last_command.copy(),
        'effective_action': self.effective_action.copy(),
        'navigation_paused': self.safety.navigation_paused,
        'time_elapsed_s': self.time_elapsed_s.copy(),
        'unix_time_s': self.start_unix_s + self.time_elapsed_s,
        'station_lat_deg': self.station_lat_deg.copy(),
        'station_lng_deg': self.station_lng_deg.copy(),
        'atmosphere_alpha': self.atmosphere.alphas.copy(),
        'upwelling_infrared': self.upwelling_infrared.copy(),
        'wind_u': self.wind_u.copy(), 'wind_v': self.wind_v.copy(),
        'steps': self.steps.copy(), 'episode_seed': self.episode_seeds.copy(),
    }

  def true_wind(self, indices, x, y, pressure, t):
    """The true wind (forecast + error) of balloons `indices` at points (for renderers)."""
    return self._wind.truth(indices, x, y, pressure, t)

  def estimated_wind(self, x, y, pressure, t, float32=False):
    """The wind an agent can know at M points per balloon: forecast + GP posterior mean.

    The forecast plus the posterior mean of its error given the balloon's own
    measurements so far (the estimate the observation's wind column shows), never the
    true error field; for planners (planner.py).

    Args:
      x, y, pressure, t: float arrays [B, M]: offsets from the station (m), pressures
        (Pa) and times since the episode start (s).
      float32: the GP mean in float32 (`WindGP.mean_at`), for features.

    Returns:
      (u, v), each float64 [B, M], in m/s.
    """
    x, y, pressure, t = np.broadcast_arrays(*(np.asarray(a, np.float64)
                                              for a in (x, y, pressure, t)))
    forecast_u, forecast_v = self.forecast_wind(x, y, pressure, t)
    error_u, error_v = self._wind.gp.mean_at(x, y, pressure, t, float32)
    return forecast_u + error_u, forecast_v + error_v

  def forecast_wind(self, x, y, pressure, t):
    """The forecast alone at M points per balloon, as `estimated_wind` takes and returns
    them: what an agent would know without its own measurements (for planner
    diagnostics)."""
    x, y, pressure, t = np.broadcast_arrays(*(np.asarray(a, np.float64)
                                              for a in (x, y, pressure, t)))
    count, points = x.shape
    indices = np.repeat(np.arange(count), points)
    u, v = self._wind.forecast.query(indices, x.ravel(), y.ravel(), pressure.ravel(), t.ravel())
    return u.reshape(x.shape), v.reshape(x.shape)

  def reachable_pressures(self, elapsed_s=None):
    """(lowest, highest) reachable pressure (Pa), [B] each, at `elapsed_s` (None: now).

    The range whose levels the observation shows (the rest is padding), from the
    episode's hourly table.
    """
    elapsed_s = self.time_elapsed_s if elapsed_s is None else np.asarray(elapsed_s, np.float64)
    return reachable_range.lookup(self._range_table, elapsed_s)

  @property
  def observation(self):
    """float32 [B, 1099], the current observation (a copy)."""
    return self._observation.copy()

  # ---------------------------------------------------------------- internals

  def _info(self, distance_km):
    return {
        'distance_km': distance_km,
        'out_of_power': self.status == constants.STATUS_OUT_OF_POWER,
        'envelope_burst': self.status == constants.STATUS_BURST,
        'zeropressure': self.status == constants.STATUS_ZEROPRESSURE,
        'time_elapsed_s': self.time_elapsed_s.copy(),
        'battery_soc': self.battery_charge / constants.BATTERY_CAPACITY_WH,
        'pressure': self.pressure.copy(), 'superpressure': self.superpressure.copy(),
        'status': self.status.copy(), 'effective_action': self.effective_action.copy(),
        'acs_power': self.acs_power.copy(), 'solar_power': self.solar_power.copy(),
        'internal_temperature': self.internal_temperature.copy(),
        'volume': self.volume.copy(), 'mols_air': self.mols_air.copy(),
    }

  def _drift(self, drift_x, drift_y, substeps, ran_all):
    """Moves each balloon by (drift_x, drift_y) once per sub-step it ran.

    Added one sub-step at a time, as BLE's Euler step does (x += u·dt), not as 18·u·dt,
    so positions agree with BLE's to the last bit.
    """
    if self.num_balloons == 1:
      x, y, dx, dy = float(self.x[0]), float(self.y[0]), float(drift_x[0]), float(drift_y[0])
      for _ in range(int(substeps[0])):
        x += dx
        y += dy
      self.x[0], self.y[0] = x, y
      return
    for k in range(constants.SUBSTEPS_PER_STEP):
      if ran_all:
        self.x += drift_x
        self.y += drift_y
        continue
      moving = substeps > k
      if not moving.any():
        break
      self.x += np.where(moving, drift_x, 0.0)
      self.y += np.where(moving, drift_y, 0.0)

  def _measure_wind(self, indices):
    """Measures the true wind at the balloons and feeds the forecast error to the GP (§11)."""
    rows = slice(None) if indices is None else indices
    x, y, pressure, t = self.x[rows], self.y[rows], self.pressure[rows], self.time_elapsed_s[rows]
    forecast_u, forecast_v = self._wind.forecast.query(indices, x, y, pressure, t)
    if self._wind.error is None:
      error_u, error_v = np.zeros_like(forecast_u), np.zeros_like(forecast_v)
    else:
      error_u, error_v = self._wind.error.query(indices, x, y, pressure, t)
    self.wind_u[rows] = forecast_u + error_u
    self.wind_v[rows] = forecast_v + error_v
    if indices is None or len(indices):
      self._wind.gp.observe(x, y, pressure, t, error_u, error_v, indices=indices)

  def _update_observation(self, indices, sun_end=None, measure=False):
    """Recomputes the observation rows `indices` (None: all) from the current state.

    Args:
      indices: rows to update (None: all).
      sun_end: `SunForcing.end` of the step just run, when it holds for every balloon
        (saves recomputing latitude, longitude and the sun's time terms).
      measure: also measure the wind at every balloon and feed it to the GP first (what
        `_measure_wind(None)` does), sharing the forecast query with the column.
    """
    count = self.num_balloons
    unix_time = self.start_unix_s + self.time_elapsed_s
    if sun_end is None:
      latitude, longitude = solar.latlng_from_offset(
          self.station_lat_deg, self.station_lng_deg, self.x, self.y)
      terms = None
    else:
      latitude, longitude, terms = sun_end
    # BLE's sunrise and sunset lie on its 3-minute search grid, and its solar-cycle phase
    # (features 3, 4) is computed from them: the closed form, snapped to the grid.
    if count == 1:
      # One balloon: the same equations on Python floats, 30 numpy calls fewer.
      when, lat, lng = float(unix_time[0]), float(latitude[0]), float(longitude[0])
      sun = solar.scalar_sun_state(
          when, lat, lng, None if terms is None else tuple(float(term[0]) for term in terms))
      to_sunset, to_sunrise = sun_search.scalar_snap_to_search_grid(when, lat, lng, sun[4],
                                                                    sun[5])
      elevation = np.array([sun[0]])
      phase = np.array([sun_search.scalar_solar_cycle_phase(to_sunset, to_sunrise)])
      self._seconds_to_sunset, self._seconds_to_sunrise = (np.array([to_sunset]),
                                                           np.array([to_sunrise]))
    else:
      elevation, _, _, _, to_sunset, to_sunrise = solar.sun_state(
          unix_time, latitude, longitude, terms)
      self._seconds_to_sunset, self._seconds_to_sunrise = sun_search.snap_to_search_grid(
          unix_time, latitude, longitude, to_sunset, to_sunrise)
      phase = sun_search.solar_cycle_phase(self._seconds_to_sunset, self._seconds_to_sunrise)
    soc = self.battery_charge / constants.BATTERY_CAPACITY_WH
    solar_power_now = np.where(elevation > constants.DAYTIME_MIN_ELEVATION_DEG,
                               solar.solar_power(elevation, self.pressure), 0.0)
    self._excess_energy = (solar_power_now > constants.HOTEL_LOAD_DAY_W) & (soc > 0.99)
    pressure_ratio = (self.pressure + np.maximum(self.superpressure, 0.0)) / self.pressure
    observation = np.empty((count, constants.OBSERVATION_SIZE), np.float32)
    features.ambient_features(observation, self.pressure, soc, elevation, phase, self.x, self.y,
                              self.last_command, self.safety.navigation_paused,
                              self._excess_energy, pressure_ratio)
    lowest, highest = reachable_range.lookup(self._range_table, self.time_elapsed_s)
    levels = np.broadcast_to(features.LEVEL_PRESSURES, (count, constants.NUM_LEVELS))
    reachable = (levels >= lowest[:, None]) & (levels <= highest[:, None])
    # Only reachable levels are shown (the rest is padding), so the forecast and the GP are
    # asked for the band [first, first + width) of each balloon's reachable levels, about
    # two thirds of the column.
    first = reachable.argmax(axis=1)
    width = max(int((reachable.sum(axis=1)).max()), 1)
    band = np.minimum(first[:, None] + np.arange(width), constants.NUM_LEVELS - 1)
    band_pressures = features.LEVEL_PRESSURES[band]
    if self._triples is None:
      # Reused buffers: [B, 181] arrays are big enough to be mmap-allocated afresh each time.
      self._triples = np.empty((count, constants.NUM_LEVELS, 3), np.float32)
      self._scratch = np.zeros((6, count, constants.NUM_LEVELS))
    x, y, pressure, t = self.x, self.y, self.pressure, self.time_elapsed_s
    if measure:
      # The balloon's own pressure rides along as one more level of the column query.
      query_u, query_v = self._wind.forecast.query(
          None, x, y, np.concatenate([band_pressures, pressure[:, None]], axis=1), t)
      forecast_u, forecast_v = query_u[:, :-1], query_v[:, :-1]
      if self._wind.error is None:
        measured_u, measured_v = np.zeros(count), np.zeros(count)
      else:
        measured_u, measured_v = self._wind.error.query(None, x, y, pressure, t)
      self.wind_u = query_u[:, -1] + measured_u
      self.wind_v = query_v[:, -1] + measured_v
    else:
      forecast_u, forecast_v = self._wind.forecast.query(None, x, y, band_pressures, t)
    if measure:
      error_u, error_v, band_variance = self._wind.gp.observe_and_predict(
          x, y, pressure, t, measured_u, measured_v, band_pressures)
    else:
      error_u, error_v, band_variance = self._wind.gp.predict(x, y, band_pressures, t)
    wind_u, wind_v, variance = self._scratch[3], self._scratch[4], self._scratch[5]
    rows = self._rows[:, None]
    wind_u[rows, band] = forecast_u + error_u
    wind_v[rows, band] = forecast_v + error_v
    variance[rows, band] = band_variance
    triples = features.level_triples(self.x, self.y, wind_u, wind_v, variance, reachable,
                                     self._triples, self._scratch[:3])
    features.place_column(observation, features.balloon_level(self.pressure), triples)
    if indices is None:
      self._observation = observation
    else:
      self._observation[indices] = observation[indices]

  def _check_indices(self, indices):
    if indices is None:
      return np.arange(self.num_balloons)
    indices = np.asarray(indices)
    if indices.ndim != 1 or (indices.size and not np.issubdtype(indices.dtype, np.integer)):
      raise TypeError(f'indices must be a 1-D integer array, got {indices!r}.')
    if indices.size and (indices.min() < 0 or indices.max() >= self.num_balloons):
      raise IndexError(f'indices must lie in [0, {self.num_balloons}), got {indices.tolist()}.')
    if len(np.unique(indices)) != len(indices):
      raise ValueError(f'indices must not repeat, got {indices.tolist()}.')
    return indices.astype(np.intp)

  def _check_actions(self, actions):
    actions = np.asarray(actions)
    if actions.shape != (self.num_balloons,):
      raise ValueError(f'actions must have shape ({self.num_balloons},), got {actions.shape}.')
    if actions.dtype.kind not in 'iu':
      if actions.dtype.kind == 'f' and np.all(np.isfinite(actions)) and np.all(
          actions == np.round(actions)):
        actions = actions.astype(np.int64)
      else:
        raise TypeError(f'actions must be integers in {{0, 1, 2}}, got dtype {actions.dtype}: '
                        f'{actions.tolist()}.')
    bad = np.flatnonzero((actions < 0) | (actions > 2))
    if bad.size:
      raise ValueError(f'actions must be 0 (DOWN), 1 (STAY) or 2 (UP); balloons '
                       f'{bad.tolist()} got {actions[bad].tolist()}.')
    return actions.astype(np.int64)

  def _check_wind(self, wind):
    try:
      wind_u, wind_v = wind
    except (TypeError, ValueError) as error:
      raise TypeError(f'wind must be a pair (u, v) of arrays [B], got {wind!r}.') from error
    wind_u = np.asarray(wind_u, np.float64).reshape(-1)
    wind_v = np.asarray(wind_v, np.float64).reshape(-1)
    if wind_u.shape != (self.num_balloons,) or wind_v.shape != (self.num_balloons,):
      raise ValueError(f'explicit wind u and v must each have shape ({self.num_balloons},), got '
                       f'{wind_u.shape} and {wind_v.shape}.')
    bad = np.flatnonzero(~(np.isfinite(wind_u) & np.isfinite(wind_v)))
    if bad.size:
      raise ValueError(f'explicit wind must be finite; balloons {bad.tolist()} got '
                       f'u={wind_u[bad].tolist()}, v={wind_v[bad].tolist()}.')
    return wind_u, wind_v
