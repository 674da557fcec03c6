"""The layered standard atmosphere of one episode, for a slab of balloons (balloon.md §3).

Each balloon has its own atmosphere: seven layers between fixed boundary heights whose
linear temperature lapse rates are drawn per episode as (1 − α)·LOW + α·HIGH. Inside a
layer the barometric relations hold (a power law for a non-zero lapse rate, an
exponential for an isothermal layer), so the model answers height → (T, P, ρ) and
pressure → (height, T, ρ) in closed form, for whole arrays of balloons at once.

All queries take arrays whose leading axis is the balloon (shape [B] or [B, L]).
"""

import numpy as np

from agents.env.balloon import constants

_NUM_LAYERS = len(constants.LAPSE_RATES_LOW)
_MOLAR_GRAVITY = constants.GRAVITY * constants.AIR_MOLAR_MASS  # g·M, J/(mol·m)


def air_density(pressure, temperature):
  """Returns the density of dry air, ρ = P·M_air/(R·T), in kg/m³."""
  return pressure * (constants.AIR_MOLAR_MASS / constants.GAS_CONSTANT) / temperature


class Atmosphere:
  """Per-balloon layered atmospheres, held as [B, layer] tables.

  Attributes:
    alphas: float64 [B], the interpolation weight α of each balloon's lapse rates.
    lapse_rates: float64 [B, 7], K/m.
    base_heights: float64 [8], layer boundary heights (m), shared by all balloons.
    base_temperatures: float64 [B, 8], temperature at each boundary.
    base_pressures: float64 [B, 8], pressure at each boundary.
  """

  def __init__(self, alphas):
    """Builds the atmospheres.

    Args:
      alphas: Sequence of B values in [0, 1], one per balloon.
    """
    alphas = np.asarray(alphas, np.float64).reshape(-1)
    self.base_heights = np.asarray(constants.LAYER_BASE_HEIGHTS_M, np.float64)
    num_balloons = len(alphas)
    self.alphas = np.zeros(num_balloons)
    self.lapse_rates = np.zeros((num_balloons, _NUM_LAYERS))
    self.base_temperatures = np.zeros((num_balloons, _NUM_LAYERS + 1))
    self.base_pressures = np.zeros((num_balloons, _NUM_LAYERS + 1))
    # T = Tb·(P/Pb)^exponent inside a layer; 0 for the isothermal layer.
    self._temperature_exponents = np.zeros((num_balloons, _NUM_LAYERS))
    self.set_alphas(np.arange(num_balloons), alphas)

  @property
  def num_balloons(self):
    """Number of balloons B."""
    return len(self.alphas)

  def set_alphas(self, indices, alphas):
    """Redraws the atmospheres of balloons `indices` for new α values (an episode reset)."""
    indices = np.asarray(indices, np.int64).reshape(-1)
    alphas = np.asarray(alphas, np.float64).reshape(-1)
    if np.any(~np.isfinite(alphas)) or np.any((alphas < 0) | (alphas > 1)):
      raise ValueError(f'Atmosphere alpha must lie in [0, 1], got {alphas.tolist()}.')
    low = np.asarray(constants.LAPSE_RATES_LOW)
    high = np.asarray(constants.LAPSE_RATES_HIGH)
    lapse = (1.0 - alphas)[:, None] * low + alphas[:, None] * high
    temperatures = np.empty((len(indices), _NUM_LAYERS + 1))
    pressures = np.empty((len(indices), _NUM_LAYERS + 1))
    temperatures[:, 0] = constants.SURFACE_TEMPERATURE_K
    pressures[:, 0] = constants.SURFACE_PRESSURE_PA
    for layer in range(_NUM_LAYERS):  # 7 layers, vectorised over balloons
      thickness = self.base_heights[layer + 1] - self.base_heights[layer]
      top, top_pressure = _layer_top(
          temperatures[:, layer], pressures[:, layer], lapse[:, layer], thickness)
      temperatures[:, layer + 1] = top
      pressures[:, layer + 1] = top_pressure
    self.alphas[indices] = alphas
    self.lapse_rates[indices] = lapse
    self.base_temperatures[indices] = temperatures
    self.base_pressures[indices] = pressures
    self._temperature_exponents[indices] = (
        -constants.GAS_CONSTANT * lapse / _MOLAR_GRAVITY)
    self._flat_cache = None

  def _flat_tables(self):
    """Returns the flattened per-layer tables the fast [B] lookups gather from."""
    if self._flat_cache is None:
      self._flat_cache = (
          np.ascontiguousarray(self.base_pressures[:, 1:_NUM_LAYERS].T).T,
          self.base_temperatures[:, :_NUM_LAYERS].ravel().copy(),
          self.base_pressures[:, :_NUM_LAYERS].ravel().copy(),
          self._temperature_exponents.ravel().copy(),
          np.arange(self.num_balloons) * _NUM_LAYERS)
    return self._flat_cache

  def temperature_at_pressure(self, pressure):
    """Returns the ambient temperature (K) at pressures [B]: the physics hot path."""
    inner_pressures, temperatures, pressures, exponents, offsets = self._flat_tables()
    # Balloons fly in the two lowest layers (below 21 km); one comparison then finds the
    # layer, with the general count as the fallback.
    if (pressure >= inner_pressures[:, 1]).all():
      layer = offsets + (pressure < inner_pressures[:, 0])
    else:
      layer = offsets + (pressure[:, None] < inner_pressures).sum(axis=1)
    return temperatures.take(layer) * (pressure / pressures.take(layer)) ** exponents.take(layer)

  def scalar_temperature_function(self, index):
    """Returns T(P) for balloon `index` on Python floats (the one-balloon fast path)."""
    inner = [float(p) for p in self.base_pressures[index, 1:_NUM_LAYERS]]
    temperatures = [float(t) for t in self.base_temperatures[index, :_NUM_LAYERS]]
    pressures = [float(p) for p in self.base_pressures[index, :_NUM_LAYERS]]
    exponents = [float(e) for e in self._temperature_exponents[index]]

    def temperature(pressure):
      layer = 0
      for boundary in inner:
        if pressure < boundary:
          layer += 1
        else:
          break
      return temperatures[layer] * (pressure / pressures[layer]) ** exponents[layer]

    return temperature

  def _gather(self, table, layer):
    rows = np.arange(self.num_balloons).reshape((-1,) + (1,) * (layer.ndim - 1))
    return table[rows, layer]

  def at_pressure(self, pressure):
    """Returns (height m, temperature K, density kg/m³) at pressures [B, ...]."""
    pressure = np.asarray(pressure, np.float64)
    boundaries = self.base_pressures[:, 1:_NUM_LAYERS]
    boundaries = boundaries.reshape(boundaries.shape[:1] + (1,) * (pressure.ndim - 1) + (-1,))
    layer = (pressure[..., None] < boundaries).sum(axis=-1)
    base_temperature = self._gather(self.base_temperatures, layer)
    base_pressure = self._gather(self.base_pressures, layer)
    base_height = self.base_heights[layer]
    lapse = self._gather(self.lapse_rates, layer)
    exponent = self._gather(self._temperature_exponents, layer)
    ratio = pressure / base_pressure
    temperature = base_temperature * ratio ** exponent
    isothermal = lapse == 0.0
    safe_lapse = np.where(isothermal, 1.0, lapse)
    height = np.where(
        isothermal,
        base_height - constants.GAS_CONSTANT * base_temperature / _MOLAR_GRAVITY * np.log(ratio),
        base_height + (temperature - base_temperature) / safe_lapse)
    return height, temperature, air_density(pressure, temperature)

  def at_height(self, height):
    """Returns (temperature K, pressure Pa, density kg/m³) at heights [B, ...]."""
    height = np.asarray(height, np.float64)
    layer = np.clip(np.searchsorted(self.base_heights, height, side='right') - 1,
                    0, _NUM_LAYERS - 1)
    layer = np.broadcast_to(layer, np.broadcast_shapes(layer.shape, (self.num_balloons,)
                                                       + (1,) * (height.ndim - 1)))
    base_temperature = self._gather(self.base_temperatures, layer)
    base_pressure = self._gather(self.base_pressures, layer)
    lapse = self._gather(self.lapse_rates, layer)
    temperature, pressure = _layer_top(
        base_temperature, base_pressure, lapse, height - self.base_heights[layer])
    return temperature, pressure, air_density(pressure, temperature)

  def pressure_at_height(self, height):
    """Returns the pressure (Pa) at heights [B, ...]."""
    return self.at_height(height)[1]

  def height_at_pressure(self, pressure):
    """Returns the height (m) at pressures [B, ...]."""
    return self.at_pressure(pressure)[0]


def _layer_top(base_temperature, base_pressure, lapse, thickness):
  """Temperature and pressure `thickness` metres above a layer base (barometric formula)."""
  isothermal = lapse == 0.0
  safe_lapse = np.where(isothermal, 1.0, lapse)
  temperature = base_temperature + lapse * thickness
  with np.errstate(invalid='ignore', divide='ignore'):
    power = base_pressure * (temperature / base_temperature) ** (
        -_MOLAR_GRAVITY / (constants.GAS_CONSTANT * safe_lapse))
  exponential = base_pressure * np.exp(
      -_MOLAR_GRAVITY * thickness / (constants.GAS_CONSTANT * base_temperature))
  return temperature, np.where(isothermal, exponential, power)
