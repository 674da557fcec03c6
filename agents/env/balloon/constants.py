"""Physical and vehicle constants of the balloon model (balloon.md §2 and the sections citing them).

Every number the simulator uses lives here, named, in SI units unless the name says otherwise.
"""

import math

# Time (§1).
AGENT_STEP_S = 180.0
SUBSTEP_S = 10.0
SUBSTEPS_PER_STEP = 18
EPISODE_STEPS = 960

# Physics (§2).
GRAVITY = 9.80665  # m/s²
GAS_CONSTANT = 8.3144621  # J/(mol·K)
AIR_MOLAR_MASS = 0.028964922481160  # kg/mol
HELIUM_MOLAR_MASS = 0.004002602  # kg/mol
STEFAN_BOLTZMANN = 5.6704e-8  # W/(m²·K⁴)
EARTH_RADIUS_M = 6371e3

# Envelope and payload (§2).
ENVELOPE_BASE_VOLUME = 1804.0  # m³
ENVELOPE_VOLUME_PER_PA = 0.0199  # m³/Pa of superpressure
ENVELOPE_MASS = 68.5  # kg
BURST_SUPERPRESSURE = 2380.0  # Pa
DRAG_COEFFICIENT = 0.25
PAYLOAD_MASS = 92.5  # kg
HELIUM_MOLS = 6830.0
HELIUM_MASS = HELIUM_MOLS * HELIUM_MOLAR_MASS
# Everything but the ballonet air: the mass a balloon with an empty ballonet carries (§11).
EMPTY_MASS = ENVELOPE_MASS + PAYLOAD_MASS + HELIUM_MASS

# Power (§2, §4.6).
HOTEL_LOAD_DAY_W = 120.4
HOTEL_LOAD_NIGHT_W = 183.7
BATTERY_CAPACITY_WH = 3058.56
# BLE starts the battery at 2905.6 Wh (its literal; "95 %" of the capacity would be 2905.632).
BATTERY_START_WH = 2905.6

# Altitude control system (§4.5).
VALVE_HOLE_DIAMETER = 0.04  # m
VALVE_DISCHARGE_COEFFICIENT = 0.62
VALVE_AREA = math.pi * VALVE_HOLE_DIAMETER ** 2 / 4.0
PUMP_POWER_PRESSURE_RATIOS = (1.0, 1.05, 1.2, 1.25, 1.35)
PUMP_POWER_WATTS = (100.0, 100.0, 300.0, 400.0, 400.0)
# The effective efficiency table (§4, "as BLE computes it"): rows are pressure ratios
# 1.05 ... 1.35 in steps of 0.025, columns are powers 100, 200, 300, 400 W.
PUMP_EFFICIENCY_RATIO_START = 1.05
PUMP_EFFICIENCY_RATIO_STEP = 0.025
PUMP_EFFICIENCY_POWER_START = 100.0
PUMP_EFFICIENCY_POWER_STEP = 100.0
PUMP_EFFICIENCY = (
    (0.40, 0.40, 0.30, 0.20),
    (0.20, 0.00, 0.00, 0.00),
    (0.00, 0.00, 0.00, 0.00),
    (0.00, 0.40, 0.30, 0.30),
    (0.30, 0.25, 0.23, 0.20),
    (0.15, 0.12, 0.10, 0.00),
    (0.00, 0.00, 0.00, 0.30),
    (0.25, 0.25, 0.25, 0.20),
    (0.20, 0.20, 0.20, 0.15),
    (0.13, 0.12, 0.11, 0.00),
    (0.23, 0.23, 0.23, 0.23),
    (0.23, 0.20, 0.20, 0.20),
    (0.18, 0.16, 0.15, 0.13),
)

# Sun and panels (§5).
SOLAR_CONSTANT = 1366.0  # W/m²
DAYTIME_MIN_ELEVATION_DEG = -4.242  # the horizon dip at float altitude
PANEL_POWER_W = 210.0
PANEL_UPPER_TILT_DEG = 35.0
PANEL_UPPER_COUNT = 4
PANEL_UPPER_DEPTH_M = 3.3
PANEL_LOWER_TILT_DEG = 65.0
PANEL_LOWER_COUNT = 2
PANEL_LOWER_DEPTH_M = 2.7
ENVELOPE_SHADE_RADIUS_M = 8.69275
ENVELOPE_SHADE_HEIGHT_M = 10.41603
SHADED_PANEL_FRACTION = 0.4392

