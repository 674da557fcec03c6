"""Gymnasium environments that log each finished episode's wall time and return.

Importing this module registers `EpisodeClock/<id>` for the ids of `IDS`: the
environment `<id>` itself, whose episodes, as each ends, append a line
`<time.time()> <return>` to the file named by the environment variable
`EPISODE_CLOCK_LOG` (nothing without it). `bench.time_to_solve` trains ours and
Stable-Baselines3 on these ids, so both are timed by the same clock, in the environment.
"""

import os
import time

import gymnasium

IDS = ('CartPole-v1', 'Pendulum-v1')
LOG_VARIABLE = 'EPISODE_CLOCK_LOG'


class EpisodeClock(gymnasium.Wrapper):
  """Appends `<wall time> <return>` to `$EPISODE_CLOCK_LOG` when an episode ends."""

  def __init__(self, env):
    super().__init__(env)
    self._path = os.environ.get(LOG_VARIABLE)
    self._return = 0.0

  def reset(self, **kwargs):
    self._return = 0.0
    return self.env.reset(**kwargs)

  def step(self, action):
    observ, reward, terminated, truncated, info = self.env.step(action)
    self._return += float(reward)
    if (terminated or truncated) and self._path:
      # One short write in append mode: lines of several processes do not interleave.
      with open(self._path, 'a', encoding='utf-8') as file:
        file.write(f'{time.time():.6f} {self._return:.6f}\n')
    return observ, reward, terminated, truncated, info


def make(base_id, **kwargs):
  """The environment `base_id` (its registered time limit included), clocked."""
  return EpisodeClock(gymnasium.make(base_id, **kwargs))


for _id in IDS:
  if f'EpisodeClock/{_id}' not in gymnasium.registry:
    gymnasium.register(f'EpisodeClock/{_id}', entry_point='bench.episode_clock:make',
                       kwargs={'base_id': _id})
