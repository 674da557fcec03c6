"""BatchEnv's throughput ratios against AsyncVectorEnv, before and after a change.

Runs `bench/env_throughput.py` (this tree's copy, so both sides run the same
benchmark code) alternately against two source trees, for example a pristine
checkout of main and this branch, in ABBA order so slow drifts in the machine's
load cancel out. Each run measures its own AsyncVectorEnv reference, so the
`vs_async` ratios of the two trees are comparable even on a shared machine.

    python bench/env_throughput_compare.py --before /work/wt/baseline [--after .]
        [--rounds 4] [--bench-rounds 3] [--methods async,batch_env,batch_env_k]
        [--steps 1000] [--heavy-steps 150]

On a busy machine, many short rounds (`--bench-rounds 30 --steps 100
--heavy-steps 20`) make `best_vs_async` the ratio of the least disturbed windows.

Prints one JSON object: for each environment, method and metric (`vs_async`, the
wall-clock throughput ratio of the median rounds, `best_vs_async`, that of the best
rounds, which other jobs can only slow, and `cpu_vs_async`, the ratio of CPU time
per step, which a busy machine disturbs less), the ratio of every run of each tree, their
medians, the after/before ratio of the medians, and the spread (min and max) of
each side; with the load average of every run.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run_once(script, tree, bench_args):
  """Runs the throughput benchmark with `tree` providing the `agents` package."""
  environment = dict(os.environ, PYTHONPATH=os.path.abspath(tree), OPENBLAS_NUM_THREADS='1',
                     OMP_NUM_THREADS='1')
  output = subprocess.run([sys.executable, script, *bench_args], capture_output=True,
                          text=True, check=True, env=environment, cwd=tree)
  return json.loads(output.stdout)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--before', required=True, help='Source tree of the old code.')
  parser.add_argument('--after', default=os.path.dirname(HERE), help='Source tree of the new code.')
  parser.add_argument('--rounds', type=int, default=4, help='ABBA rounds (runs per tree).')
  parser.add_argument('--bench-rounds', type=int, default=3,
                      help='Interleaved rounds inside each benchmark run.')
  parser.add_argument('--methods', default='async,batch_env,batch_env_k')
  parser.add_argument('--envs', default='cartpole,heavy')
  parser.add_argument('--steps', type=int, default=1000, help='Batch steps per round, CartPole.')
  parser.add_argument('--heavy-steps', type=int, default=150,
                      help='Batch steps per round, heavy environment.')
  args = parser.parse_args(argv)
  bench_args = ['--rounds', str(args.bench_rounds), '--methods', args.methods,
                '--envs', args.envs, '--steps', str(args.steps),
                '--heavy-steps', str(args.heavy_steps)]
  trees = {'before': args.before, 'after': args.after}
  ratios = {}  # (env, method) -> side -> [vs_async of each run].
  loads = {side: [] for side in trees}
  with tempfile.TemporaryDirectory() as directory:
    # A copy outside both trees, so the script's own path does not pick the package.
    script = shutil.copy(os.path.join(HERE, 'env_throughput.py'), directory)
    for round_number in range(args.rounds):
      order = ['before', 'after'] if round_number % 2 == 0 else ['after', 'before']
      for side in order:
        report = run_once(script, trees[side], bench_args)
        loads[side].append(report['load_average_1min'])
        for result in report['results']:
          for method, row in result['rows'].items():
            if method == 'async':
              continue
            for metric in ('vs_async', 'best_vs_async', 'cpu_vs_async'):
              entry = ratios.setdefault(f"{result['env']} {method} {metric}",
                                        {'before': [], 'after': []})
              entry[side].append(row[metric])
  summary = {}
  for key, sides in ratios.items():
    before, after = statistics.median(sides['before']), statistics.median(sides['after'])
    summary[key] = {
        'before': sides['before'], 'after': sides['after'],
        'before_median': before, 'after_median': after,
        'after_over_before': round(after / before, 3),
        'before_spread': [min(sides['before']), max(sides['before'])],
        'after_spread': [min(sides['after']), max(sides['after'])],
    }
  print(json.dumps({'benchmark': 'env_throughput_compare', 'trees': trees,
                    'rounds': args.rounds, 'bench_args': bench_args,
                    'load_average_1min': loads, 'cpu_count': os.cpu_count(),
                    'results': summary}, indent=1))


if __name__ == '__main__':
  main()
