"""Agreement with BLE 1.0.1's own trajectories and observations, quantity by quantity; JSON.

    python -m bench.ble_agreement

Replays the three 100-step reference episodes of tests/env/balloon/testdata/ (BLE's start
state, actions and applied winds) through `BalloonEnv.step_with_wind` and prints, per
episode, the largest absolute and relative difference of every recorded quantity, the
number of mismatches of the exact ones (status, effective action, last command, reward),
and, for the noise-free episode, the largest difference of each observation feature
(ambient features 0-15 one by one; the wind column's uncertainty, bearing and speed over
all levels). docs/fidelity.md reports these numbers; tests/env/balloon/ble_reference_test.py
asserts them with stated tolerances.
"""

import json
import os

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import numpy as np  # noqa: E402

from agents.env.balloon import ble_replay, constants  # noqa: E402


def _observation_agreement(ours):
  reference = ble_replay.load(ble_replay.OBSERVATIONS)
  theirs = np.array([record['observation'] for record in reference['records']])
  difference = np.abs(ours['observations'].astype(np.float64) - theirs)
  table = {f'feature_{index}': float(difference[:, index].max())
           for index in range(constants.NUM_AMBIENT_FEATURES)}
  column = difference[:, constants.NUM_AMBIENT_FEATURES:].reshape(len(difference), -1, 3)
  for position, name in enumerate(('uncertainty', 'bearing', 'speed')):
    table[f'column_{name}'] = float(column[..., position].max())
  return table


def main():
  report = {}
  for name in ble_replay.TRAJECTORIES:
    reference = ble_replay.load(name)
    ours = ble_replay.replay(reference)
    entry = {'trajectory': ble_replay.agreement(reference, ours)}
    if name == ble_replay.TRAJECTORIES[0]:
      entry['observation_max_abs'] = _observation_agreement(ours)
    report[name.split('.')[0]] = entry
  print(json.dumps(report, indent=1))


if __name__ == '__main__':
  main()
