"""How a balloon policy flies, against the station seeker, on the first seeds of `small_eval`.

    python -m bench.balloon_flight_style [--savedmodel=models/balloon_ppo] [--seeds=16]

Flies both policies deterministically over the same `small_eval` seeds (suite seed s
is episode seed 2**62 + s) for 960 steps and prints JSON per policy:
`action_change_rate` (fraction of steps whose command differs from the step before),
`pressure_std_pa` (the spread of a flight's pressure, averaged over flights: how far
the policy travels through the wind column) and `action_frequencies` (DOWN, STAY, UP).
"""

import argparse
import json
import sys

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.controllers import baselines
from agents.evaluation import suites


def fly(policy, seeds):
  """Flies one balloon per seed; returns the style statistics of the flights."""
  from agents.env.balloon.env import BalloonVectorEnv
  env = BalloonVectorEnv(len(seeds), max_episode_steps=constants.EPISODE_STEPS)
  observations, _ = env.reset(seed=seeds)
  actions, pressures = [], []
  for _ in range(constants.EPISODE_STEPS):
    action = np.asarray(policy(observations))
    observations, _, _, _, info = env.step(action)
    actions.append(action)
    pressures.append(info['pressure'])
  env.close()
  actions, pressures = np.array(actions), np.array(pressures)
  return {'action_change_rate': round(float((actions[1:] != actions[:-1]).mean()), 4),
          'pressure_std_pa': round(float(pressures.std(axis=0).mean()), 1),
          'action_frequencies': np.round(np.bincount(actions.ravel(), minlength=3)
                                         / actions.size, 4).tolist()}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--savedmodel', default='models/balloon_ppo')
  parser.add_argument('--seeds', type=int, default=16)
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  import tensorflow as tf
  model = tf.saved_model.load(args.savedmodel)
  seeds = [suites.episode_seed(seed) for seed in range(args.seeds)]
  seeker = baselines.StationSeekerPolicy(len(seeds))
  seeker.begin_episode(np.arange(len(seeds)))
  policies = {args.savedmodel: lambda observ: model.action(tf.constant(observ, tf.float32)),
              'station_seeker': seeker}
  print(json.dumps({name: fly(policy, seeds) for name, policy in policies.items()}, indent=2))
  return 0


if __name__ == '__main__':
  sys.exit(main())
