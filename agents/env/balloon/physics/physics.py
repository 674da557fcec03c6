"""The 10 s physics sub-step and the 180 s agent step of a slab of balloons (balloon.md §4).

One sub-step (explicit Euler) computes every update from the state at its start and
applies them together: drift, terminal-velocity ascent converted to a pressure change,
the thermal balance, envelope volume and superpressure, the ACS flow, and the battery.
An agent step holds the wind and the effective action for 18 sub-steps and stops a
balloon's sub-stepping as soon as its status is not OK. The state physics advances is a
`SlabState` passed in explicitly, with a mask of the balloons to advance.

As in BLE, the ambient temperature is part of the state and lags the pressure by one
sub-step: a sub-step computes the air density and the thermal balance with the ambient
temperature the previous sub-step looked up, and looks up the new one at its own
start-of-sub-step pressure (BLE's `_simulate_step_internal`). In a slow STAY the Euler
sub-step alternates between two pressures about 11 Pa apart, and the lag decides which
side an agent step lands on, so it is kept (it costs nothing: still one lookup per
sub-step).

Everything that depends only on time and horizontal position (the sun) is computed for
all 18 sub-steps of an agent step at once (`SunForcing`): with the wind held constant a
balloon's position at sub-step k is x0 + k·u·dt, known in advance. What depends on the
pressure (attenuation, buoyancy, temperatures) is done per sub-step on arrays over the
slab; a slab of one runs the same equations on Python floats (see array_math).

Deviation, documented: the pressure change uses the analytic local dP/dh = −ρ·g of the
atmosphere model (hydrostatic, exact for its barometric layers) instead of BLE's 1 Pa
finite difference; the two differ by under 0.02 Pa in pressure over a 100-step episode.
"""

import dataclasses
import math

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import acs, array_math, solar, thermal

_DT = constants.SUBSTEP_S
_DENSITY_FACTOR = constants.AIR_MOLAR_MASS / constants.GAS_CONSTANT
_CLIMB_FACTOR = 2.0 * constants.GRAVITY / constants.DRAG_COEFFICIENT
_MOLS_PER_KG_STEP = _DT / constants.AIR_MOLAR_MASS
_HOURS_PER_SUBSTEP = _DT / 3600.0
_K = constants.ENVELOPE_VOLUME_PER_PA
_V0 = constants.ENVELOPE_BASE_VOLUME


def volume_and_superpressure(m, total_mols, internal_temperature, pressure):
  """Envelope volume (m³) and superpressure (Pa) of a gas load at a pressure (§4.4).

  Slack (free volume ≤ V0): V = V_free and superpressure 0. Otherwise the envelope
  stretches, V = V0 + k·(P_gas − P), the positive root of V² − (V0 − kP)V − k·V_free·P = 0.
  """
  free_volume = total_mols * constants.GAS_CONSTANT * internal_temperature / pressure
  half_b = 0.5 * (_K * pressure - _V0)
  c = _K * free_volume * pressure
  stretched = -half_b + m.sqrt(half_b * half_b + c)
  stretched_superpressure = pressure * free_volume / stretched - pressure
  is_stretched = free_volume > _V0
  return (m.where(is_stretched, stretched, free_volume),
          m.where(is_stretched, stretched_superpressure, 0.0))


