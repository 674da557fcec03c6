"""TWR50 of the baseline controllers (and a trained run) on an evaluation suite; prints JSON.

    OPENBLAS_NUM_THREADS=1 python -m bench.baselines [--suite=small_eval]
        [--agents=station_seeker,random_walk,random] [--run_dir=RUN_DIR] [--workers=2]

Each agent is flown with `agents.evaluation` (slabs of balloons in worker processes, the
policy on the whole batch), into `--output_root/<agent>` so that
`python -m agents.scripts.evaluate compare ...` can pair them afterwards. One JSON line
per agent, then one with all of them: mean TWR50 with its 95 % bootstrap interval, IQM
with its interval, median, BLE's TWR50, failures, wall time and the load average.
TWR50 is the fraction of the episode's 960 steps within 50 km (a balloon that dies early
counts as outside afterwards); BLE's divides by the steps flown.
"""

import argparse
import json
import os
import tempfile
import time

# One BLAS thread per process: OpenBLAS threads spin-wait and, on a busy machine, make the
# GP's small batched matmuls many times slower; parallelism comes from slab processes.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')

from agents import evaluation  # noqa: E402


def _row(summary, seconds, load):
  twr, ble = summary['twr50'], summary['time_within_radius']
  return {
      'twr50_mean': round(twr['mean'], 4), 'twr50_ci95': [round(v, 4) for v in twr['mean_ci95']],
      'twr50_iqm': round(twr['iqm'], 4), 'twr50_iqm_ci95': [round(v, 4) for v in twr['iqm_ci95']],
      'twr50_median': round(twr['median'], 4), 'ble_twr50_mean': round(ble['mean'], 4),
      'mean_reward': round(summary['cumulative_reward']['mean'], 2),
      'failures': summary['failures']['any'], 'seconds': round(seconds, 1),
      'load_1min': [round(value, 2) for value in load],
  }


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--suite', default='small_eval')
  parser.add_argument('--seeds', type=int, default=None,
                      help='instead of --suite: suite seeds 0 .. N-1 (a custom suite)')
  parser.add_argument('--agents', default='station_seeker,random_walk,random')
  parser.add_argument('--run_dir', default=None,
                      help="also fly this trained balloon run's deterministic policy")
  parser.add_argument('--workers', type=int, default=2)
  parser.add_argument('--output_root', default=None, help='default: a temporary directory')
  args = parser.parse_args(argv)
  suite = evaluation.get_suite(
      args.suite if args.seeds is None else f'custom:seeds=0-{args.seeds - 1}')
  root = args.output_root or tempfile.mkdtemp(prefix='baselines-')
  agents = args.agents.split(',') + ([f'run:{args.run_dir}'] if args.run_dir else [])
  rows = {}
  for agent in agents:
    name = 'trained' if agent.startswith('run:') else agent
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    outcome = evaluation.evaluate(agent, suite, os.path.join(root, name), workers=args.workers,
                                  overwrite=True, progress=False, artifacts=False)
    seconds = time.perf_counter() - start
    rows[name] = _row(outcome['summary'], seconds, (load_before, os.getloadavg()[0]))
    print(json.dumps({'agent': name, **rows[name]}), flush=True)
  print(json.dumps({'suite': suite.name, 'seeds': len(suite.seeds),
                    'episode_length': suite.episode_length, 'wind': suite.wind,
                    'output_root': root, 'results': rows}))


if __name__ == '__main__':
  main()
