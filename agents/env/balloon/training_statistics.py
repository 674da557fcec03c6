"""The balloon's per-episode training statistics: TWR50 and how episodes failed.

Named by the balloon's plug-in as its `episode_collectors`, so every training row of a
balloon run carries `twr50` (steps within 50 km / 960, BLE's TWR50 over the full
episode) and `out_of_power_rate`, `envelope_burst_rate`, `zeropressure_rate` (the
fraction of finished episodes that ended that way).
"""

import numpy as np

from agents.env.balloon import constants
from agents.tools.episode_collectors import EpisodeCollector


class BalloonCollector(EpisodeCollector):
  """TWR50 and the failure rates of the balloon's finished episodes."""

  info_keys = ('distance_km', 'out_of_power', 'envelope_burst', 'zeropressure')
  # The balloon's other infos are diagnostics (read them with `read_state` or `visualize`);
  # training drops them on purpose.
  ignored_info_keys = ('time_elapsed_s', 'battery_soc', 'pressure', 'superpressure', 'status',
                       'effective_action', 'acs_power', 'solar_power', 'internal_temperature',
                       'volume', 'mols_air', 'episode_seed')
  FAILURES = constants.FAILURES

  def __init__(self, batch_size, episode_length=constants.EPISODE_STEPS):
    self._episode_length = episode_length
    self._within = np.zeros(batch_size, np.int64)
    self._episodes = 0
    self._sums = dict.fromkeys(('twr50',) + tuple(f'{name}_rate' for name in self.FAILURES), 0.0)

  def reset(self, indices):
    self._within[np.asarray(indices, np.intp)] = 0

  def step(self, reward, terminated, truncated, infos):
    del reward
    self._within += np.asarray(infos['distance_km']) <= constants.STATION_RADIUS_KM
    done = np.flatnonzero(np.asarray(terminated) | np.asarray(truncated))
    if not len(done):
      return
    self._episodes += len(done)
    self._sums['twr50'] += float(self._within[done].sum()) / self._episode_length
    for name in self.FAILURES:
      self._sums[f'{name}_rate'] += float(np.asarray(infos[name])[done].sum())

  def totals(self):
    return {name: (self._episodes, value) for name, value in self._sums.items()}


def default_collectors(environment, batch_size):
  """The balloon's collectors for a config's typed `environment` section."""
  return [BalloonCollector(batch_size, environment.max_episode_steps or constants.EPISODE_STEPS)]