def substep(m, temperature_at, pressure, internal_temperature, mols_air, volume, superpressure,
            charge, ambient_temperature, pump_on, vent_on, airmass_per_pascal, panel_power,
            sun_heat_factor, hotel_load, earth_heat):
  """One 10 s Euler sub-step (§4), excluding the horizontal drift (done per agent step).

  Args:
    m: math namespace (array_math.NUMPY for a slab, array_math.SCALAR for one balloon).
    temperature_at: ambient temperature as a function of pressure.
    pressure, internal_temperature, mols_air, volume, superpressure, charge,
      ambient_temperature: the state at the start of the sub-step (Pa, K, mol, m³, Pa, Wh,
      K); the ambient temperature is the one the previous sub-step looked up (BLE's lag).
    pump_on, vent_on: 1.0 where the effective action is DOWN (pump) or UP (vent), else 0.0.
    airmass_per_pascal: the sun's airmass divided by pressure (solar.airmass_per_pascal).
    panel_power: unattenuated panel power (W), 0 at night.
    sun_heat_factor: flux·0.25·α_tot(0.01435) (W/m²), 0 at night.
    hotel_load: 120.4 W by day, 183.7 W at night.
    earth_heat: upwelling-infrared heating per area (thermal.earth_heat_per_area).

  Returns:
    (pressure, internal_temperature, mols_air, volume, superpressure, charge,
    ambient_temperature, acs_power, solar_power) after the sub-step: the ambient
    temperature is the atmosphere's at the start-of-sub-step pressure (used by the next
    sub-step); the last two are the values used during it.
  """
  new_ambient_temperature = temperature_at(pressure)
  density = pressure * _DENSITY_FACTOR / ambient_temperature
  # §4.2 terminal velocity: dh/dt = dir·sqrt(|2(ρV − m)g / (ρ·Cd·V^(2/3))|).
  cube_root_volume = m.cbrt(volume)
  net_lift = density * volume - (constants.EMPTY_MASS + constants.AIR_MOLAR_MASS * mols_air)
  climb_rate = m.copysign(
      m.sqrt(m.abs(net_lift) * _CLIMB_FACTOR / (density * cube_root_volume * cube_root_volume)),
      net_lift)
  new_pressure = pressure - density * (constants.GRAVITY * _DT) * climb_rate
  # §5 attenuation at the start-of-sub-step pressure, shared by panels and film heating.
  airmass = airmass_per_pascal * pressure
  attenuation = 0.5 * (m.exp(-0.65 * airmass) + m.exp(-0.95 * airmass))
  solar_power = attenuation * panel_power
  # §4.3 thermal balance.
  new_internal_temperature = internal_temperature + _DT * thermal.temperature_rate(
      m, volume, internal_temperature, ambient_temperature, density,
      sun_heat_factor * attenuation, earth_heat)
  # §4.4 volume and superpressure from the start-of-sub-step gas state.
  new_volume, new_superpressure = volume_and_superpressure(
      m, constants.HELIUM_MOLS + mols_air, internal_temperature, pressure)
  # §4.5 ACS.
  if m.is_scalar and not pump_on:
    acs_power = pump_flow = 0.0
  else:
    acs_power, pump_flow = acs.tabulated_pump_mass_flow(
        m, acs.pressure_ratio(m, pressure, superpressure))
    acs_power = pump_on * acs_power
  if m.is_scalar and not vent_on:
    vent_flow = 0.0
  else:
    vent_flow = acs.vent_mass_flow(m, pressure, superpressure, internal_temperature)
  flow = pump_on * pump_flow + vent_on * vent_flow
  new_mols_air = m.maximum(mols_air + flow * _MOLS_PER_KG_STEP, 0.0)
  # §4.6 energy.
  new_charge = m.minimum(m.maximum(
      charge + (solar_power - hotel_load - acs_power) * _HOURS_PER_SUBSTEP, 0.0),
      constants.BATTERY_CAPACITY_WH)
  return (new_pressure, new_internal_temperature, new_mols_air, new_volume, new_superpressure,
          new_charge, new_ambient_temperature, acs_power, solar_power)


def status_of(superpressure, charge):
  """Balloon status after a sub-step, numpy [B]: OUT_OF_POWER over ZEROPRESSURE over BURST."""
  status = np.where(superpressure > constants.BURST_SUPERPRESSURE, constants.STATUS_BURST,
                    constants.STATUS_OK)
  status = np.where(superpressure <= 0.0, constants.STATUS_ZEROPRESSURE, status)
  return np.where(charge <= 0.0, constants.STATUS_OUT_OF_POWER, status).astype(np.int8)


def scalar_status_of(superpressure, charge):
  """`status_of` for Python floats."""
  if charge <= 0.0:
    return constants.STATUS_OUT_OF_POWER
  if superpressure <= 0.0:
    return constants.STATUS_ZEROPRESSURE
  if superpressure > constants.BURST_SUPERPRESSURE:
    return constants.STATUS_BURST
  return constants.STATUS_OK


