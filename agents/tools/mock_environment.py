"""A deterministic Gymnasium environment that records what was done to it, for tests (yours too).

Like BatchPPO's `MockEnvironment`: episode lengths are given up front, so a
test knows exactly on which step each environment of a batch ends, and which
of them must be reset on the next step. Each episode ends by termination or by
truncation as the test asks. The environment raises when it is stepped after
its episode ended without a reset, which is how a wrong reset shows up.

Observation: float32 [episode index, step within the episode].
Reward: episode index + 1 on every step, so an episode's return is
(index + 1) * duration.
Info: 'episode_step' (int) on every step and reset; `INFO_SPECS` names it for
`InGraphBatchEnv(info_specs=...)`, so that a batch of these environments drops no info.
"""

import gymnasium
import numpy as np

INFO_SPECS = {'episode_step': ((), np.int32)}


class MockEnvironment(gymnasium.Env):
  """Runs episodes of scripted durations, cycling through the given list.

  Attributes:
    durations: the scripted episode lengths.
    steps: list with the number of steps taken in each episode so far.
    actions: every action received, in order.
    seeds: the seed passed to every reset, in order.
  """

  metadata = {'render_modes': []}

  def __init__(self, durations, truncated=None, action_space=None):
    """Scripts the episodes.

    Args:
      durations: list of episode lengths (>= 1), used in a cycle.
      truncated: list of bools parallel to durations: whether that episode
        ends by truncation instead of termination; None means never.
      action_space: action space; defaults to Box(-1, 1, (1,), float32).
    """
    self.durations = list(durations)
    self.truncated = list(truncated) if truncated is not None else [False] * len(durations)
    self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
    self.action_space = action_space or gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)
    self.steps = []
    self.actions = []
    self.seeds = []
    self._done = True

  @property
  def episode(self):
    """Index of the current episode (the number of resets minus one)."""
    return len(self.steps) - 1

  def reset(self, *, seed=None, options=None):
    self.seeds.append(seed)
    self.steps.append(0)
    self._done = False
    return self._observ(), {'episode_step': 0}

  def step(self, action):
    if self._done:
      raise RuntimeError('MockEnvironment stepped after its episode ended without a reset.')
    self.actions.append(np.asarray(action).copy())
    self.steps[-1] += 1
    slot = self.episode % len(self.durations)
    ended = self.steps[-1] >= self.durations[slot]
    self._done = ended
    terminated = ended and not self.truncated[slot]
    truncated = ended and self.truncated[slot]
    reward = float(self.episode + 1)
    return self._observ(), reward, terminated, truncated, {'episode_step': self.steps[-1]}

  def _observ(self):
    return np.array([self.episode, self.steps[-1]], np.float32)
