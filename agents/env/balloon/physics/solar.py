"""Sun position, sunrise and sunset, and solar power, vectorised (balloon.md §5).

The sun's position follows the NOAA solar calculator (declination, equation of time,
hour angle from UTC, atmospheric refraction), as BLE does. Time is given as Unix
seconds (float64, UTC); latitude and longitude in degrees. Every function takes numpy
arrays of any (broadcastable) shape.

Sunrise and sunset are where the refracted elevation crosses −4.242°, the horizon dip
at float altitude. BLE finds them by a 3-minute search per balloon; here they come in
closed form from the hour angle at which the sun reaches that elevation, with the
declination and equation of time of the current moment (they drift by well under a
minute a day, finer than BLE's search resolution).
"""

import math

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.physics import array_math

_SECONDS_PER_DAY = 86400.0
_UNIX_EPOCH_JULIAN_DAY = 2440587.5
_J2000_JULIAN_DAY = 2451545.0


def _refraction_deg(elevation_deg):
  """NOAA's atmospheric refraction correction (degrees) for a geometric elevation."""
  elevation_deg = np.asarray(elevation_deg, np.float64)
  with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
    tangent = np.tan(np.radians(elevation_deg))
    # 58.1/tan - 0.07/tan^3 + 0.000086/tan^5 in Horner form: numpy's float64 power took
    # about a microsecond per element here (tangents near 0 and near infinity).
    inverse = 1.0 / tangent
    inverse_squared = inverse * inverse
    high = inverse * (58.1 + inverse_squared * (-0.07 + inverse_squared * 0.000086))
    near_horizon = 1735.0 + elevation_deg * (
        -518.2 + elevation_deg * (103.4 + elevation_deg * (-12.79 + elevation_deg * 0.711)))
    below = -20.772 / tangent
  arcseconds = np.where(
      elevation_deg > 85.0, 0.0,
      np.where(elevation_deg > 5.0, high,
               np.where(elevation_deg > -0.575, near_horizon, below)))
  return arcseconds / 3600.0


def _daytime_geometric_threshold_deg():
  """The geometric elevation whose refracted value is the −4.242° daytime threshold."""
  geometric = constants.DAYTIME_MIN_ELEVATION_DEG
  for _ in range(8):  # fixed point; the refraction changes by ~1e-4° per iteration
    geometric = constants.DAYTIME_MIN_ELEVATION_DEG - float(_refraction_deg(geometric))
  return geometric


_DAYTIME_GEOMETRIC_SIN = math.sin(math.radians(_daytime_geometric_threshold_deg()))


def sun_terms(unix_time_s, m=array_math.NUMPY):
  """Time-only terms of the NOAA calculator.

  Args:
    unix_time_s: UTC time as Unix seconds, any shape.

  Returns:
    (declination rad, equation of time in minutes, top-of-atmosphere flux W/m²).
  """
  if not m.is_scalar:
    unix_time_s = np.asarray(unix_time_s, np.float64)
  julian_day = unix_time_s / _SECONDS_PER_DAY + _UNIX_EPOCH_JULIAN_DAY
  century = (julian_day - _J2000_JULIAN_DAY) / 36525.0
  mean_longitude = m.radians(280.46646 + century * (36000.76983 + century * 0.0003032))
  mean_anomaly = m.radians(357.52911 + century * (35999.05029 - 0.0001537 * century))
  eccentricity = 0.016708634 - century * (0.000042037 + 0.0000001267 * century)
  node = m.radians(125.04 - 1934.136 * century)
  mean_obliquity = m.radians(23.0 + (26.0 + (21.448 - century * (
      46.815 + century * (0.00059 - century * 0.001813))) / 60.0) / 60.0)
  obliquity = mean_obliquity + m.radians(0.00256 * m.cos(node))
  var_y = m.tan(obliquity / 2.0) ** 2
  sin_anomaly = m.sin(mean_anomaly)
  equation_of_time = 4.0 * m.degrees(
      var_y * m.sin(2.0 * mean_longitude) - 2.0 * eccentricity * sin_anomaly
      + 4.0 * eccentricity * var_y * sin_anomaly * m.cos(2.0 * mean_longitude)
      - 0.5 * var_y * var_y * m.sin(4.0 * mean_longitude)
      - 1.25 * eccentricity * eccentricity * m.sin(2.0 * mean_anomaly))
  center = m.radians(
      sin_anomaly * (1.914602 - century * (0.004817 + 0.000014 * century))
      + m.sin(2.0 * mean_anomaly) * (0.019993 - 0.000101 * century)
      + m.sin(3.0 * mean_anomaly) * 0.000289)
  apparent_longitude = mean_longitude + center - m.radians(0.00569 - 0.00478 * m.sin(node))
  declination = m.arcsin(m.sin(obliquity) * m.sin(apparent_longitude))
  flux = constants.SOLAR_CONSTANT * (1.0 + 0.5 * (
      ((1.0 + eccentricity) / (1.0 - eccentricity)) ** 2 - 1.0) * m.cos(mean_anomaly))
  return declination, equation_of_time, flux