class SunForcing:
  """The sun over the 18 sub-steps of one agent step, arrays [18, B].

  The elevation is computed at every sub-step's time and position. The slowly varying
  inputs (declination, equation of time, flux, and the balloon's latitude and longitude,
  which move by a few km) are evaluated at the step's start and end and interpolated
  linearly in between: their curvature over 180 s is below 1e-9 relative, and it saves
  most of the trigonometry.

  Attributes:
    airmass_per_pascal, panel_power, sun_heat_factor, hotel_load: see `substep`.
    end: (latitude, longitude, (declination, equation of time, flux)) [B] after all 18
      sub-steps, for the observation that follows the step.
  """

  def __init__(self, unix_time_s, station_lat_deg, station_lng_deg, x, y, drift_x, drift_y):
    """Computes the sun for each sub-step.

    Args:
      unix_time_s: UTC time of each balloon at the start of the agent step, [B].
      station_lat_deg, station_lng_deg: station position of each balloon, [B].
      x, y: balloon position at the start of the agent step (m), [B].
      drift_x, drift_y: displacement per sub-step, u·dt and v·dt (m), [B].
    """
    # Ends at sub-step 0 and at the end of the step (18 sub-steps on), so the end values
    # also serve the observation after the step (`end`).
    count = constants.SUBSTEPS_PER_STEP
    ends = np.array([0.0, float(count)])[:, None]
    latitude, longitude = solar.latlng_from_offset(
        station_lat_deg, station_lng_deg, x + ends * drift_x, y + ends * drift_y)
    declination, equation_of_time, flux = solar.sun_terms(unix_time_s + _DT * ends)
    self.end = (latitude[1], longitude[1], (declination[1], equation_of_time[1], flux[1]))
    weight = np.arange(count, dtype=np.float64)[:, None] * (1.0 / count)
    lerp = lambda pair: pair[0] + weight * (pair[1] - pair[0])  # noqa: E731
    # Longitude may wrap at ±180°: interpolate its change, not the raw values.
    delta_lng = np.mod(longitude[1] - longitude[0] + 180.0, 360.0) - 180.0
    sub_longitude = longitude[0] + weight * delta_lng
    latitude_rad = np.radians(latitude)
    sin_product = lerp(np.sin(latitude_rad) * np.sin(declination))
    cos_product = lerp(np.cos(latitude_rad) * np.cos(declination))
    times = unix_time_s + _DT * np.arange(constants.SUBSTEPS_PER_STEP, dtype=np.float64)[:, None]
    hour_angle = solar.hour_angle_deg(times, sub_longitude, lerp(equation_of_time))
    elevation = solar.elevation_from_hour_angle(sin_product, cos_product, hour_angle)
    is_day = elevation > constants.DAYTIME_MIN_ELEVATION_DEG
    self.airmass_per_pascal = solar.airmass_per_pascal(elevation)
    self.panel_power = np.where(is_day, solar.unattenuated_panel_power(elevation), 0.0)
    self.sun_heat_factor = np.where(is_day, lerp(flux) * thermal.SOLAR_HEAT_PER_FLUX_AREA, 0.0)
    self.hotel_load = np.where(is_day, constants.HOTEL_LOAD_DAY_W, constants.HOTEL_LOAD_NIGHT_W)


