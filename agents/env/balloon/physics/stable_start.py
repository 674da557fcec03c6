"""Equilibrium ("stable") balloon state at a pressure, vectorised (balloon.md §7).

At reset a balloon is put in equilibrium at its start pressure: the ballonet holds just
enough air to be neutrally buoyant at V0, the internal temperature solves dT/dt = 0
(Newton from 206 K with a central finite-difference derivative, as BLE does), and
volume and superpressure follow from §4.4. The same computation over a grid of
pressures and times gives the reachable-range table (reachable_range.py).
"""

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import array_math, physics, solar, thermal

_NEWTON_ITERATIONS = 10
_NEWTON_DELTA_K = 0.01
_NEWTON_TOLERANCE = 1e-5


def ballonet_air_for_neutral_buoyancy(ambient_density):
  """Mols of ballonet air that make a balloon of volume V0 neutrally buoyant (≥ 0)."""
  return np.maximum(
      (ambient_density * constants.ENVELOPE_BASE_VOLUME - constants.EMPTY_MASS)
      / constants.AIR_MOLAR_MASS, 0.0)


# pylint: disable-next=redefined-outer-name
def stable_internal_temperature(ambient_temperature, ambient_density, sun_heat_per_area,
                                earth_heat):
  """The internal temperature where dT/dt = 0 at volume V0 (any broadcastable shapes)."""
  m = array_math.NUMPY
  shape = np.broadcast_shapes(np.shape(ambient_temperature), np.shape(ambient_density),
                              np.shape(sun_heat_per_area), np.shape(earth_heat))
  temperature = np.full(shape, constants.STABLE_START_TEMPERATURE)
  converged = np.zeros(shape, bool)
  volume = constants.ENVELOPE_BASE_VOLUME
  for _ in range(_NEWTON_ITERATIONS):
    rate_low = thermal.temperature_rate(
        m, volume, temperature - _NEWTON_DELTA_K / 2, ambient_temperature, ambient_density,
        sun_heat_per_area, earth_heat)
    rate_high = thermal.temperature_rate(
        m, volume, temperature + _NEWTON_DELTA_K / 2, ambient_temperature, ambient_density,
        sun_heat_per_area, earth_heat)
    slope = (rate_high - rate_low) / _NEWTON_DELTA_K
    mean_rate = 0.5 * (rate_low + rate_high)
    # BLE updates, then stops once |dT/dt| was already below the tolerance.
    update = np.where(slope != 0.0, mean_rate / np.where(slope != 0.0, slope, 1.0), 0.0)
    temperature = np.where(converged, temperature, temperature - update)
    converged |= np.abs(mean_rate) < _NEWTON_TOLERANCE
    if converged.all():
      break
  return temperature


def sun_heat_per_area(elevation_deg, flux, pressure):
  """Film solar heating per area, flux·attenuation·0.25·α_tot(0.01435) (W/m², 0 at night)."""
  return flux * solar.attenuation(elevation_deg, pressure) * thermal.SOLAR_HEAT_PER_FLUX_AREA


def stable_state(pressure, ambient_temperature, sun_heat, earth_heat):
  """Equilibrium state at a pressure.

  Args:
    pressure: Pa, any shape.
    ambient_temperature: K, broadcastable with pressure.
    sun_heat: sun_heat_per_area at that place and time.
    earth_heat: thermal.earth_heat_per_area of the upwelling infrared.

  Returns:
    (mols_air, internal_temperature, volume, superpressure), arrays of the broadcast shape.
  """
  density = pressure * (constants.AIR_MOLAR_MASS / constants.GAS_CONSTANT) / ambient_temperature
  mols_air = ballonet_air_for_neutral_buoyancy(density)
  temperature = stable_internal_temperature(ambient_temperature, density, sun_heat, earth_heat)
  volume, superpressure = physics.volume_and_superpressure(
      array_math.NUMPY, constants.HELIUM_MOLS + mols_air, temperature, pressure)
  return mols_air, temperature, volume, superpressure
