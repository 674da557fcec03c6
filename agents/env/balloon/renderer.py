"""A matplotlib figure of one balloon's flight (rgb_array for videos, human for notebooks).

Three panels: the ground track with the 50 km station circle; pressure over time drawn
over the wind column (at each step and level, how far the true wind points from the
station: 0 towards it, 1 away), so one sees the balloon seeking good layers; and the
battery's state of charge over time.

matplotlib is imported lazily, with the Agg backend for rgb_array, so the simulator
itself never needs it (it comes with the package's `viz` extra).
"""

import numpy as np

from agents.env.balloon import constants, features


class FlightRenderer:
  """Records one balloon of a simulator step by step and draws its flight."""

  def __init__(self, simulator, index=0):
    """Args: simulator: a BalloonSimulator; index: which of its balloons to draw."""
    self._simulator = simulator
    self._index = index
    self._figure = None
    self.reset()

  def reset(self):
    """Forgets the recorded flight and records the balloon's current (start) state."""
    self._records = []
    self.record()

  def record(self):
    """Appends the balloon's current state to the flight."""
    sim, index = self._simulator, self._index
    self._records.append((sim.x[index], sim.y[index], sim.pressure[index],
                          sim.battery_charge[index] / constants.BATTERY_CAPACITY_WH,
                          sim.time_elapsed_s[index]))

  def flight(self):
    """The recorded flight as a dict of arrays: x, y (m), pressure, battery_soc, time_s."""
    values = np.array(self._records, np.float64).reshape(-1, 5)
    return dict(zip(('x', 'y', 'pressure', 'battery_soc', 'time_s'), values.T))

  def wind_column(self, flight):
    """Bearing error (0 towards the station … 1 away) of the true wind, [steps, 181]."""
    count = len(flight['x'])
    indices = np.full(count, self._index)
    levels = np.broadcast_to(features.LEVEL_PRESSURES, (count, constants.NUM_LEVELS))
    wind_u, wind_v = self._simulator.true_wind(indices, flight['x'], flight['y'], levels,
                                               flight['time_s'])
    triples = features.level_triples(flight['x'], flight['y'], wind_u, wind_v,
                                     np.zeros_like(wind_u), np.ones(wind_u.shape, bool))
    return triples[..., 1]

  def draw(self, figure=None):
    """Draws the flight into a matplotlib figure (a new one unless given) and returns it."""
    import matplotlib.figure
    flight = self.flight()
    if figure is None:
      figure = matplotlib.figure.Figure(figsize=(12, 4), dpi=80)
    figure.clear()
    track, column, battery = figure.subplots(1, 3)
    x_km, y_km, hours = flight['x'] / 1e3, flight['y'] / 1e3, flight['time_s'] / 3600.0
    circle = np.linspace(0.0, 2.0 * np.pi, 100)
    radius = constants.STATION_RADIUS_KM
    track.plot(radius * np.cos(circle), radius * np.sin(circle), 'g--', label='50 km')
    track.plot(x_km, y_km, 'b-', lw=1)
    track.plot(x_km[-1:], y_km[-1:], 'ro')
    track.plot([0.0], [0.0], 'g^')
    track.set_aspect('equal', adjustable='datalim')
    track.set(title='Ground track', xlabel='x (km east)', ylabel='y (km north)')
    if len(hours) > 1:
      bearing = self.wind_column(flight)
      column.imshow(bearing.T, aspect='auto', origin='lower', cmap='coolwarm', vmin=0.0,
                    vmax=1.0, extent=(hours[0], hours[-1], constants.COLUMN_MIN_PRESSURE,
                                      constants.COLUMN_MAX_PRESSURE))
    column.plot(hours, flight['pressure'], 'k-', lw=1.5)
    column.set_ylim(constants.COLUMN_MAX_PRESSURE, constants.COLUMN_MIN_PRESSURE)
    column.set(title='Pressure over the wind column\n(blue: wind towards station)',
               xlabel='time (h)', ylabel='pressure (Pa)')
    battery.plot(hours, flight['battery_soc'], 'm-')
    battery.set_ylim(0.0, 1.05)
    battery.set(title='Battery', xlabel='time (h)', ylabel='state of charge')
    figure.tight_layout()
    return figure

  def render(self, mode):
    """'rgb_array': uint8 [H, W, 3]; 'human': shows the figure (inline in notebooks)."""
    if mode == 'rgb_array':
      from matplotlib.backends.backend_agg import FigureCanvasAgg
      figure = self.draw(self._figure)
      self._figure = figure
      canvas = FigureCanvasAgg(figure)
      canvas.draw()
      return np.asarray(canvas.buffer_rgba())[..., :3].copy()
    if mode == 'human':
      import matplotlib.pyplot as plt
      if self._figure is None or not plt.fignum_exists(getattr(self._figure, 'number', -1)):
        self._figure = plt.figure(figsize=(12, 4), dpi=80)
      self.draw(self._figure)
      try:
        from IPython import display
        display.display(self._figure)
      except ImportError:
        plt.pause(0.001)
      return None
    raise ValueError(f"render mode must be 'rgb_array' or 'human', got {mode!r}.")

  def close(self):
    """Closes the figure, if any."""
    if self._figure is not None:
      try:
        import matplotlib.pyplot as plt
        plt.close(self._figure)
      except Exception:  # noqa: BLE001 - closing a non-pyplot figure is harmless
        pass
      self._figure = None