# Thermal model (§6).
FILM_SPECIFIC_HEAT = 1500.0  # J/(kg·K)
FILM_REFLECTIVITY = 0.0291
FILM_SOLAR_ABSORPTIVITY = 0.01435
EARTH_IR_VIEW_FACTOR = 0.4605
STABLE_START_TEMPERATURE = 206.0  # K, first guess of the stable-start Newton search (§7)

# Atmosphere (§3).
LAYER_BASE_HEIGHTS_M = (-610.0, 17000.0, 21000.0, 32000.0, 47000.0, 51000.0, 71000.0, 85000.0)
SURFACE_TEMPERATURE_K = 300.0
SURFACE_PRESSURE_PA = 108870.8213
LAPSE_RATES_LOW = (-0.0070, 0.0060, 0.0010, 0.0028, 0.0, -0.0028, -0.0020)
LAPSE_RATES_HIGH = (-0.0058, 0.0050, 0.0010, 0.0028, 0.0, -0.0028, -0.0020)
FEET = 0.3048  # m

# Safety layers (§8).
POWER_SAFETY_MIN_SOC = 0.025
POWER_SAFETY_RESTART_SOC = 0.05
POWER_SAFETY_SUNRISE_DELAY_S = 1800.0
ENVELOPE_CRITICAL_BUFFER_PA = 150.0
ENVELOPE_BUFFER_PA = 250.0
ENVELOPE_RESTART_HYSTERESIS_PA = 50.0
ALTITUDE_MIN_M = 50000.0 * FEET
ALTITUDE_BUFFER_M = 500.0 * FEET
ALTITUDE_RESTART_HYSTERESIS_M = 500.0 * FEET

# Observation (§11).
NUM_AMBIENT_FEATURES = 16
NUM_LEVELS = 181
NUM_COLUMN_LEVELS = 2 * NUM_LEVELS - 1
OBSERVATION_SIZE = NUM_AMBIENT_FEATURES + 3 * NUM_COLUMN_LEVELS
COLUMN_MIN_PRESSURE = 5000.0
COLUMN_MAX_PRESSURE = 14000.0
COLUMN_PRESSURE_STEP = 50.0
BALLOON_COLUMN_INDEX = NUM_LEVELS - 1
GP_PRIOR_VARIANCE = 3.6 ** 2
BEARING_TOLERANCE = 1e-5
WIND_SPEED_SQUASH = 30.0  # m/s
DISTANCE_SQUASH_KM = 250.0
DESCENT_COST_MIN_W = 100.0
DESCENT_COST_MAX_W = 300.0

# Reward (§12).
STATION_RADIUS_KM = 50.0
REWARD_DROPOFF = 0.4
REWARD_HALFLIFE_KM = 100.0
DESCENT_PENALTY_MAX_MULTIPLIER = 0.95
DESCENT_PENALTY_SKEW = 0.3

# Episode start (§9).
START_TIME_MIN = '2011-01-01T00:00:00'
START_TIME_MAX = '2015-01-01T00:00:00'  # exclusive: uniform over 2011-01-01 … 2014-12-31
STATION_MAX_ABS_LATITUDE_DEG = 10.0
STATION_MAX_ABS_LONGITUDE_DEG = 175.0
START_RADIUS_M = 200e3
START_RADIUS_BETA = (1.2, 2.0)
START_MIN_PRESSURE = 6500.0
UPWELLING_INFRARED = 315.0  # W/m²

# Seeds and registration: the one place for these (other packages import them from here).
MAX_SEED = 2 ** 63  # episode seeds are integers in [0, MAX_SEED)
BALLOON_ENV_ID = 'BalloonLearningEnvironment-v0'  # the Gymnasium id (agents/env/registration.py)

# Actions (§13) and balloon status.
DOWN, STAY, UP = 0, 1, 2
STATUS_OK, STATUS_OUT_OF_POWER, STATUS_BURST, STATUS_ZEROPRESSURE = 0, 1, 2, 3

# The winds (wind/slab_wind.py): 'generative', BLE's own (its VAE decoder's forecast plus
# its simplex noise; the default, as in BLE); 'procedural', this project's generated field;
# 'static', the §10 static field. A config, run or policy record saved before the wind was
# named flew in LEGACY_WIND.
WINDS = ('generative', 'procedural', 'static')
WIND_MODES = WINDS  # the simulator's `wind=`, which suites and BLE's names accept
DEFAULT_WIND = 'generative'
LEGACY_WIND = 'procedural'

# What evaluation records per seed: the failure flags, and the flight path's per-step keys.
FAILURES = ('out_of_power', 'envelope_burst', 'zeropressure')
FLIGHT_PATH_KEYS = ('x', 'y', 'pressure', 'superpressure', 'elapsed_time', 'battery_soc')
