"""A model-predictive baseline: plans each balloon's altitude with the wind it can know.

What it uses, at each decision, per balloon (nothing else):

- its state after the last step, as the observation shows it: position (x, y) relative
  to the station, pressure, and the time since the episode start;
- the reachable pressure range of the episode's table (the levels the observation
  shows; the rest is padding);
- the wind estimate the observation's column is built from: the forecast plus the wind
  GP's posterior mean of the forecast error, given the balloon's own measurements
  (`BalloonSimulator.estimated_wind`). The GP's kernel decays the correction away from
  the measurements, so far ahead in time or space the estimate is the forecast. It never
  reads the true wind (the error field the balloon drifts in).

How it plans: every `replan_every` steps, for each balloon and each candidate target
pressure (`num_levels` levels spread evenly over the reachable range, the balloon's own
pressure, and the target it holds), a simplified balloon is rolled forward in steps of
`rollout_step_s`: its pressure moves towards the target at the ACS's typical rate
(`ascent_rate`, `descent_rate` Pa/s, measured on the simulator) and it drifts with the
estimated wind at its pressure. With `second_levels` > 0 the plans have two stages: the
first target is held for `switch_after_s`, then each of `second_levels` targets over the
range reachable then is tried until `horizon_s`, and a first target scores with its best
follow-up (a two-level tree, max over the second level). A rollout scores the discounted
sum, over its steps, of BLE's reward without the power term (`reward.distance_reward`: 1
within 50 km, else 0.4 halved every 100 km beyond), so time within 50 km counts most and
distance breaks ties. The balloon keeps its target unless another scores `switch_margin`
more, and heads for it: UP while its pressure is more than `deadband` Pa above the
target (pressure falls as it rises), DOWN while more than `deadband` below, else STAY.
The safety layers, the battery and the day-night cycle are not modelled (the simulator's
safety layers still apply to what it commands). Everything is vectorised over balloons
and candidates with numpy, the GP mean in a compiled kernel (kernels.posterior_means).

It flies next to the simulator, in the slab's process (`PlannedSlab`): the evaluation
baseline `mpc` (evaluation.py) asks for such a slab, whose steps take the planner's
actions instead of the ones sent to it. It is a baseline to measure agents against, not
an agent to learn from: it needs the simulator's forecast and GP, which an agent's
observation only summarises at the balloon's position.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import VectorWrapper

from agents.env.balloon import constants
from agents.env.balloon.physics import reward


@dataclasses.dataclass(frozen=True)
class PlannerConfig:
  """The planner's settings (defaults chosen on seeds outside `small_eval`, docs/balloon_env.md).

  Attributes:
    num_levels: candidate target pressures spread over the reachable range.
    horizon_s: how far ahead a rollout looks (s).
    rollout_step_s: the rollout's time step (s).
    ascent_rate, descent_rate: Pa/s the simplified balloon's pressure falls (UP) and
      rises (DOWN) at towards its target (the ACS's typical rates on this simulator).
    discount: per rollout step, the weight of later steps.
    switch_margin: how much more (in rollout steps within 50 km) a new target must
      score to replace the held one.
    deadband: Pa around the target where the balloon stays.
    replan_every: agent steps between plans (the target is held in between).
    second_levels: if not 0, two-stage plans: after `switch_after_s` each first target
      is followed by each of `second_levels` targets over the reachable range, and a first
      target scores with its best follow-up.
    switch_after_s: when the second stage starts (s).
  """
  num_levels: int = 16
  horizon_s: float = 12 * 3600.0
  rollout_step_s: float = 1200.0
  ascent_rate: float = 0.4
  descent_rate: float = 0.3
  discount: float = 0.99
  switch_margin: float = 0.5
  deadband: float = 100.0
  replan_every: int = 1
  second_levels: int = 8
  switch_after_s: float = 3 * 3600.0

  def __post_init__(self) -> None:
    if self.num_levels < 2 or self.replan_every < 1:
      raise ValueError(f'PlannerConfig needs num_levels >= 2 and replan_every >= 1, got '
                       f'{self.num_levels} and {self.replan_every}.')
    if self.second_levels and not (
        self.horizon_s > self.switch_after_s >= self.rollout_step_s):
      raise ValueError(f'PlannerConfig needs horizon_s > switch_after_s >= rollout_step_s '
                       f'for two-stage plans, got {self.horizon_s}, {self.switch_after_s} and '
                       f'{self.rollout_step_s}.')
    if not self.horizon_s >= self.rollout_step_s > 0:
      raise ValueError(f'PlannerConfig needs horizon_s >= rollout_step_s > 0, got '
                       f'{self.horizon_s} and {self.rollout_step_s}.')


def spread_levels(lowest: np.ndarray, highest: np.ndarray, count: int) -> np.ndarray:
  """`count` pressures spread evenly over each balloon's [lowest, highest], [B, count]."""
  fractions = np.linspace(0.0, 1.0, count)
  return lowest[:, None] + fractions * (highest - lowest)[:, None]


class Planner:
  """Plans the altitude of every balloon of a simulator (see the module docstring).

  Args:
    simulator: the `BalloonSimulator` whose balloons it steers. It reads their state,
      `reachable_pressures` and `estimated_wind` only.
    config: a `PlannerConfig`.
  """

  def __init__(self, simulator: Any, config: PlannerConfig = PlannerConfig()) -> None:
    self.simulator = simulator
    self.config = config
    count = simulator.num_balloons
    self.target = np.full(count, np.nan)  # the held target pressure (NaN: none yet)
    self._since_plan = np.zeros(count, np.int64)
    steps = int(round(config.horizon_s / config.rollout_step_s))
    self._weights = config.discount ** np.arange(steps)

  def begin_episode(self, indices: Sequence[int] | np.ndarray) -> None:
    """Balloons `indices` start new episodes: they hold no target and plan at once."""
    indices = np.asarray(indices, np.intp)
    self.target[indices] = np.nan
    self._since_plan[indices] = 0

  def __call__(self) -> np.ndarray:
    """Actions int64 [B] (0 DOWN, 1 STAY, 2 UP) for the balloons' current state."""
    due = np.isnan(self.target) | (self._since_plan % self.config.replan_every == 0)
    if due.any():
      self.target = np.where(due, self.plan()[0], self.target)
    self._since_plan += 1
    return self.actions_towards(self.target)

  def actions_towards(self, target: np.ndarray) -> np.ndarray:
    """The actions that head for target pressures [B] (STAY within the deadband)."""
    pressure = self.simulator.pressure
    band = self.config.deadband
    return np.where(pressure > target + band, constants.UP,
                    np.where(pressure < target - band, constants.DOWN,
                             constants.STAY)).astype(np.int64)

  def candidates(self) -> np.ndarray:
    """Candidate target pressures [B, C]: the levels, the balloon's pressure, the held target."""
    lowest, highest = self.simulator.reachable_pressures()
    pressure = self.simulator.pressure
    levels = spread_levels(lowest, highest, self.config.num_levels)
    held = np.where(np.isnan(self.target), pressure, self.target)
    return np.concatenate([levels, pressure[:, None], held[:, None]], axis=1)

  def plan(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chooses each balloon's target pressure.

    Returns:
      (target pressures [B], candidate pressures [B, C], their scores [B, C]).
    """
    config = self.config
    simulator = self.simulator
    targets = self.candidates()
    count, num_candidates = targets.shape
    start = [np.repeat(value[:, None], num_candidates, axis=1) for value in (
        simulator.x, simulator.y, simulator.pressure, simulator.time_elapsed_s)]
    first_steps = len(self._weights) if not config.second_levels else int(
        round(config.switch_after_s / config.rollout_step_s))
    state, scores = self._roll(start, targets, self._weights[:first_steps])
    if config.second_levels and first_steps < len(self._weights):
      # Each first target is followed by each of `second_levels` targets spread over the
      # range reachable then; a first target scores with its best follow-up.
      lowest, highest = simulator.reachable_pressures(
          simulator.time_elapsed_s + config.switch_after_s)
      levels = spread_levels(lowest, highest, config.second_levels)
      follow = np.repeat(levels[:, None, :], num_candidates, axis=1).reshape(count, -1)
      branched = [np.repeat(value, config.second_levels, axis=1) for value in state]
      _, later = self._roll(branched, follow, self._weights[first_steps:])
      scores = scores + later.reshape(count, num_candidates, -1).max(axis=2)
    best = scores.argmax(axis=1)
    rows = np.arange(count)
    held_score = scores[:, -1]
    switch = np.isnan(self.target) | (scores[rows, best] > held_score + config.switch_margin)
    target = np.where(switch, targets[rows, best], targets[:, -1])
    return target, targets, scores

  def _roll(self, state: Sequence[np.ndarray], targets: np.ndarray,
            weights: np.ndarray) -> tuple[Sequence[np.ndarray], np.ndarray]:
    """Rolls simplified balloons forward, one rollout step per weight.

    Args:
      state: (x, y, pressure, t), float arrays [B, M].
      targets: target pressures [B, M].
      weights: the discount weight of each rollout step.

    Returns:
      (the final state, the weighted sums of `reward.distance_reward` [B, M]).
    """
    config = self.config
    scores = np.zeros(targets.shape)
    for weight in weights:
      state = rollout_step(self.simulator, state, targets, config.rollout_step_s,
                           config.ascent_rate, config.descent_rate)
      scores += weight * reward.distance_reward(np.hypot(state[0], state[1]) / 1000.0)
    return state, scores


def rollout_step(simulator: Any, state: Sequence[np.ndarray], targets: np.ndarray,
                 step_s: float, ascent_rate: float, descent_rate: float,
                 float32: bool = False) -> tuple[np.ndarray, ...]:
  """One step of simplified balloons heading for target pressures in the estimated wind.

  The pressure moves towards the target at the ACS's typical rate; the balloon drifts in
  `simulator.estimated_wind` at the middle of the step's pressure change.

  Args:
    simulator: the `BalloonSimulator` whose wind estimate the balloons drift in.
    state: (x, y, pressure, t), float arrays [B, M].
    targets: target pressures [B, M].
    step_s: the step (s).
    ascent_rate: Pa/s the pressure falls at (UP).
    descent_rate: Pa/s the pressure rises at (DOWN).
    float32: the wind estimate's GP mean in float32 (`BalloonSimulator.estimated_wind`).

  Returns:
    The state after the step.
  """
  x, y, pressure, t = state
  moved = pressure + np.clip(targets - pressure, -ascent_rate * step_s, descent_rate * step_s)
  u, v = simulator.estimated_wind(x, y, 0.5 * (pressure + moved), t, float32)
  return x + u * step_s, y + v * step_s, moved, t + step_s


class PlannedSlab(VectorWrapper):
  """A balloon slab whose steps take its `Planner`'s actions, not the ones sent to it.

  The planner runs in the slab's own process, next to the simulator whose forecast and
  GP it plans with; the actions sent to `step` are ignored (the step infos'
  `effective_action` records what flew). Resets start the planner's episodes.

  Args:
    env: a `BalloonVectorEnv` (or a subclass, e.g. evaluation's `FlightPathSlab`).
    config: the `PlannerConfig`.
  """

  def __init__(self, env: Any, config: PlannerConfig = PlannerConfig()) -> None:
    super().__init__(env)
    self.planner = Planner(env.simulator, config)

  @property
  def simulator(self) -> Any:
    """The wrapped slab's `BalloonSimulator` (renderers read it)."""
    return self.env.simulator  # type: ignore[attr-defined]  # the slab is a BalloonVectorEnv

  def reset(self, *, seed: int | None = None,
            options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    observations, infos = self.env.reset(seed=seed, options=options)
    mask = (options or {}).get('reset_mask')
    self.planner.begin_episode(np.arange(self.num_envs) if mask is None
                               else np.flatnonzero(mask))
    return observations, infos

  def step(
      self, actions: Any,
  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    del actions  # The planner decides.
    return self.env.step(self.planner())
