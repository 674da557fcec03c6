"""Environment wrappers the training stack needs and Gymnasium lacks.

In the spirit of BatchPPO's wrappers; where Gymnasium already has the wrapper
we use (and re-export) its own:

  TimeLimit        gymnasium.wrappers.TimeLimit (episode length -> truncated).
  ClipAction       gymnasium.wrappers.ClipAction: clips Box actions to the bounds
                   and advertises an unbounded action space, so a Gaussian policy
                   may sample anywhere.

Added here:

  RangeNormalize   finite Box observations and actions rescaled to [-1, 1].
  ConvertTo32Bit   float64 -> float32, int64 -> int32, and a `NonFiniteError` naming
                   the field, the environment and the step on NaN or infinity.
  CacheSpaces      spaces read once, so deep wrapper stacks (and attribute access
                   across a process boundary) do not recompute them.
  FrameHistory     observations of the current and chosen past steps, stacked.
  FrameDelta       observation minus the previous observation.
  ActionRepeat     each action repeated several steps, rewards summed.
"""

import gymnasium
import numpy as np
from gymnasium.wrappers import ClipAction, TimeLimit

from agents.tools import errors

__all__ = ['ActionRepeat', 'CacheSpaces', 'ClipAction', 'ConvertTo32Bit', 'FrameDelta',
           'FrameHistory', 'RangeNormalize', 'TimeLimit']


def _is_finite_box(space):
  return (isinstance(space, gymnasium.spaces.Box) and np.isfinite(space.low).all()
          and np.isfinite(space.high).all())


class RangeNormalize(gymnasium.Wrapper):
  """Rescales finite Box observation and action spaces to [-1, 1].

  Observations are mapped from [low, high] to [-1, 1]; actions given in [-1, 1] are
  mapped back to [low, high] before they reach the environment.
  """

  def __init__(self, env, observ=None, action=None):
    """Wraps the environment.

    Args:
      env: Environment to wrap.
      observ: True to normalize observations (the space must be a finite Box), False to
        leave them, None to normalize exactly when the space is a finite Box.
      action: Same choice for actions.

    Raises:
      ValueError: Normalization was requested for a space that is not a finite Box.
    """
    super().__init__(env)
    self._should_normalize_observ = self._decide(observ, env.observation_space, 'observation')
    self._should_normalize_action = self._decide(action, env.action_space, 'action')
    if self._should_normalize_observ:
      space = env.observation_space
      self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, space.shape, np.float32)
    if self._should_normalize_action:
      space = env.action_space
      self.action_space = gymnasium.spaces.Box(-1.0, 1.0, space.shape, np.float32)

  def step(self, action):
    if self._should_normalize_action:
      action = self._denormalize_action(action)
    observ, reward, terminated, truncated, info = self.env.step(action)
    return self._normalize_observ(observ), reward, terminated, truncated, info

  def reset(self, *, seed=None, options=None):
    observ, info = self.env.reset(seed=seed, options=options)
    return self._normalize_observ(observ), info

  def _decide(self, requested, space, name):
    if requested is None:
      return _is_finite_box(space)
    if requested and not _is_finite_box(space):
      raise ValueError(f'RangeNormalize needs a Box {name} space with finite bounds, '
                       f'got {space}.')
    return bool(requested)

  def _denormalize_action(self, action):
    low, high = self.env.action_space.low, self.env.action_space.high
    action = (np.asarray(action, np.float64) + 1) / 2 * (high - low) + low
    return action.astype(self.env.action_space.dtype)

  def _normalize_observ(self, observ):
    if not self._should_normalize_observ:
      return observ
    low, high = self.env.observation_space.low, self.env.observation_space.high
    return (2 * (np.asarray(observ, np.float64) - low) / (high - low) - 1).astype(np.float32)


class ConvertTo32Bit(gymnasium.Wrapper):
  """Converts 64-bit observations and rewards to 32 bits and rejects non-finite values.

  TensorFlow models run in 32 bits; converting at the environment keeps every buffer
  and variable in one dtype. A NaN or infinity raises `NonFiniteError` at the step
  that produced it, instead of surfacing as a NaN loss much later.
  """

  def __init__(self, env, index=None):
    """Wraps the environment.

    Args:
      env: Environment to wrap.
      index: Batch index of this environment, named in errors when given.
    """
    super().__init__(env)
    self._index = index
    self._episode_step = 0
    self.observation_space = _space_to_32bit(env.observation_space)

  def step(self, action):
    observ, reward, terminated, truncated, info = self.env.step(action)
    self._episode_step += 1
    observ = self._convert_observ(observ)
    if not np.isfinite(reward):
      raise errors.NonFiniteError('reward', self._index, self._episode_step, f'got {reward}')
    return observ, np.float32(reward), terminated, truncated, info

  def reset(self, *, seed=None, options=None):
    observ, info = self.env.reset(seed=seed, options=options)
    self._episode_step = 0
    return self._convert_observ(observ), info

  def _convert_observ(self, observ):
    observ = np.asarray(observ)
    if observ.dtype.kind == 'f' and not np.isfinite(observ).all():
      positions = np.argwhere(~np.isfinite(observ)).tolist()
      raise errors.NonFiniteError(
          'observation', self._index, self._episode_step,
          f'{len(positions)} non-finite entries, first at position {positions[0]}')
    return observ.astype(self.observation_space.dtype, copy=False)


