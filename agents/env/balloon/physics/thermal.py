"""The balloon's thermal balance: one temperature for film and gas (balloon.md §6).

dT/dt = (Q_sun + Q_earth + Q_conv − Q_emit) / (c_film · m_envelope), on a sphere of the
envelope's volume. Functions take a math namespace `m` (see array_math) so the same
equations run on numpy slabs and on Python floats.
"""

import math

from agents.env.balloon import constants

_HEAT_CAPACITY = constants.FILM_SPECIFIC_HEAT * constants.ENVELOPE_MASS  # J/K
# A sphere of volume V has area (36π)^(1/3)·V^(2/3) and diameter³ 6V/π.
SPHERE_AREA_PER_VOLUME_TWO_THIRDS = (36.0 * math.pi) ** (1.0 / 3.0)
SPHERE_DIAMETER_PER_CUBE_ROOT_VOLUME = (6.0 / math.pi) ** (1.0 / 3.0)
_ONE_MINUS_REFLECTIVITY = 1.0 - constants.FILM_REFLECTIVITY


def total_absorptivity(m, absorptivity):
  """α_tot(a) = a·(1 + (1 − a − refl)/(1 − refl)), kept in [0, 1] (film reflectivity 0.0291)."""
  return m.minimum(m.maximum(absorptivity * (2.0 - absorptivity / _ONE_MINUS_REFLECTIVITY),
                             0.0), 1.0)


def infrared_absorptivity(temperature):
  """α_IR(T) = 0.04587 + 0.000232·(T − 210)."""
  return 0.04587 + 0.000232 * (temperature - 210.0)


# Solar absorption per unit of (flux × attenuation × area): Q_sun = this·flux·att·A.
SOLAR_HEAT_PER_FLUX_AREA = 0.25 * (
    constants.FILM_SOLAR_ABSORPTIVITY
    * (2.0 - constants.FILM_SOLAR_ABSORPTIVITY / _ONE_MINUS_REFLECTIVITY))


def earth_heat_per_area(m, upwelling_infrared):
  """Q_earth / A = IR·0.4605·α_tot(α_IR(T_bb)) with T_bb = (IR/σ)^(1/4), W/m²."""
  black_body = (upwelling_infrared / constants.STEFAN_BOLTZMANN) ** 0.25
  return (upwelling_infrared * constants.EARTH_IR_VIEW_FACTOR
          * total_absorptivity(m, infrared_absorptivity(black_body)))


def temperature_rate(m, volume, internal_temperature, ambient_temperature, ambient_density,
                     sun_heat_per_area, earth_heat):
  """dT/dt of the envelope (K/s).

  Args:
    m: math namespace (array_math.NUMPY or array_math.SCALAR).
    volume: envelope volume V, m³.
    internal_temperature: T of gas and film, K.
    ambient_temperature: T_amb, K.
    ambient_density: ρ of the ambient air, kg/m³.
    sun_heat_per_area: flux·attenuation·0.25·α_tot(0.01435) in W/m² (0 at night).
    earth_heat: Q_earth/A from `earth_heat_per_area`, W/m².

  Returns:
    dT/dt in K/s.
  """
  cube_root_volume = m.cbrt(volume)
  area = SPHERE_AREA_PER_VOLUME_TWO_THIRDS * cube_root_volume * cube_root_volume
  diameter = SPHERE_DIAMETER_PER_CUBE_ROOT_VOLUME * cube_root_volume
  temperature_squared = internal_temperature * internal_temperature
  emitted = (constants.STEFAN_BOLTZMANN * temperature_squared * temperature_squared
             * total_absorptivity(m, infrared_absorptivity(internal_temperature)))
  # Free convection around a sphere (§6): Nusselt from the Rayleigh number.
  viscosity = (1.458e-6 * ambient_temperature * m.sqrt(ambient_temperature)
               / (ambient_temperature + 110.4))
  conductivity = 0.0241 * (ambient_temperature * (1.0 / 273.15)) ** 0.9
  prandtl = 0.804 - 3.25e-4 * ambient_temperature
  difference = ambient_temperature - internal_temperature
  # (2r)³ = 6V/π.
  grashof = ((constants.GRAVITY * 6.0 / math.pi) * ambient_density * ambient_density * volume
             * m.abs(difference) / (ambient_temperature * viscosity * viscosity))
  rayleigh = prandtl * grashof
  nusselt = 2.0 + 0.457 * m.sqrt(m.sqrt(rayleigh)) + (1.0 + 2.69e-8 * rayleigh) ** (1.0 / 12.0)
  convection_coefficient = nusselt * conductivity / diameter
  heat_per_area = (sun_heat_per_area + earth_heat + convection_coefficient * difference
                   - emitted)
  return heat_per_area * area * (1.0 / _HEAT_CAPACITY)
