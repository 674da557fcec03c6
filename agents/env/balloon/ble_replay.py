"""Replays a trajectory recorded from BLE 1.0.1 through our public API, and compares.

The reference files (tests/env/balloon/testdata/, trimmed from
/work/shared/reference/ble/; its README says how BLE produced them) hold BLE's start
state, the actions, the wind BLE applied in each step, and every `BalloonState` field
after each step. `replay` starts a `BalloonEnv` in the same state (explicit
`InitialState`) and steps it with `step_with_wind`, recording our state in BLE's field
names and units; `agreement` measures the differences quantity by quantity.

    reference = ble_replay.load('traj_seed0_simple_noiseoff_up30_stay30_down40.json.gz')
    ours = ble_replay.replay(reference)
    table = ble_replay.agreement(reference, ours)   # {quantity: {max_abs, max_rel}}

Used by tests/env/balloon/ble_reference_test.py.
"""

import datetime
import gzip
import json
import os

import numpy as np

from agents.env.balloon import constants

TESTDATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), 'tests', 'env', 'balloon', 'testdata')
TRAJECTORIES = ('traj_seed0_simple_noiseoff_up30_stay30_down40.json.gz',
                'traj_seed0_simple_noiseon_up30_stay30_down40.json.gz',
                'traj_seed0_generative_noiseon_up30_stay30_down40.json.gz')
OBSERVATIONS = 'obs_seed0_simple_noiseoff_up30_stay30_down40.json.gz'

_STATUS = {'OK': constants.STATUS_OK, 'OUT_OF_POWER': constants.STATUS_OUT_OF_POWER,
           'BURST': constants.STATUS_BURST, 'ZEROPRESSURE': constants.STATUS_ZEROPRESSURE}
_COMMAND = {'DOWN': constants.DOWN, 'STAY': constants.STAY, 'UP': constants.UP}

# Our read_state() key for each BLE record field compared (same SI units).
FIELDS = {
    'x_m': 'x', 'y_m': 'y', 'pressure': 'pressure', 'superpressure': 'superpressure',
    'envelope_volume': 'volume', 'internal_temperature': 'internal_temperature',
    'ambient_temperature': 'ambient_temperature', 'mols_air': 'mols_air',
    'battery_charge_wh': 'battery_charge', 'battery_soc': 'battery_soc',
    'solar_charging_w': 'solar_power', 'acs_power_w': 'acs_power',
    'power_load_w': 'power_load', 'time_elapsed_s': 'time_elapsed_s',
}
# Fields BLE's record after reset leaves at 0 (no sub-step has run): compared from step 1.
AFTER_RESET = ('solar_charging_w', 'acs_power_w', 'power_load_w')


def load(name, directory=None):
  """Loads a reference file (gzip JSON) by name from `directory` (default TESTDATA_DIR)."""
  path = os.path.join(directory or TESTDATA_DIR, name)
  opener = gzip.open if path.endswith('.gz') else open
  with opener(path, 'rt') as stream:
    return json.load(stream)


def initial_state(reference):
  """The `InitialState` (as a dict) that starts our balloon where BLE's started."""
  episode, start = reference['episode'], reference['records'][0]
  start = start.get('state', start)
  return dict(
      start_time=datetime.datetime.fromisoformat(episode['start_date_time']),
      station_lat_deg=episode['center_lat_deg'], station_lng_deg=episode['center_lng_deg'],
      x=start['x_m'], y=start['y_m'], pressure=start['pressure'],
      atmosphere_alpha=episode['atmosphere_alpha'],
      upwelling_infrared=episode['upwelling_infrared'])


def replay(reference, **env_kwargs):
  """Replays `reference` (a trajectory file) through `BalloonEnv.step_with_wind`.

  Returns:
    dict with 'states' (read_state() dicts, index 0 after reset), 'observations'
    (float32 [steps + 1, 1099]), 'rewards', 'terminated', 'effective_actions',
    'infos' (index k: after step k; index 0 empty).
  """
  from agents.env.balloon import env as env_lib
  env = env_lib.BalloonEnv(wind='static', **env_kwargs)
  observation, _ = env.reset(seed=0, options={'initial_state': initial_state(reference)})
  states, observations = [env.read_state()], [observation]
  rewards, terminated, effective, infos = [None], [False], [None], [{}]
  for record in reference['records'][1:]:
    wind = record['wind_applied']
    observation, reward, done, _, info = env.step_with_wind(
        record['action'], wind['u_mps'], wind['v_mps'])
    states.append(env.read_state())
    observations.append(observation)
    rewards.append(reward)
    terminated.append(done)
    effective.append(info['effective_action'])
    infos.append(info)
    if done:
      break
  env.close()
  return {'states': states, 'observations': np.array(observations), 'rewards': rewards,
          'terminated': terminated, 'effective_actions': effective, 'infos': infos}


def reference_series(reference, field):
  """BLE's values of `field` per record (statuses and commands as our integers)."""
  values = [record.get('state', record)[field] for record in reference['records']]
  if field == 'status':
    return np.array([_STATUS[value] for value in values])
  if field == 'last_command':
    return np.array([_COMMAND[value] for value in values])
  return np.array(values, np.float64)


def agreement(reference, ours):
  """Differences between BLE's records and our replay, per quantity.

  Returns:
    {quantity: {'max_abs': ..., 'max_rel': ...}} over every record (step 0 included, but
    for AFTER_RESET) for the continuous FIELDS, plus exact-match counts for status,
    effective action, last command and reward ('mismatches').
  """
  count = len(ours['states'])
  records = reference['records'][:count]
  table = {}
  for field, key in FIELDS.items():
    first = 1 if field in AFTER_RESET else 0
    theirs = np.array([float(record[field]) for record in records[first:]])
    mine = np.array([float(state[key]) for state in ours['states'][first:]])
    difference = np.abs(mine - theirs)
    scale = np.maximum(np.abs(theirs), 1e-300)
    relevant = np.abs(theirs) > 0
    table[field] = {
        'max_abs': float(difference.max()),
        'max_rel': float((difference[relevant] / scale[relevant]).max()) if relevant.any()
                   else 0.0}
  theirs_status = np.array([_STATUS[record['status']] for record in records])
  mine_status = np.array([state['status'] for state in ours['states']])
  theirs_action = np.array([record['effective_action'] for record in records[1:]])
  mine_action = np.array(ours['effective_actions'][1:])
  theirs_command = np.array([_COMMAND[record['last_command']] for record in records[1:]])
  mine_command = np.array([state['last_command'] for state in ours['states'][1:]])
  theirs_reward = np.array([record['reward'] for record in records[1:]])
  mine_reward = np.array(ours['rewards'][1:])
  table['status'] = {'mismatches': int((theirs_status != mine_status).sum())}
  table['effective_action'] = {'mismatches': int((theirs_action != mine_action).sum())}
  table['last_command'] = {'mismatches': int((theirs_command != mine_command).sum())}
  table['reward'] = {'mismatches': int((theirs_reward != mine_reward).sum()),
                     'max_abs': float(np.abs(theirs_reward - mine_reward).max())}
  table['steps'] = count - 1
  return table
