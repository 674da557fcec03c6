"""How far the lookahead's shifted second stage is from one rolled in the wind; prints JSON.

    OPENBLAS_NUM_THREADS=1 python -m bench.second_stage_error [--balloons=32] [--first=200]

The two-stage features of the observation option `lookahead` (agents/env/balloon/
lookahead.py) find a plan's path after the switch in one of two ways: `shifted` (the
follow-up level's own rollout, moved to where the first stage is at the switch; the
`balloon_two_stage` config's) or `rolled` (rolled in the estimated wind from the first
stage's state at the switch). This flies the station seeker on suite seeds [first, first +
balloons) (outside `small_eval` by default) and, every `--interval_h` hours, computes both
blocks for the same state. It reports, over every computed level and horizon beyond the
switch, the mean absolute difference of the best plan's distance (km) and of its mean
distance term; and per balloon which level each would rank first (by the longest
horizon's mean distance term, then its distance): how often the two differ, and what the
shifted choice loses by the rolled features' own measure.
"""

import argparse
import json
import os
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import numpy as np  # noqa: E402

from agents.env.balloon import constants
from agents.env.balloon.controllers import baselines  # noqa: E402
from agents.env.balloon.env import BalloonVectorEnv  # noqa: E402
from agents.env.balloon.observation import lookahead
from agents.env.balloon.simulator import EVALUATION_SEED_BASE  # noqa: E402

SHIFTED = lookahead.Lookahead(switch_hours=3.0)  # the balloon_two_stage config's option
ROLLED = lookahead.Lookahead(switch_hours=3.0, second_stage='rolled')


def _two_stage(block):
  """The two-stage features [B, 361, H, 2] of a block, and which levels were computed."""
  per_level = block.reshape(len(block), constants.NUM_COLUMN_LEVELS, -1)
  first = 2 * len(SHIFTED.hours)
  return (per_level[..., first:].reshape(*per_level.shape[:2], -1, 2),
          per_level[..., 0] < 1.0)


def _kilometres(squashed):
  """Distance (km) from the squashed feature d / (d + 250 km)."""
  return constants.DISTANCE_SQUASH_KM * squashed / (1.0 - squashed)


def _first_choice(features, computed):
  """Per balloon, the level ranked first by the longest horizon (mean term, then distance)."""
  score = np.where(computed, features[..., -1, 1] - 1e-6 * features[..., -1, 0], -np.inf)
  return score.argmax(axis=1)


def measure(balloons, first, interval_steps):
  """Differences between the shifted and rolled features over one seeker flight each."""
  slab = BalloonVectorEnv(balloons)
  observations, _ = slab.reset(seed=[EVALUATION_SEED_BASE + first + i for i in range(balloons)])
  flying = np.ones(balloons, bool)
  distance, term, differs, loss = [], [], [], []
  rows = np.arange(balloons)
  for step in range(1, constants.EPISODE_STEPS + 1):
    observations, _, terminated, truncated, _ = slab.step(
        baselines.station_seeker(observations))
    flying &= ~(terminated | truncated)
    if step % interval_steps:
      continue
    shifted, computed = _two_stage(lookahead.lookahead_block(slab.simulator, SHIFTED))
    rolled, _ = _two_stage(lookahead.lookahead_block(slab.simulator, ROLLED))
    mask = computed & flying[:, None]
    distance.extend(np.abs(_kilometres(shifted[mask][..., 0])
                           - _kilometres(rolled[mask][..., 0])).ravel())
    term.extend(np.abs(shifted[..., 1] - rolled[..., 1])[mask].ravel())
    chosen, best = _first_choice(shifted, computed), _first_choice(rolled, computed)
    differs.extend((chosen != best)[flying])
    loss.extend((rolled[rows, best, -1, 1] - rolled[rows, chosen, -1, 1])[flying])
  slab.close()
  return distance, term, differs, loss


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--balloons', type=int, default=32)
  parser.add_argument('--first', type=int, default=200, help='first suite seed')
  parser.add_argument('--interval_h', type=float, default=6.0,
                      help='hours between the states compared')
  args = parser.parse_args(argv)
  start = time.perf_counter()
  interval_steps = max(1, round(args.interval_h * 3600.0 / constants.AGENT_STEP_S))
  distance, term, differs, loss = measure(args.balloons, args.first, interval_steps)
  print(json.dumps({
      'seeds': [args.first, args.first + args.balloons - 1], 'interval_h': args.interval_h,
      'horizons_h': list(SHIFTED.two_stage_hours), 'states': len(differs),
      'mean_abs_distance_km': round(float(np.mean(distance)), 2),
      'median_abs_distance_km': round(float(np.median(distance)), 2),
      'mean_abs_distance_term': round(float(np.mean(term)), 4),
      'first_choice_differs': round(float(np.mean(differs)), 3),
      'mean_term_lost_by_the_shifted_choice': round(float(np.mean(loss)), 4),
      'seconds': round(time.perf_counter() - start, 1),
  }))


if __name__ == '__main__':
  main()
