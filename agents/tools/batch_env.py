"""Combines several environments into one batch (minimal in-process version).

CONTRACT (other modules rely on it; keep it when extending):

  batch = BatchEnv(envs)            # envs: gymnasium.Env objects, or slabs
  len(batch) -> B                   # number of environments
  batch.observation_space           # the space of ONE environment
  batch.action_space                # the space of ONE environment
  obs, infos = batch.reset(indices=None, seeds=None)
      # indices: int sequence/array (None = all); seeds: same length or None.
      # obs: np.ndarray [len(indices), *obs_shape]; infos: dict of arrays
      # in Gymnasium's vector format (key -> array [len(indices)], '_key' mask).
  obs, reward, terminated, truncated, infos = batch.step(actions)
      # actions: np.ndarray [B, *act_shape]; reward float32 [B];
      # terminated, truncated: bool [B]; infos as above with length B.
  batch.close()

No automatic reset: the caller resets the environments that finished.
"""

import numpy as np


class BatchEnv:
  """Steps a list of Gymnasium environments as one batch, in this process."""

  def __init__(self, envs):
    if not envs:
      raise ValueError('BatchEnv needs at least one environment.')
    self._envs = list(envs)
    self.observation_space = self._envs[0].observation_space
    self.action_space = self._envs[0].action_space

  def __len__(self):
    return len(self._envs)

  def step(self, actions):
    results = [env.step(action) for env, action in zip(self._envs, actions)]
    observs, rewards, terminated, truncated, infos = zip(*results)
    return (np.stack(observs), np.asarray(rewards, np.float32), np.asarray(terminated, bool),
            np.asarray(truncated, bool), _merge_infos(infos))

  def reset(self, indices=None, seeds=None):
    indices = range(len(self._envs)) if indices is None else list(indices)
    seeds = [None] * len(indices) if seeds is None else list(seeds)
    results = [self._envs[i].reset(seed=seed) for i, seed in zip(indices, seeds)]
    observs, infos = zip(*results)
    return np.stack(observs), _merge_infos(infos)

  def close(self):
    for env in self._envs:
      env.close()


def _merge_infos(infos):
  merged = {}
  for index, info in enumerate(infos):
    for key, value in info.items():
      if key not in merged:
        merged[key] = np.zeros(len(infos), np.asarray(value).dtype)
        merged['_' + key] = np.zeros(len(infos), bool)
      merged[key][index] = value
      merged['_' + key][index] = True
  return merged