def hour_angle_deg(unix_time_s, longitude_deg, equation_of_time_min, m=array_math.NUMPY):
  """The solar hour angle in degrees, in [−180, 180), 0 at solar noon."""
  minutes_of_day = m.mod(unix_time_s, _SECONDS_PER_DAY) / 60.0
  true_solar_minutes = minutes_of_day + equation_of_time_min + 4.0 * longitude_deg
  return m.mod(true_solar_minutes / 4.0, 360.0) - 180.0


def _zenith_terms(unix_time_s, latitude_deg, longitude_deg):
  """Returns (cos zenith, declination, hour angle, latitude) in radians, and the flux."""
  declination, equation_of_time, flux = sun_terms(unix_time_s)
  hour_angle = np.radians(hour_angle_deg(unix_time_s, longitude_deg, equation_of_time))
  latitude = np.radians(latitude_deg)
  cos_zenith = np.clip(np.sin(latitude) * np.sin(declination)
                       + np.cos(latitude) * np.cos(declination) * np.cos(hour_angle), -1.0, 1.0)
  return cos_zenith, declination, hour_angle, latitude, flux


def solar_position(unix_time_s, latitude_deg, longitude_deg):
  """Returns (elevation deg with refraction, azimuth deg from north, flux W/m²)."""
  cos_zenith, declination, hour_angle, latitude, flux = _zenith_terms(
      unix_time_s, latitude_deg, longitude_deg)
  zenith = np.arccos(cos_zenith)
  geometric = 90.0 - np.degrees(zenith)
  elevation = geometric + _refraction_deg(geometric)
  with np.errstate(divide='ignore', invalid='ignore'):
    cos_azimuth = ((np.sin(latitude) * cos_zenith - np.sin(declination))
                   / (np.cos(latitude) * np.sin(zenith)))
  azimuth = np.degrees(np.arccos(np.clip(np.nan_to_num(cos_azimuth), -1.0, 1.0)))
  azimuth = np.where(hour_angle > 0, azimuth + 180.0, 180.0 - azimuth)
  return elevation, azimuth, flux


def solar_elevation_deg(unix_time_s, latitude_deg, longitude_deg):
  """Returns the refracted solar elevation in degrees (the hot-path subset of solar_position)."""
  cos_zenith, _, _, _, flux = _zenith_terms(unix_time_s, latitude_deg, longitude_deg)
  geometric = np.degrees(np.arcsin(cos_zenith))
  return geometric + _refraction_deg(geometric), flux


def elevation_from_hour_angle(sin_product, cos_product, hour_angle):
  """Refracted elevation (deg) from sin φ·sin δ, cos φ·cos δ and the hour angle (deg)."""
  cos_zenith = sin_product + cos_product * np.cos(np.radians(hour_angle))
  geometric = np.degrees(np.arcsin(np.minimum(np.maximum(cos_zenith, -1.0), 1.0)))
  return geometric + _refraction_deg(geometric)


def scalar_elevation_from_hour_angle(sin_product, cos_product, hour_angle):
  """`elevation_from_hour_angle` on Python floats (the one-balloon path)."""
  cos_zenith = sin_product + cos_product * math.cos(math.radians(hour_angle))
  geometric = math.degrees(math.asin(min(max(cos_zenith, -1.0), 1.0)))
  return geometric + _scalar_refraction_deg(geometric)


