"""Per-episode statistics of training: one small interface for console, TensorBoard and JSONL.

BLE's collectors have one equivalent here. A collector sees every batch step's Python
arrays (as `InGraphBatchEnv` receives them from the `BatchEnv`) and keeps running
totals over the episodes that finished:

    class EpisodeCollector:
      info_keys = ('distance_km',)            # step infos it reads (not warned as dropped)
      def reset(self, indices): ...           # episodes begin at these batch rows
      def step(self, reward, terminated, truncated, infos): ...   # arrays [B]
      def totals(self): return {'name': (episodes, sum)}         # only ever grow

`Loop` turns the totals into the mean over each logged interval (the difference of two
snapshots, as for the mean score), so `name` appears next to `mean_score` in every
row: the console's progress bar, TensorBoard (`train/`, `eval/`) and `metrics.jsonl`.
Pass your own with `InGraphBatchEnv(..., collectors=[...])`; a user collector needs no
change to the package.

`BalloonCollector` (the balloon's default) reports `twr50` (steps within 50 km / 960,
BLE's TWR50 over the full episode) and `out_of_power_rate`, `envelope_burst_rate`,
`zeropressure_rate` (the fraction of finished episodes that ended that way).
"""

import numpy as np

from agents.env.balloon import constants


class EpisodeCollector:
  """The interface (see the module docstring); subclasses override what they need."""

  info_keys = ()

  def reset(self, indices):
    """Episodes begin at batch rows `indices` (int array)."""
    del indices

  def step(self, reward, terminated, truncated, infos):
    """One batch step: reward float [B], terminated / truncated bool [B], infos dict."""
    raise NotImplementedError

  def totals(self):
    """{name: (finished episodes, sum of the statistic over them)}; totals only grow."""
    raise NotImplementedError


class BalloonCollector(EpisodeCollector):
  """TWR50 and the failure rates of the balloon's finished episodes."""

  info_keys = ('distance_km', 'out_of_power', 'envelope_burst', 'zeropressure')
  # The balloon's other infos are diagnostics (read them with `read_state` or `visualize`);
  # training drops them on purpose.
  ignored_info_keys = ('time_elapsed_s', 'battery_soc', 'pressure', 'superpressure', 'status',
                       'effective_action', 'acs_power', 'solar_power', 'internal_temperature',
                       'volume', 'mols_air', 'episode_seed')
  FAILURES = ('out_of_power', 'envelope_burst', 'zeropressure')

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


def handled_info_keys(collectors):
  """Info keys the collectors read or drop on purpose (not warned about as dropped)."""
  keys = set()
  for collector in collectors:
    keys.update(getattr(collector, 'info_keys', ()))
    keys.update(getattr(collector, 'ignored_info_keys', ()))
  return keys


def for_environment(environment, batch_size):
  """The default collectors of a config's `environment` section: the balloon's, else none."""
  if environment['id'] == constants.BALLOON_ENV_ID:
    return [BalloonCollector(batch_size, environment.get('max_episode_steps')
                             or constants.EPISODE_STEPS)]
  return []


def means(totals, mark):
  """{name: mean over the episodes since `mark`} (None without episodes)."""
  result = {}
  for name, (count, value) in totals.items():
    before_count, before_value = mark.get(name, (0, 0.0))
    finished = count - before_count
    result[name] = (value - before_value) / finished if finished else None
  return result