class ScalarSunForcing:
  """`SunForcing` for one balloon on Python floats: lists of 18 values (one-balloon path).

  The same equations as `SunForcing` (solar's functions take the math namespace), with
  the refraction's branches taken one at a time; a test checks the two agree.
  """

  def __init__(self, unix_time_s, station_lat_deg, station_lng_deg, x, y, drift_x, drift_y):
    """Args: as `SunForcing`, but Python floats for one balloon."""
    m = array_math.SCALAR
    count = constants.SUBSTEPS_PER_STEP
    ends = []
    for offset in (0.0, float(count)):
      latitude, longitude = solar.latlng_from_offset(
          station_lat_deg, station_lng_deg, x + offset * drift_x, y + offset * drift_y, m)
      ends.append((latitude, longitude, solar.sun_terms(unix_time_s + _DT * offset, m)))
    # pylint: disable-next=unbalanced-tuple-unpacking
    (lat0, lng0, (dec0, eot0, flux0)), (lat1, lng1, (dec1, eot1, flux1)) = ends
    self.end = tuple(np.array([value]) for value in (lat1, lng1)) + (
        tuple(np.array([value]) for value in (dec1, eot1, flux1)),)
    delta_lng = (lng1 - lng0 + 180.0) % 360.0 - 180.0
    lat0_rad, lat1_rad = math.radians(lat0), math.radians(lat1)
    sin0, sin1 = math.sin(lat0_rad) * math.sin(dec0), math.sin(lat1_rad) * math.sin(dec1)
    cos0, cos1 = math.cos(lat0_rad) * math.cos(dec0), math.cos(lat1_rad) * math.cos(dec1)
    self.airmass_per_pascal, self.panel_power = [], []
    self.sun_heat_factor, self.hotel_load = [], []
    for k in range(count):
      weight = k * (1.0 / count)
      hour_angle = solar.hour_angle_deg(unix_time_s + _DT * k, lng0 + weight * delta_lng,
                                        eot0 + weight * (eot1 - eot0), m)
      elevation = solar.scalar_elevation_from_hour_angle(
          sin0 + weight * (sin1 - sin0), cos0 + weight * (cos1 - cos0), hour_angle)
      self.airmass_per_pascal.append(solar.airmass_per_pascal(elevation, m))
      if elevation > constants.DAYTIME_MIN_ELEVATION_DEG:
        self.panel_power.append(solar.unattenuated_panel_power(elevation, m))
        self.sun_heat_factor.append(
            (flux0 + weight * (flux1 - flux0)) * thermal.SOLAR_HEAT_PER_FLUX_AREA)
        self.hotel_load.append(constants.HOTEL_LOAD_DAY_W)
      else:
        self.panel_power.append(0.0)
        self.sun_heat_factor.append(0.0)
        self.hotel_load.append(constants.HOTEL_LOAD_NIGHT_W)


# The state fields one sub-step updates, in `substep`'s argument and return order, then
# the ones it reports.
EVOLVED = ('pressure', 'internal_temperature', 'mols_air', 'volume', 'superpressure',
           'battery_charge', 'ambient_temperature')
REPORTED = ('acs_power', 'solar_power')


@dataclasses.dataclass
class SlabState:
  """The physical state of a slab that the sub-steps advance, float64 [B] unless stated.

  Attributes:
    pressure, superpressure (Pa), volume (m³), internal_temperature (K),
    ambient_temperature (K, looked up at the previous sub-step's start pressure),
    mols_air (ballonet air, mol), battery_charge (Wh): evolved by each sub-step.
    acs_power, solar_power: W, of the last sub-step run.
    status: int8 [B], constants.STATUS_*.
  """
  pressure: np.ndarray
  internal_temperature: np.ndarray
  mols_air: np.ndarray
  volume: np.ndarray
  superpressure: np.ndarray
  battery_charge: np.ndarray
  ambient_temperature: np.ndarray
  acs_power: np.ndarray
  solar_power: np.ndarray
  status: np.ndarray

  @classmethod
  def zeros(cls, count):
    """A state of `count` balloons, all fields 0 and status OK."""
    fields = {name: np.zeros(count) for name in EVOLVED + REPORTED}
    return cls(status=np.full(count, constants.STATUS_OK, np.int8), **fields)

  def evolved(self):
    """The evolved fields, in `substep`'s argument order."""
    return (self.pressure, self.internal_temperature, self.mols_air, self.volume,
            self.superpressure, self.battery_charge, self.ambient_temperature)

  def set_all(self, outputs, status):
    """Rebinds every field to `substep`'s outputs and `status` (all balloons advanced)."""
    (self.pressure, self.internal_temperature, self.mols_air, self.volume, self.superpressure,
     self.battery_charge, self.ambient_temperature, self.acs_power, self.solar_power) = outputs
    self.status = status

  def set_where(self, outputs, status, where):
    """Copies `substep`'s outputs and `status` into the fields where `where` holds."""
    targets = self.evolved() + (self.acs_power, self.solar_power, self.status)
    for target, value in zip(targets, tuple(outputs) + (status,)):
      np.copyto(target, value, where=where, casting='unsafe')


