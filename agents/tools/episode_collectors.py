"""Per-episode statistics of training: one small interface for console, TensorBoard and JSONL.

BLE's collectors have one equivalent here. A collector sees every batch step's Python
arrays (as `InGraphBatchEnv` receives them from the `BatchEnv`) and keeps running
totals over the episodes that finished:

    class EpisodeCollector:
      info_keys = ('distance_km',)            # step infos it reads (not warned as dropped)
      ignored_info_keys = ('battery_soc',)    # step infos it drops on purpose (not warned)
      def reset(self, indices): ...           # episodes begin at these batch rows
      def step(self, reward, terminated, truncated, infos): ...   # arrays [B]
      def totals(self): return {'name': (episodes, sum)}         # only ever grow

`Loop` turns the totals into the mean over each logged interval (the difference of two
snapshots, as for the mean score), so `name` appears next to `mean_score` in every
row: the console's progress bar, TensorBoard (`train/`, `eval/`) and `metrics.jsonl`.
Pass your own, a subclass of `EpisodeCollector`, with `InGraphBatchEnv(...,
collectors=[...])`; a user collector needs no change to the package.

An environment gives its default collectors through its plug-in (`episode_collectors`),
keyed by its Gymnasium id (the balloon's report TWR50 and its failure rates:
`agents.env.balloon.training_statistics`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from agents import plugins


class EpisodeCollector:
  """The interface (see the module docstring); subclasses override what they need."""

  info_keys: tuple[str, ...] = ()
  ignored_info_keys: tuple[str, ...] = ()

  def reset(self, indices: np.ndarray) -> None:
    """Episodes begin at batch rows `indices` (int array)."""
    del indices

  def step(self, reward: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
           infos: Mapping[str, Any]) -> None:
    """One batch step: reward float [B], terminated / truncated bool [B], infos dict."""
    raise NotImplementedError

  def totals(self) -> dict[str, tuple[int, float]]:
    """{name: (finished episodes, sum of the statistic over them)}; totals only grow."""
    raise NotImplementedError


def handled_info_keys(collectors: Iterable[EpisodeCollector]) -> set[str]:
  """Info keys the collectors read or drop on purpose (not warned about as dropped)."""
  keys: set[str] = set()
  for collector in collectors:
    keys.update(collector.info_keys)
    keys.update(collector.ignored_info_keys)
  return keys


def for_environment(environment: Any, batch_size: int) -> list[EpisodeCollector]:
  """The default collectors of a config's typed `environment` section
  (`agents.configs.sections.EnvironmentConfig`): those of its plug-in
  (`agents.plugins.EnvironmentPlugin.episode_collectors`), else none."""
  plugin = plugins.environment_plugin(environment.id)
  return list(plugin.episode_collectors(environment, batch_size))


def means(totals: Mapping[str, tuple[int, float]],
          mark: Mapping[str, tuple[int, float]]) -> dict[str, float | None]:
  """{name: mean over the episodes since `mark`} (None without episodes)."""
  result = {}
  for name, (count, value) in totals.items():
    before_count, before_value = mark.get(name, (0, 0.0))
    finished = count - before_count
    result[name] = (value - before_value) / finished if finished else None
  return result