def _space_to_32bit(space):
  if isinstance(space, gymnasium.spaces.Box):
    if space.dtype == np.float64:
      return gymnasium.spaces.Box(space.low.astype(np.float32), space.high.astype(np.float32),
                                  space.shape, np.float32)
    if space.dtype == np.int64:
      return gymnasium.spaces.Box(
          np.clip(space.low, np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int32),
          np.clip(space.high, np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int32),
          space.shape, np.int32)
    return space
  if isinstance(space, gymnasium.spaces.Discrete):
    return gymnasium.spaces.Box(space.start, space.start + space.n - 1, (), np.int32)
  raise TypeError(f'ConvertTo32Bit supports Box and Discrete observation spaces, got {space}.')


class CacheSpaces(gymnasium.Wrapper):
  """Reads the observation and action spaces once and keeps them."""

  def __init__(self, env):
    super().__init__(env)
    self.observation_space = env.observation_space
    self.action_space = env.action_space


class FrameHistory(gymnasium.Wrapper):
  """Observations of the current and chosen past steps, stacked along a new first axis.

  With `past_indices=[0, 1, 3]` the observation holds the frames of now, one step ago
  and three steps ago. After a reset the history is filled with the first frame.
  Unlike Gymnasium's FrameStackObservation the past steps need not be consecutive.
  """

  def __init__(self, env, past_indices, flatten=False):
    """Wraps the environment.

    Args:
      env: Environment with a Box observation space.
      past_indices: Non-negative ints: how many steps back each stacked frame is.
      flatten: Concatenate the frames along the existing first axis instead of stacking.
    """
    super().__init__(env)
    if not past_indices or min(past_indices) < 0:
      raise ValueError(f'past_indices must be non-negative ints, got {past_indices}.')
    space = env.observation_space
    if not isinstance(space, gymnasium.spaces.Box):
      raise TypeError(f'FrameHistory needs a Box observation space, got {space}.')
    self._past_indices = np.asarray(past_indices)
    self._capacity = int(max(past_indices)) + 1
    self._flatten = flatten
    self._buffer = None
    self._position = 0
    low = self._stack(np.repeat(space.low[None], len(past_indices), 0))
    high = self._stack(np.repeat(space.high[None], len(past_indices), 0))
    self.observation_space = gymnasium.spaces.Box(low, high, low.shape, space.dtype)

  def step(self, action):
    observ, reward, terminated, truncated, info = self.env.step(action)
    self._position = (self._position + 1) % self._capacity
    self._buffer[self._position] = observ
    return self._observ(), reward, terminated, truncated, info

  def reset(self, *, seed=None, options=None):
    observ, info = self.env.reset(seed=seed, options=options)
    self._buffer = np.repeat(np.asarray(observ)[None], self._capacity, 0)
    self._position = 0
    return self._observ(), info

  def _observ(self):
    indices = (self._position - self._past_indices) % self._capacity
    return self._stack(self._buffer[indices])

  def _stack(self, frames):
    if self._flatten:
      return np.concatenate(list(frames), 0) if frames[0].ndim else frames.copy()
    return frames


class FrameDelta(gymnasium.Wrapper):
  """Observations become the difference to the previous observation (zero after reset)."""

  def __init__(self, env):
    super().__init__(env)
    space = env.observation_space
    if not isinstance(space, gymnasium.spaces.Box):
      raise TypeError(f'FrameDelta needs a Box observation space, got {space}.')
    with np.errstate(invalid='ignore', over='ignore'):
      low, high = space.low - space.high, space.high - space.low
    self.observation_space = gymnasium.spaces.Box(
        np.nan_to_num(low, nan=-np.inf), np.nan_to_num(high, nan=np.inf), space.shape, space.dtype)
    self._last = None

  def step(self, action):
    observ, reward, terminated, truncated, info = self.env.step(action)
    delta = observ - self._last
    self._last = observ
    return delta, reward, terminated, truncated, info

  def reset(self, *, seed=None, options=None):
    observ, info = self.env.reset(seed=seed, options=options)
    self._last = observ
    return np.zeros_like(observ), info


class ActionRepeat(gymnasium.Wrapper):
  """Repeats each action `amount` times, summing rewards, until the episode ends."""

  def __init__(self, env, amount):
    super().__init__(env)
    if amount < 1:
      raise ValueError(f'ActionRepeat amount must be at least 1, got {amount}.')
    self._amount = amount

  def step(self, action):
    total_reward = 0.0
    for _ in range(self._amount):
      observ, reward, terminated, truncated, info = self.env.step(action)
      total_reward += reward
      if terminated or truncated:
        break
    return observ, total_reward, terminated, truncated, info