def advance_slab(state, active, pump_on, vent_on, sun, temperature_at, earth_heat):
  """Runs the 18 sub-steps of an agent step on numpy arrays, in place.

  Args:
    state: the slab's SlabState; balloons outside `active` or whose status is not OK are
      left unchanged.
    active: bool [B], the balloons to advance (None: all).
    pump_on, vent_on: float64 [B], 1.0 where the effective action pumps or vents.
    sun: SunForcing of this agent step.
    temperature_at: T_amb(P) on [B] arrays.
    earth_heat: float64 [B], thermal.earth_heat_per_area of each balloon.

  Returns:
    float64 [B]: the number of sub-steps each balloon ran (for the drift and the clock).
  """
  m = array_math.NUMPY
  alive = state.status == constants.STATUS_OK
  if active is not None:
    alive &= active
  substeps = np.zeros(len(alive))
  for k in range(constants.SUBSTEPS_PER_STEP):
    all_alive = bool(alive.all())
    if not all_alive and not alive.any():
      break
    outputs = substep(
        m, temperature_at, *state.evolved(), pump_on, vent_on,
        sun.airmass_per_pascal[k], sun.panel_power[k], sun.sun_heat_factor[k],
        sun.hotel_load[k], earth_heat)
    superpressure, charge = outputs[4], outputs[5]
    ended = (superpressure > constants.BURST_SUPERPRESSURE) | (superpressure <= 0.0) | (
        charge <= 0.0)
    new_status = status_of(superpressure, charge) if ended.any() else state.status
    if all_alive:
      state.set_all(outputs, new_status)
      substeps += 1.0
    else:
      state.set_where(outputs, new_status, alive)
      substeps += alive
    alive &= state.status == constants.STATUS_OK
  return substeps


def advance_one(state, index, pump_on, vent_on, sun, temperature_at, earth_heat):
  """`advance_slab` for balloon `index` alone, on Python floats (the one-balloon fast path).

  Args:
    state: the slab's SlabState; only row `index` is read and written. The caller decides
      whether the balloon is active.
    index: the balloon.
    pump_on, vent_on: 1.0 or 0.0.
    sun: SunForcing of this agent step (column `index` is used), or a ScalarSunForcing.
    temperature_at: T_amb(P) on floats, e.g. Atmosphere.scalar_temperature_function.
    earth_heat: float.

  Returns:
    The number of sub-steps run (float).
  """
  m = array_math.SCALAR
  if state.status[index] != constants.STATUS_OK:
    return 0.0
  values = [float(field[index]) for field in state.evolved()]
  if isinstance(sun, ScalarSunForcing):
    airmass, panel = sun.airmass_per_pascal, sun.panel_power
    heat, hotel = sun.sun_heat_factor, sun.hotel_load
  else:
    airmass = sun.airmass_per_pascal[:, index].tolist()
    panel = sun.panel_power[:, index].tolist()
    heat = sun.sun_heat_factor[:, index].tolist()
    hotel = sun.hotel_load[:, index].tolist()
  status = constants.STATUS_OK
  substeps = 0.0
  outputs = None
  evolved = len(EVOLVED)
  for k in range(constants.SUBSTEPS_PER_STEP):
    outputs = substep(m, temperature_at, *values, pump_on, vent_on, airmass[k], panel[k],
                      heat[k], hotel[k], earth_heat)
    values = list(outputs[:evolved])
    substeps += 1.0
    status = scalar_status_of(outputs[4], outputs[5])
    if status != constants.STATUS_OK:
      break
  for target, value in zip(state.evolved() + (state.acs_power, state.solar_power), outputs):
    target[index] = value
  state.status[index] = status
  return substeps