def _scalar_refraction_deg(elevation_deg):
  """`_refraction_deg` on a Python float, branch by branch as NOAA writes it."""
  if elevation_deg > 85.0:
    return 0.0
  if elevation_deg > 5.0:
    tangent = math.tan(math.radians(elevation_deg))
    return (58.1 / tangent - 0.07 / tangent ** 3 + 0.000086 / tangent ** 5) / 3600.0
  if elevation_deg > -0.575:
    return (1735.0 + elevation_deg * (-518.2 + elevation_deg * (
        103.4 + elevation_deg * (-12.79 + elevation_deg * 0.711)))) / 3600.0
  return -20.772 / math.tan(math.radians(elevation_deg)) / 3600.0


def sun_cycle(unix_time_s, latitude_deg, longitude_deg):
  """Where each balloon is in its day-night cycle, in closed form.

  Args:
    unix_time_s: UTC time as Unix seconds.
    latitude_deg, longitude_deg: Position of each balloon.

  Returns:
    A tuple (is_day, phase, seconds_to_sunset, seconds_to_sunrise): is_day is whether the
    sun is above −4.242°; phase is π·(t − sunrise)/(sunset − sunrise) by day and
    π + π·(t − sunset)/(next sunrise − sunset) at night (§11, features 3–4); the times
    are to the next sunset and the next sunrise.
  """
  return sun_state(unix_time_s, latitude_deg, longitude_deg)[2:]


def sun_state(unix_time_s, latitude_deg, longitude_deg, terms=None):
  """`solar_elevation_deg` and `sun_cycle` together, sharing their terms.

  Args:
    unix_time_s, latitude_deg, longitude_deg: as for `sun_cycle`.
    terms: optional precomputed `sun_terms(unix_time_s)`.

  Returns:
    (elevation deg, flux W/m², is_day, phase, seconds_to_sunset, seconds_to_sunrise).
  """
  declination, equation_of_time, flux = sun_terms(unix_time_s) if terms is None else terms
  hour_angle = hour_angle_deg(unix_time_s, longitude_deg, equation_of_time)
  latitude = np.radians(latitude_deg)
  sin_product = np.sin(latitude) * np.sin(declination)
  cos_product = np.cos(latitude) * np.cos(declination)
  elevation = elevation_from_hour_angle(sin_product, cos_product, hour_angle)
  # The hour angle of sunset; sunrise is at its negative. Clipped for polar day/night,
  # which the ±10° stations never see.
  cos_half_day = (_DAYTIME_GEOMETRIC_SIN - sin_product) / cos_product
  half_day = np.degrees(np.arccos(array_math.clip(cos_half_day, -1.0, 1.0)))
  is_day = np.abs(hour_angle) < half_day
  since_sunrise = np.mod(hour_angle + half_day, 360.0)
  since_sunset = np.mod(hour_angle - half_day, 360.0)
  phase = np.where(is_day, np.pi * since_sunrise / np.maximum(2.0 * half_day, 1e-9),
                   np.pi + np.pi * since_sunset / np.maximum(360.0 - 2.0 * half_day, 1e-9))
  seconds_per_degree = 240.0  # the hour angle turns 15° an hour
  seconds_to_sunset = np.mod(half_day - hour_angle, 360.0) * seconds_per_degree
  seconds_to_sunrise = np.mod(-half_day - hour_angle, 360.0) * seconds_per_degree
  return elevation, flux, is_day, phase, seconds_to_sunset, seconds_to_sunrise


def scalar_sun_state(unix_time_s, latitude_deg, longitude_deg, terms=None):
  """`sun_state` on Python floats for one balloon (the one-balloon path)."""
  m = array_math.SCALAR
  declination, equation_of_time, flux = sun_terms(unix_time_s, m) if terms is None else terms
  hour_angle = hour_angle_deg(unix_time_s, longitude_deg, equation_of_time, m)
  latitude = math.radians(latitude_deg)
  sin_product = math.sin(latitude) * math.sin(declination)
  cos_product = math.cos(latitude) * math.cos(declination)
  elevation = scalar_elevation_from_hour_angle(sin_product, cos_product, hour_angle)
  cos_half_day = (_DAYTIME_GEOMETRIC_SIN - sin_product) / cos_product
  half_day = math.degrees(math.acos(min(max(cos_half_day, -1.0), 1.0)))
  is_day = abs(hour_angle) < half_day
  if is_day:
    phase = math.pi * ((hour_angle + half_day) % 360.0) / max(2.0 * half_day, 1e-9)
  else:
    phase = math.pi + math.pi * ((hour_angle - half_day) % 360.0) / max(
        360.0 - 2.0 * half_day, 1e-9)
  seconds_to_sunset = ((half_day - hour_angle) % 360.0) * 240.0
  seconds_to_sunrise = ((-half_day - hour_angle) % 360.0) * 240.0
  return elevation, flux, is_day, phase, seconds_to_sunset, seconds_to_sunrise


