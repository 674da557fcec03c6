"""Each finished episode's statistics, row by row, from the environment's own collectors.

Training with in-graph algorithms reports the environment's per-episode statistics as
means over the episodes of a logged interval: the `EpisodeCollector`s that an
environment's plug-in gives (`agents.plugins.EnvironmentPlugin.episode_collectors`; the
balloon's: TWR50 and the failure flags, `agents.env.balloon.training_statistics`).
`run_training_loop` reports every episode on its own, so `CollectorStatistics` steps the
same collectors and reads each episode's values from the growth of their totals: nothing
is computed twice, and an environment's new statistic reaches both paths.

When several rows end at the same step, the totals grow by their sum; each row's share
is then measured on a copy of the collectors taken before the step, stepped with only
that row ending (a copy per ended row, at most once per episode).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents import plugins
from agents.configs import sections


class CollectorStatistics:
  """The environment's per-episode statistics for a batch of `batch_size` rows.

  Args:
    env_id: the Gymnasium id (None: no statistics).
    batch_size: the number of rows B.
    episode_length: the episode length the statistics are relative to (the balloon's
      TWR50 divides by it).
  """

  def __init__(self, env_id: str | None, batch_size: int, episode_length: int) -> None:
    plugin = plugins.environment_plugin(env_id)
    self._collectors = [] if env_id is None else list(plugin.episode_collectors(
        sections.EnvironmentConfig(id=env_id, max_episode_steps=episode_length), batch_size))

  @property
  def names(self) -> list[str]:
    """The statistics' names, in the collectors' order."""
    return [name for collector in self._collectors for name in collector.totals()]

  def reset(self, rows: np.ndarray) -> None:
    """Episodes begin at `rows` (int array)."""
    for collector in self._collectors:
      collector.reset(rows)

  def step(self, reward: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
           infos: Mapping[str, Any], ended: Sequence[int] | np.ndarray
           ) -> dict[int, dict[str, float]]:
    """One batch step; returns {row: {name: value}} for the rows in `ended`.

    Args:
      reward: float [B].
      terminated: bool [B], False for rows not in flight.
      truncated: bool [B], False for rows not in flight.
      infos: the step's infos in Gymnasium's vector format.
      ended: int array of the rows whose episode ended at this step.
    """
    if not self._collectors:
      return {int(row): {} for row in ended}
    if len(ended) <= 1:
      before = self._totals()
      self._step(self._collectors, reward, terminated, truncated, infos)
      return {int(row): _delta(before, self._totals()) for row in ended}
    before_collectors = copy.deepcopy(self._collectors)
    before = self._totals()
    results: dict[int, dict[str, float]] = {}
    for row in ended:
      alone = np.zeros_like(terminated)
      alone[row] = True
      collectors = copy.deepcopy(before_collectors)
      self._step(collectors, reward, terminated & alone, truncated & alone, infos)
      results[int(row)] = _delta(before, _totals(collectors))
    self._step(self._collectors, reward, terminated, truncated, infos)
    return results

  def _totals(self) -> dict[str, tuple[int, float]]:
    return _totals(self._collectors)

  @staticmethod
  def _step(collectors: Sequence[Any], reward: np.ndarray, terminated: np.ndarray,
            truncated: np.ndarray, infos: Mapping[str, Any]) -> None:
    for collector in collectors:
      collector.step(reward, terminated, truncated, infos)


def _totals(collectors: Sequence[Any]) -> dict[str, tuple[int, float]]:
  totals: dict[str, tuple[int, float]] = {}
  for collector in collectors:
    totals.update(collector.totals())
  return totals


def _delta(before: Mapping[str, tuple[int, float]],
           after: Mapping[str, tuple[int, float]]) -> dict[str, float]:
  """{name: the value of the one episode between two snapshots of the totals}."""
  values: dict[str, float] = {}
  for name, (count, total) in after.items():
    count_before, total_before = before.get(name, (0, 0.0))
    if count > count_before:
      values[name] = float(total - total_before) / (count - count_before)
  return values
