"""The altitude control system: venting (UP) and pumping (DOWN) ballonet air (balloon.md §4.5).

Functions take a math namespace `m` (see array_math) so the same code runs on numpy slabs
and on Python floats.
"""

import numpy as np

from agents.env.balloon import constants

_EFFICIENCY_ARRAY = np.asarray(constants.PUMP_EFFICIENCY, np.float64)
_LAST_RATIO_ROW = len(constants.PUMP_EFFICIENCY) - 1
_LAST_POWER_COLUMN = len(constants.PUMP_EFFICIENCY[0]) - 1
_MAX_RATIO = (constants.PUMP_EFFICIENCY_RATIO_START
              + _LAST_RATIO_ROW * constants.PUMP_EFFICIENCY_RATIO_STEP)
_MAX_POWER = (constants.PUMP_EFFICIENCY_POWER_START
              + _LAST_POWER_COLUMN * constants.PUMP_EFFICIENCY_POWER_STEP)
_VENT_FACTOR = constants.VALVE_DISCHARGE_COEFFICIENT * constants.VALVE_AREA
_GAS_DENSITY_FACTOR = constants.AIR_MOLAR_MASS / constants.GAS_CONSTANT


def pressure_ratio(m, pressure, superpressure):
  """(P + max(sp, 0))/P, the back-pressure the pump works against."""
  return (pressure + m.maximum(superpressure, 0.0)) / pressure


def pump_power(m, ratio):
  """The most efficient pump power (W): a linear table in the pressure ratio, flat outside."""
  return m.interp(ratio, constants.PUMP_POWER_PRESSURE_RATIOS, constants.PUMP_POWER_WATTS)


def pump_efficiency(m, ratio, power):
  """Bilinear lookup of the pump efficiency table (§4), clamped at its edges."""
  table = constants.PUMP_EFFICIENCY if m.is_scalar else _EFFICIENCY_ARRAY
  row_position = (m.clip(ratio, constants.PUMP_EFFICIENCY_RATIO_START, _MAX_RATIO)
                  - constants.PUMP_EFFICIENCY_RATIO_START) * (
                      1.0 / constants.PUMP_EFFICIENCY_RATIO_STEP)
  column_position = (m.clip(power, constants.PUMP_EFFICIENCY_POWER_START, _MAX_POWER)
                     - constants.PUMP_EFFICIENCY_POWER_START) * (
                         1.0 / constants.PUMP_EFFICIENCY_POWER_STEP)
  row = m.minimum(m.floor_index(row_position), _LAST_RATIO_ROW - 1)
  column = m.minimum(m.floor_index(column_position), _LAST_POWER_COLUMN - 1)
  row_weight = row_position - row
  column_weight = column_position - column
  low = ((1.0 - column_weight) * m.lookup(table, row, column)
         + column_weight * m.lookup(table, row, column + 1))
  high = ((1.0 - column_weight) * m.lookup(table, row + 1, column)
          + column_weight * m.lookup(table, row + 1, column + 1))
  return (1.0 - row_weight) * low + row_weight * high


def pump_mass_flow(m, ratio):
  """(power W, air mass flow kg/s into the ballonet) when pumping at a pressure ratio."""
  power = pump_power(m, ratio)
  return power, pump_efficiency(m, ratio, power) * power * (1.0 / 3600.0)


# The pump's flow is a function of the pressure ratio alone (its power is), smooth between
# the table's rows. The hot path reads it from a table every 1e-4 in pressure ratio, whose
# knots include every row and every power breakpoint (all on the 0.025 grid), so linear
# interpolation is exact there and within ~1e-6 relative in between; outside
# [1.05, 1.35] power and efficiency are flat, and so is the table's clamped interpolation.
_FLOW_TABLE_STEP = 1e-4
_FLOW_TABLE_RATIOS = np.linspace(constants.PUMP_EFFICIENCY_RATIO_START, _MAX_RATIO,
                                 int(round((_MAX_RATIO - constants.PUMP_EFFICIENCY_RATIO_START)
                                           / _FLOW_TABLE_STEP)) + 1)


def _flow_table():
  from agents.env.balloon.physics import array_math
  return pump_mass_flow(array_math.NUMPY, _FLOW_TABLE_RATIOS)[1]


_FLOW_TABLE = _flow_table()
_FLOW_TABLE_LIST = _FLOW_TABLE.tolist()
_FLOW_TABLE_LAST = len(_FLOW_TABLE_LIST) - 1


def tabulated_pump_mass_flow(m, ratio):
  """`pump_mass_flow` read from the fine table: (power W, air mass flow kg/s)."""
  power = pump_power(m, ratio)
  if not m.is_scalar:
    return power, np.interp(ratio, _FLOW_TABLE_RATIOS, _FLOW_TABLE)
  position = (ratio - constants.PUMP_EFFICIENCY_RATIO_START) * (1.0 / _FLOW_TABLE_STEP)
  if position <= 0.0:
    return power, _FLOW_TABLE_LIST[0]
  if position >= _FLOW_TABLE_LAST:
    return power, _FLOW_TABLE_LIST[-1]
  index = int(position)
  weight = position - index
  return power, (1.0 - weight) * _FLOW_TABLE_LIST[index] + weight * _FLOW_TABLE_LIST[index + 1]


def vent_mass_flow(m, pressure, superpressure, internal_temperature):
  """Air mass flow (kg/s, negative) out of the ballonet through the open valve."""
  positive_superpressure = m.maximum(superpressure, 0.0)
  gas_density = (positive_superpressure + pressure) * _GAS_DENSITY_FACTOR / internal_temperature
  return -_VENT_FACTOR * m.sqrt(2.0 * positive_superpressure * gas_density)