def _shade_threshold_deg(depth_m):
  """Elevation at or above which the envelope shades a panel hanging `depth_m` below it."""
  return math.degrees(math.atan2(
      math.sqrt(depth_m * (constants.ENVELOPE_SHADE_HEIGHT_M + depth_m)),
      constants.ENVELOPE_SHADE_RADIUS_M))


UPPER_SHADE_DEG = _shade_threshold_deg(constants.PANEL_UPPER_DEPTH_M)
LOWER_SHADE_DEG = _shade_threshold_deg(constants.PANEL_LOWER_DEPTH_M)


def airmass_per_pascal(elevation_deg, m=array_math.NUMPY):
  """The airmass divided by the balloon's pressure: airmass = this·P (§5)."""
  sin_term = 614.0 * m.sin(m.radians(elevation_deg))
  return 0.34764 / 101325.0 * (m.sqrt(1229.0 + sin_term * sin_term) - sin_term)


def attenuation_from_airmass(airmass):
  """Atmospheric attenuation ½·(e^(−0.65·airmass) + e^(−0.95·airmass))."""
  return 0.5 * (np.exp(-0.65 * airmass) + np.exp(-0.95 * airmass))


def attenuation(elevation_deg, pressure):
  """Atmospheric attenuation of sunlight at a pressure altitude; 0 below −4.242°."""
  elevation_deg = np.asarray(elevation_deg, np.float64)
  value = attenuation_from_airmass(airmass_per_pascal(elevation_deg) * pressure)
  return np.where(elevation_deg < constants.DAYTIME_MIN_ELEVATION_DEG, 0.0, value)


def unattenuated_panel_power(elevation_deg, m=array_math.NUMPY):
  """Panel power in W at full sun (before attenuation), shading included (§5)."""
  if not m.is_scalar:
    elevation_deg = np.asarray(elevation_deg, np.float64)
  upper_shade = m.where(elevation_deg >= UPPER_SHADE_DEG, constants.SHADED_PANEL_FRACTION, 1.0)
  lower_shade = m.where(elevation_deg >= LOWER_SHADE_DEG, constants.SHADED_PANEL_FRACTION, 1.0)
  upper = m.cos(m.radians(elevation_deg - constants.PANEL_UPPER_TILT_DEG))
  lower = m.cos(m.radians(elevation_deg - constants.PANEL_LOWER_TILT_DEG))
  return constants.PANEL_POWER_W * (constants.PANEL_UPPER_COUNT * upper * upper_shade
                                    + constants.PANEL_LOWER_COUNT * lower * lower_shade)


def solar_power(elevation_deg, pressure):
  """Solar power (W) the panels deliver at a solar elevation and pressure altitude."""
  return attenuation(elevation_deg, pressure) * unattenuated_panel_power(elevation_deg)


def latlng_from_offset(station_lat_deg, station_lng_deg, x_m, y_m, m=array_math.NUMPY):
  """Latitude and longitude (degrees) of a point x metres east, y metres north of a station."""
  station_lat = m.radians(station_lat_deg)
  angular_distance = m.hypot(x_m, y_m) / constants.EARTH_RADIUS_M
  heading = m.arctan2(x_m, y_m)
  sin_lat = (m.sin(station_lat) * m.cos(angular_distance)
             + m.cos(station_lat) * m.sin(angular_distance) * m.cos(heading))
  latitude = m.arcsin(m.minimum(m.maximum(sin_lat, -1.0), 1.0))
  delta_lng = m.arctan2(m.sin(heading) * m.sin(angular_distance) * m.cos(station_lat),
                        m.cos(angular_distance) - m.sin(station_lat) * sin_lat)
  longitude = m.mod(station_lng_deg + m.degrees(delta_lng) + 180.0, 360.0) - 180.0
  return m.degrees(latitude), longitude
