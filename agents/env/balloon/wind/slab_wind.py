"""The wind fields of a slab of balloons: forecast, forecast error (or none) and the GP.

Three winds (`WINDS`): 'generative', BLE's own (its VAE decoder's forecast plus its
simplex noise, generative.py and simplex_noise.py); 'procedural', ours (§10 forecast
plus the random-Fourier error field); 'static', the §10 static field without error.
"""

import numpy as np

from agents.env.balloon.constants import DEFAULT_WIND, LEGACY_WIND, WINDS
from agents.env.balloon.wind import forecast_error, wind_forecast, wind_gp

__all__ = ['DEFAULT_WIND', 'LEGACY_WIND', 'WINDS', 'SlabWind', 'check_wind']


def check_wind(wind):
  """`wind` if it is one of `WINDS`, else a one-line ValueError naming it."""
  if wind not in WINDS:
    raise ValueError(f"wind must be one of {', '.join(map(repr, WINDS))}, got {wind!r}.")
  return wind


class SlabWind:
  """The wind fields of a slab: forecast, forecast error (or none) and the GP."""

  def __init__(self, num_balloons, wind, gp_predict_dtype=np.float32):
    if check_wind(wind) == 'generative':
      from agents.env.balloon.wind import generative, simplex_noise
      self.forecast = generative.GenerativeForecast(num_balloons)
      self.error = simplex_noise.SimplexNoise(num_balloons)
    elif wind == 'procedural':
      self.forecast = wind_forecast.WindForecast(num_balloons)
      self.error = forecast_error.ForecastError(num_balloons)
    else:
      self.forecast = wind_forecast.StaticWind(num_balloons)
      self.error = None
    self.gp = wind_gp.WindGP(num_balloons, predict_dtype=gp_predict_dtype)

  def sample(self, indices, rngs):
    self.forecast.sample(indices, rngs)
    if self.error is not None:
      self.error.sample(indices, rngs)

  def truth(self, indices, x, y, pressure, t):
    """(u, v) of the true wind (forecast + error) at points [N]."""
    u, v = self.forecast.query(indices, x, y, pressure, t)
    if self.error is not None:
      error_u, error_v = self.error.query(indices, x, y, pressure, t)
      return u + error_u, v + error_v
    return u, v
