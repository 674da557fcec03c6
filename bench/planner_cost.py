"""The cost of the model-predictive baseline `mpc` (planner.py) per decision; prints JSON.

    OPENBLAS_NUM_THREADS=1 python -m bench.planner_cost [--balloons=50] [--steps=100]
        [--suite=tiny_eval] [--workers=2]

Two measurements, one JSON line each:

- `decision`: one slab of `--balloons` balloons in this process flies `--steps` steps
  with the planner deciding every step; the planner's own time (`Planner.__call__`) and
  the simulator's step are timed apart: ms per slab step and per balloon-decision, for
  the planner and for the simulator beside it. CPU time of this process, so a loaded
  machine inflates it less than wall time would.
- `evaluation`: `agents.evaluation.evaluate('mpc', suite)` end to end (slabs in
  `--workers` processes), wall seconds, with `station_seeker` flown the same way for
  scale; `--suite=none` skips it. `small_eval` is the one the 30-minute budget is for.
"""

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')

import numpy as np  # noqa: E402

from agents.env.balloon.controllers import planner as planner_lib  # noqa: E402
from agents.env.balloon.env import BalloonVectorEnv  # noqa: E402
from agents.env.balloon.simulator import EVALUATION_SEED_BASE  # noqa: E402


def decision_cost(balloons, steps, config=None):
  """CPU ms per slab step and per balloon-decision: the planner's and the simulator's."""
  config = config or planner_lib.PlannerConfig()
  slab = BalloonVectorEnv(balloons)
  slab.reset(seed=[EVALUATION_SEED_BASE + 10_000 + row for row in range(balloons)])
  planner = planner_lib.Planner(slab.simulator, config)
  planner.begin_episode(np.arange(balloons))
  planner()  # compiles the kernels
  planning = stepping = 0.0
  for _ in range(steps):
    start = time.process_time()
    actions = planner()
    middle = time.process_time()
    slab.step(actions)
    planning += middle - start
    stepping += time.process_time() - middle
  per_step = 1000.0 * planning / steps
  return {'measure': 'decision', 'balloons': balloons, 'steps': steps,
          'config': {key: value for key, value in vars(config).items()},
          'planner_ms_per_slab_step': round(per_step, 3),
          'planner_ms_per_balloon_decision': round(per_step / balloons, 4),
          'simulator_ms_per_slab_step': round(1000.0 * stepping / steps, 3),
          'simulator_ms_per_balloon_step': round(1000.0 * stepping / steps / balloons, 4),
          'load_1min': round(os.getloadavg()[0], 2)}


def evaluation_time(suite_name, workers):
  """Wall seconds of `evaluate` for `mpc` and `station_seeker` on a suite, with TWR50."""
  from agents import evaluation
  suite = evaluation.get_suite(suite_name)
  root = tempfile.mkdtemp(prefix='planner-cost-')
  row = {'measure': 'evaluation', 'suite': suite.name, 'seeds': len(suite.seeds),
         'workers': workers}
  for agent in ('mpc', 'station_seeker'):
    load = os.getloadavg()[0]
    start = time.perf_counter()
    outcome = evaluation.evaluate(agent, suite, os.path.join(root, agent), workers=workers,
                                  overwrite=True, progress=False, artifacts=False)
    row[agent] = {'seconds': round(time.perf_counter() - start, 1),
                  'twr50_mean': round(outcome['summary']['twr50']['mean'], 4),
                  'load_1min': [round(load, 2), round(os.getloadavg()[0], 2)]}
  return row


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--balloons', type=int, default=50)
  parser.add_argument('--steps', type=int, default=100)
  parser.add_argument('--suite', default='tiny_eval', help="a suite name, or 'none'")
  parser.add_argument('--workers', type=int, default=2)
  args = parser.parse_args(argv)
  print(json.dumps(decision_cost(args.balloons, args.steps)), flush=True)
  if args.suite != 'none':
    print(json.dumps(evaluation_time(args.suite, args.workers)), flush=True)


if __name__ == '__main__':
  main()
