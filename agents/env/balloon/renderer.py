"""A matplotlib figure of one balloon's flight (rgb_array for videos, human for notebooks).

Three panels: the ground track with the 50 km station circle; pressure over time drawn
over the wind column (at each step and level, how far the true wind points from the
station: 0 towards it, 1 away), so one sees the balloon seeking good layers; and the
battery's state of charge over time.

matplotlib is imported lazily, with the Agg backend for rgb_array, so the simulator
itself never needs it (it comes with the package's `viz` extra).
"""

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.observation import features


class FlightRenderer:
  """Records one balloon of a simulator step by step and draws its flight."""

  def __init__(self, simulator, index=0):
    """Args: simulator: a BalloonSimulator; index: which of its balloons to draw."""
    self._simulator = simulator
    self._index = index
    self._figure = None
    self._panels = None
    self.reset()

  def reset(self):
    """Forgets the recorded flight and records the balloon's current (start) state."""
    self._records = []
    # Rows of `wind_column` already computed: the true wind at a past step never changes,
    # so each frame computes only the steps recorded since the last one.
    self._bearing = np.zeros((0, constants.NUM_LEVELS))
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

  def _recorded_wind_column(self, flight):
    """`wind_column` of the recorded flight, computing only the rows not cached yet."""
    done = len(self._bearing)
    if done < len(flight['x']):
      self._bearing = np.concatenate([self._bearing, self.wind_column(
          {key: values[done:] for key, values in flight.items()})])
    return self._bearing

  def draw(self, figure=None):
    """Draws the flight into a matplotlib figure (a new one unless given) and returns it.

    The panels are laid out once per figure; later draws into the same figure only
    update their data (a video renders a frame every few steps).
    """
    import matplotlib.figure
    if figure is None:
      figure = matplotlib.figure.Figure(figsize=(12, 4), dpi=80)
    if self._panels is None or self._panels['figure'] is not figure:
      self._panels = self._lay_out(figure)
    panels, flight = self._panels, self.flight()
    x_km, y_km, hours = flight['x'] / 1e3, flight['y'] / 1e3, flight['time_s'] / 3600.0
    panels['track'].set_data(x_km, y_km)
    panels['position'].set_data(x_km[-1:], y_km[-1:])
    panels['pressure'].set_data(hours, flight['pressure'])
    panels['battery'].set_data(hours, flight['battery_soc'])
    span = (hours[0], max(hours[-1], hours[0] + 1e-3))
    if len(hours) > 1:
      panels['column'].set_data(self._recorded_wind_column(flight).T)
      panels['column'].set_extent((*span, constants.COLUMN_MIN_PRESSURE,
                                   constants.COLUMN_MAX_PRESSURE))
      panels['column'].set_visible(True)
    for axes in panels['column_axes'], panels['battery_axes']:
      axes.set_xlim(*span)
    track_axes = panels['track_axes']
    track_axes.relim()
    track_axes.autoscale_view()
    return figure

  @staticmethod
  def _lay_out(figure):
    """Builds the three panels in `figure`; returns their axes and the artists to update."""
    figure.clear()
    track, column, battery = figure.subplots(1, 3)
    circle = np.linspace(0.0, 2.0 * np.pi, 100)
    radius = constants.STATION_RADIUS_KM
    track.plot(radius * np.cos(circle), radius * np.sin(circle), 'g--', label='50 km')
    panels = {'figure': figure, 'track_axes': track, 'column_axes': column,
              'battery_axes': battery}
    panels['track'], = track.plot([], [], 'b-', lw=1)
    panels['position'], = track.plot([], [], 'ro')
    track.plot([0.0], [0.0], 'g^')
    track.set_aspect('equal', adjustable='datalim')
    track.set(title='Ground track', xlabel='x (km east)', ylabel='y (km north)')
    panels['column'] = column.imshow(
        np.zeros((constants.NUM_LEVELS, 1)), aspect='auto', origin='lower', cmap='coolwarm',
        vmin=0.0, vmax=1.0, visible=False,
        extent=(0.0, 1.0, constants.COLUMN_MIN_PRESSURE, constants.COLUMN_MAX_PRESSURE))
    panels['pressure'], = column.plot([], [], 'k-', lw=1.5)
    column.set_ylim(constants.COLUMN_MAX_PRESSURE, constants.COLUMN_MIN_PRESSURE)
    column.set(title='Pressure over the wind column\n(blue: wind towards station)',
               xlabel='time (h)', ylabel='pressure (Pa)')
    panels['battery'], = battery.plot([], [], 'm-')
    battery.set_ylim(0.0, 1.05)
    battery.set(title='Battery', xlabel='time (h)', ylabel='state of charge')
    figure.tight_layout()
    return panels

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
      self._panels = None
