"""The wind fields of a slab of balloons: forecast, forecast error (or none) and the GP."""

import numpy as np

from agents.env.balloon.wind import forecast_error, wind_forecast, wind_gp


class SlabWind:
  """The wind fields of a slab: forecast, forecast error (or none) and the GP."""

  def __init__(self, num_balloons, wind, gp_predict_dtype=np.float32):
    if wind == 'procedural':
      self.forecast = wind_forecast.WindForecast(num_balloons)
      self.error = forecast_error.ForecastError(num_balloons)
    elif wind == 'static':
      self.forecast = wind_forecast.StaticWind(num_balloons)
      self.error = None
    else:
      raise ValueError(f"wind must be 'procedural' or 'static', got {wind!r}.")
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
