"""An observation option: what heading for each level would do over the hours ahead.

BLE's observation (features.py) shows the wind estimate at the balloon's position now. A
controller that plans (planner.py) gains by the estimate's change along the path over the
hours ahead, which that observation does not hold. With the environment option
`lookahead` (`BalloonEnv(lookahead=...)`, `BalloonVectorEnv(lookahead=...)`, in a config
`environment.kwargs.lookahead`), every observation gains a block of per-level features
that hold it, computed from what an agent can know at that step (the forecast and the
wind GP's posterior from the balloon's own measurements, `BalloonSimulator
.estimated_wind`; never the true wind):

- for every `stride`-th level of the wind column (the balloon's own level included) that
  is reachable, a simplified balloon heads for that level's pressure at the ACS's typical
  rates and drifts in the estimated wind, in steps of `step_s` (`planner.rollout_step`);
- at each horizon of `hours` it reads two features: the distance to the station then,
  squashed as observation feature 7 is (d / (d + 250 km)), and the mean over the steps
  so far of the reward's distance term (`reward.distance_reward`: 1 within 50 km);
- with `switch_hours` > 0, two-stage plans as well: the level is held until
  `switch_hours`, then the balloon heads for the best of `follow_levels` levels spread
  over the computed ones. At each horizon beyond the switch the level gains the same two
  features of its best follow-up (best by the mean distance term, then by the distance).
  No wind is estimated for them: the follow-up's path after the switch is the follow-up
  level's own rollout from then on, shifted to where this level's rollout is at the
  switch. That assumes the estimated wind at a pressure changes little over the first
  stage's drift (some 100 km in 3 hours); it costs a few array operations per pair.
- with `spread_directions` > 0, what the estimate's own uncertainty allows: the wind at a
  level may differ from its estimate by about the GP's posterior standard deviation there
  (sigma, from the column's uncertainty feature). Each level's path is displaced by a
  constant wind error of length sqrt(2) sigma in each of `spread_directions` directions
  (the displacement grows as error × time; no wind is estimated for them), and at each
  horizon the level gains two features: the mean distance term so far, averaged over the
  directions (what the level is expected to do) and of the best direction (what it could
  do if its wind turns out favourable, which flying there would reveal).

The block is [361 levels × `features_per_level`] floats appended after BLE's 1099, its levels
placed as the wind column's are (the balloon's level at index 180). Levels not computed
(unreachable, or between the stride's levels) read the padding (1, 0) per pair. The
column network reads the block with the column (`ColumnPolicy`), at a `column_stride`
that is a multiple of `stride`.

It is an observation option, not BLE's observation: an agent trained with it must be
flown with it. Evaluation does so for a run or an exported policy whose record keeps
the option (the balloon evaluation plug-in's `observation_kwargs`). It costs about as
much again as the rest of a balloon step: about (reachable levels / stride) ×
(max(hours) · 3600 / step_s) wind estimates per balloon and step (some 700 with the
defaults), their GP mean in float32 (`WindGP.mean_at(..., float32=True)`). The two-stage
features add about a third to that (pairs of paths, no wind estimates), the spread
features about a sixth more (displaced paths, no wind estimates).
docs/benchmarks.md gives the measurement and its command.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.env.balloon import constants
from agents.env.balloon.controllers import planner
from agents.env.balloon.observation import features
from agents.env.balloon.physics import reward

_PADDING = (1.0, 0.0)  # (squashed distance, mean distance reward) of a level not computed
_SPREAD_PADDING = (0.0, 0.0)  # (expected, best mean distance reward) of a level not computed


@dataclasses.dataclass(frozen=True)
class Lookahead:
  """The lookahead block's settings.

  Attributes:
    hours: the horizons (hours ahead) at which each level's features are read.
    stride: features for every `stride`-th level of the column (a divisor of 180).
    step_s: the simplified balloon's time step (s).
    ascent_rate, descent_rate: Pa/s its pressure falls (UP) and rises (DOWN) at (the
      planner's, measured on the simulator).
    switch_hours: if not 0, the two-stage features: when (hours ahead) a level's plan
      switches to its best follow-up (a whole number of `step_s`, before the longest
      horizon).
    follow_levels: the follow-up levels a two-stage plan chooses from, spread over each
      balloon's computed levels.
    spread_directions: if not 0, the spread features: each level's path displaced by a
      constant wind error of sqrt(2) times the GP's posterior standard deviation at the
      level, in this many directions; per horizon the mean distance term averaged over
      them and of the best one.
  """
  hours: tuple[float, ...] = (3.0, 6.0, 12.0)
  stride: int = 4
  step_s: float = 1800.0
  ascent_rate: float = planner.PlannerConfig.ascent_rate
  descent_rate: float = planner.PlannerConfig.descent_rate
  switch_hours: float = 0.0
  follow_levels: int = 8
  spread_directions: int = 0

  def __post_init__(self) -> None:
    hours = tuple(float(hour) for hour in self.hours)
    object.__setattr__(self, 'hours', hours)
    if not hours or any(not np.isfinite(hour) or hour <= 0 for hour in hours) or (
        list(hours) != sorted(set(hours))):
      raise ValueError(f'lookahead.hours must be increasing positive hours, got {self.hours}.')
    if not _is_positive_int(self.stride) or constants.BALLOON_COLUMN_INDEX % self.stride:
      raise ValueError(f'lookahead.stride must be a positive divisor of '
                       f'{constants.BALLOON_COLUMN_INDEX}, got {self.stride!r}.')
    if not self.step_s > 0 or hours[-1] * 3600.0 < self.step_s:
      raise ValueError(f'lookahead.step_s must be positive and at most the longest horizon, '
                       f'got {self.step_s} s for {hours[-1]} h.')
    if not (self.ascent_rate > 0 and self.descent_rate > 0):
      raise ValueError(f'lookahead.ascent_rate and descent_rate must be positive, got '
                       f'{self.ascent_rate} and {self.descent_rate}.')
    if isinstance(self.switch_hours, bool) or not isinstance(
        self.switch_hours, (int, float, np.integer, np.floating)):
      raise ValueError(f'lookahead.switch_hours must be a number of hours, got '
                       f'{self.switch_hours!r}.')
    if self.switch_hours:
      steps = self.switch_hours * 3600.0 / self.step_s
      if not (np.isfinite(steps) and steps >= 1 and steps == round(steps)
              and self.switch_hours < hours[-1]):
        raise ValueError(f'lookahead.switch_hours must be 0 (one stage) or a whole number of '
                         f'step_s ({self.step_s} s) before the longest horizon ({hours[-1]} h), '
                         f'got {self.switch_hours}.')
    if not _is_positive_int(self.follow_levels):
      raise ValueError(f'lookahead.follow_levels must be a positive integer, got '
                       f'{self.follow_levels!r}.')
    if not (_is_int(self.spread_directions) and self.spread_directions >= 0):
      raise ValueError(f'lookahead.spread_directions must be 0 (off) or a positive integer, '
                       f'got {self.spread_directions!r}.')

  @property
  def two_stage_hours(self) -> tuple[float, ...]:
    """The horizons beyond the switch, which have two-stage features (none if one stage)."""
    return tuple(hour for hour in self.hours if self.switch_hours and hour > self.switch_hours)

  @property
  def spread_hours(self) -> tuple[float, ...]:
    """The horizons that have spread features (none without `spread_directions`)."""
    return self.hours if self.spread_directions else ()

  @property
  def features_per_level(self) -> int:
    """Features of one level: (squashed distance, mean distance reward) per horizon, then
    the same of the best two-stage plan per horizon beyond the switch, then (expected,
    best) mean distance reward of the displaced paths per horizon with spread features."""
    return 2 * (len(self.hours) + len(self.two_stage_hours) + len(self.spread_hours))

  def padding(self) -> np.ndarray:
    """The features of a level not computed, float32 [features_per_level]."""
    pairs = [_PADDING] * (len(self.hours) + len(self.two_stage_hours)) + (
        [_SPREAD_PADDING] * len(self.spread_hours))
    return np.array(pairs, np.float32).reshape(-1)

  @property
  def size(self) -> int:
    """Floats the block adds to one balloon's observation."""
    return constants.NUM_COLUMN_LEVELS * self.features_per_level

  def switch_step(self) -> int:
    """The rollout step after which two-stage plans switch (0: one stage only)."""
    return int(round(self.switch_hours * 3600.0 / self.step_s))

  def checkpoints(self) -> list[int]:
    """The rollout step after which each horizon is read (1-based step counts)."""
    return [max(1, int(round(hour * 3600.0 / self.step_s))) for hour in self.hours]


def _is_int(value: Any) -> bool:
  """Whether a setting is an integer (a bool is not)."""
  return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _is_positive_int(value: Any) -> bool:
  """Whether a setting is a positive integer."""
  return _is_int(value) and value >= 1


def check_lookahead(value: Lookahead | Mapping[str, Any] | bool | None) -> Lookahead | None:
  """A `Lookahead` from an option value: None or False (off), True (defaults), a dict of
  its fields, or a `Lookahead`.

  Raises:
    TypeError / ValueError: naming the option and what is wrong.
  """
  if value is None or value is False:
    return None
  if value is True:
    return Lookahead()
  if isinstance(value, Lookahead):
    return value
  if isinstance(value, dict):
    names = [field.name for field in dataclasses.fields(Lookahead)]
    unknown = sorted(set(value) - set(names))
    if unknown:
      raise ValueError(f'lookahead: unknown keys {unknown}; expected some of '
                       f'{", ".join(names)}.')
    fields = dict(value)
    if 'hours' in fields:
      hours = fields['hours']
      fields['hours'] = tuple(hours) if isinstance(hours, (list, tuple)) else (hours,)
    return Lookahead(**fields)
  raise TypeError(f'lookahead must be None, a bool, a dict of Lookahead fields or a '
                  f'Lookahead, got {type(value).__name__}.')


def lookahead_block(simulator: Any, lookahead: Lookahead) -> np.ndarray:
  """The lookahead features of every balloon of a simulator, float32 [B, size].

  Args:
    simulator: a `BalloonSimulator` after reset or step.
    lookahead: a `Lookahead`.
  """
  count = simulator.num_balloons
  stride = lookahead.stride
  level = features.balloon_level(simulator.pressure)
  # The computed levels are the balloon's own and every stride-th level from it that
  # is reachable: a run of levels [first, first + width) per balloon, in stride steps.
  lowest, highest = simulator.reachable_pressures()
  offsets = np.arange(-constants.BALLOON_COLUMN_INDEX, constants.BALLOON_COLUMN_INDEX + 1,
                      stride)
  real = level[:, None] + offsets
  pressures = constants.COLUMN_MIN_PRESSURE + real * constants.COLUMN_PRESSURE_STEP
  valid = ((real >= 0) & (real < constants.NUM_LEVELS) & (pressures >= lowest[:, None])
           & (pressures <= highest[:, None]))
  width = max(int(valid.sum(axis=1).max()), 1)
  first = valid.argmax(axis=1)
  picked = np.minimum(first[:, None] + np.arange(width), len(offsets) - 1)
  rows = np.arange(count)[:, None]
  picked_valid = valid[rows, picked]
  targets = pressures[rows, picked]
  state = tuple(np.repeat(value[:, None], width, axis=1) for value in (
      simulator.x, simulator.y, simulator.pressure, simulator.time_elapsed_s))
  per_level = np.empty((count, width, lookahead.features_per_level))
  reward_sum = np.zeros((count, width))
  checkpoints = lookahead.checkpoints()
  switch = lookahead.switch_step()
  later = []  # (x, y) after each step beyond the switch, for the two-stage features
  # The column index of each computed level (the balloon's level sits at index 180).
  column = constants.BALLOON_COLUMN_INDEX + offsets[picked]
  spread = _Spread(simulator, lookahead, column) if lookahead.spread_directions else None
  spread_start = 2 * (len(checkpoints) + len(lookahead.two_stage_hours))
  for step in range(1, checkpoints[-1] + 1):
    state = planner.rollout_step(simulator, state, targets, lookahead.step_s,
                                 lookahead.ascent_rate, lookahead.descent_rate, float32=True)
    distance_km = np.hypot(state[0], state[1]) / 1000.0
    reward_sum += reward.distance_reward(distance_km)
    if spread is not None:
      spread.add(state, step)
    for horizon, checkpoint in enumerate(checkpoints):
      if checkpoint == step:
        per_level[..., 2 * horizon:2 * horizon + 2] = _features(distance_km, reward_sum, step)
        if spread is not None:
          start = spread_start + 2 * horizon
          per_level[..., start:start + 2] = spread.features(step)
    if switch and step == switch:
      switch_state, switch_reward_sum = state, reward_sum.copy()
    elif switch and step > switch:
      later.append((state[0], state[1]))
  if switch:
    computed = picked_valid.sum(axis=1)
    follow = _follow_levels(lookahead, computed)
    distance_km = _shifted_second_stage(
        switch_state, later, follow)  # pylint: disable=possibly-used-before-assignment
    per_level[..., 2 * len(checkpoints):spread_start] = _two_stage_features(
        lookahead, switch_reward_sum,  # pylint: disable=possibly-used-before-assignment
        distance_km)
  block = np.empty((count, constants.NUM_COLUMN_LEVELS, lookahead.features_per_level),
                   np.float32)
  block[...] = lookahead.padding()
  block[np.broadcast_to(rows, picked.shape)[picked_valid], column[picked_valid]] = (
      per_level[picked_valid])
  return block.reshape(count, -1)


def _features(distance_km: np.ndarray, reward_sum: np.ndarray,
              steps: int | np.ndarray) -> np.ndarray:
  """A horizon's two features [..., 2]: squashed distance, mean distance reward so far."""
  return np.stack([distance_km / (distance_km + constants.DISTANCE_SQUASH_KM),
                   reward_sum / steps], axis=-1)


class _Spread:
  """The spread features' running sums: every level's path displaced by constant wind
  errors of sqrt(2) sigma in `spread_directions` directions, sigma the GP's posterior
  standard deviation at the level now (the column's uncertainty feature)."""

  def __init__(self, simulator: Any, lookahead: Lookahead, column: Any) -> None:
    """column: the column index of each computed level, [B, W]."""
    triples = simulator.observation[:, constants.NUM_AMBIENT_FEATURES:].reshape(
        simulator.num_balloons, constants.NUM_COLUMN_LEVELS, 3)
    uncertainty = np.take_along_axis(triples[..., 0], column, axis=1)  # variance / 3.6^2
    sigma = np.sqrt(np.clip(uncertainty, 0.0, 1.0) * constants.GP_PRIOR_VARIANCE)
    angles = 2.0 * np.pi * np.arange(lookahead.spread_directions) / lookahead.spread_directions
    # Wind errors (m/s) [B, W, K]: sqrt(2) sigma, the root-mean-square length of a 2-D error
    # with sigma^2 per component.
    length = (np.sqrt(2.0) * sigma)[..., None]
    self._error_u = (length * np.cos(angles)).astype(np.float32)
    self._error_v = (length * np.sin(angles)).astype(np.float32)
    self._step_s = lookahead.step_s
    self._reward_sum = np.zeros(self._error_u.shape, np.float32)

  def add(self, state: tuple[np.ndarray, ...], step: int) -> None:
    """Adds the distance terms of the displaced paths after rollout step `step` (1-based)."""
    elapsed = np.float32(step * self._step_s)
    x = state[0].astype(np.float32)[..., None] + self._error_u * elapsed
    y = state[1].astype(np.float32)[..., None] + self._error_v * elapsed
    self._reward_sum += reward.distance_reward(np.hypot(x, y) / np.float32(1000.0),
                                               np.float32)

  def features(self, steps: int | np.ndarray) -> np.ndarray:
    """(expected, best) mean distance term after `steps` rollout steps, [B, W, 2]."""
    means = self._reward_sum / np.float32(steps)
    return np.stack([means.mean(axis=-1), means.max(axis=-1)], axis=-1)


def _follow_levels(lookahead: Lookahead, computed: np.ndarray) -> np.ndarray:
  """Each balloon's follow-up levels [B, F]: `follow_levels` indices spread over the
  `computed` [B] levels it computed (the first ones of the block's W)."""
  spread = np.linspace(0.0, 1.0, lookahead.follow_levels)
  return np.rint(spread * (np.maximum(computed, 1) - 1)[:, None]).astype(np.intp)


def _shifted_second_stage(at_switch: Any, later: Any, follow: np.ndarray) -> np.ndarray:
  """Distances (km) of the two-stage paths after the switch, [B, W, F, S], each the
  follow-up level's own rollout from the switch on, shifted to where the first stage is.

  Args:
    at_switch: (x, y, pressure, t) of every level's rollout at the switch, [B, W] each.
    later: per step after the switch, (x, y) of every level's rollout, [B, W] each.
    follow: the follow-up levels [B, F] (indices of W).
  """
  rows = np.arange(len(follow))[:, None]
  # In float32 (as the rollouts' wind): the pairs are the option's largest arrays.
  later_x = np.stack([x for x, _ in later], axis=-1).astype(np.float32)  # [B, W, S]
  later_y = np.stack([y for _, y in later], axis=-1).astype(np.float32)
  x_switch, y_switch = at_switch[0].astype(np.float32), at_switch[1].astype(np.float32)
  # A follow-up's drift from the switch on, [B, F, S], added to each level's position at
  # the switch: the two-stage paths [B, W, F, S].
  drift_x = later_x[rows, follow] - x_switch[rows, follow][..., None]
  drift_y = later_y[rows, follow] - y_switch[rows, follow][..., None]
  return np.hypot(x_switch[:, :, None, None] + drift_x[:, None],
                  y_switch[:, :, None, None] + drift_y[:, None]) / np.float32(1000.0)


def _two_stage_features(lookahead: Lookahead, reward_switch: np.ndarray,
                        distance_km: np.ndarray) -> np.ndarray:
  """The best two-stage plan's features of every level, [B, W, 2 · two-stage horizons].

  Args:
    lookahead: the `Lookahead`.
    reward_switch: every level's sum of distance terms up to the switch, [B, W].
    distance_km: the two-stage paths' distances after the switch, [B, W, F, S].
  """
  # The second stage's running sums; the first stage's sum joins at the horizons read.
  later_sum = np.cumsum(reward.distance_reward(distance_km, np.float32), axis=-1)
  switch = lookahead.switch_step()
  features = []  # pylint: disable=redefined-outer-name
  for checkpoint in lookahead.checkpoints():
    if checkpoint <= switch:
      continue
    after = checkpoint - switch - 1
    sums = reward_switch[..., None] + later_sum[..., after]
    distances = distance_km[..., after]
    # Best by the mean distance term; among equals (all within 50 km), the nearest.
    ties = sums >= sums.max(axis=-1, keepdims=True) - 1e-9
    best = np.where(ties, distances, np.inf).argmin(axis=-1)
    features.append(_features(np.take_along_axis(distances, best[..., None], -1)[..., 0],
                              np.take_along_axis(sums, best[..., None], -1)[..., 0],
                              checkpoint))
  return np.concatenate(features, axis=-1)
