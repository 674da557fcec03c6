"""Ray against local worker processes on the same suite, interleaved; prints JSON.

    OPENBLAS_NUM_THREADS=1 python -m bench.evaluation_ray [--suite=small_eval] [--rounds=2]

Local: one process steering 2 worker processes (one slab each). Ray: a local instance with
2 CPUs (started once, before timing) running 2 shards as tasks, each task flying its slab
in its own process. The same shard code (`runner.fly`) runs both. The target is
ray / local <= 1.2.
"""

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')

from agents import evaluation  # noqa: E402
from agents.evaluation import ray_runner  # noqa: E402


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--suite', default='small_eval')
  parser.add_argument('--agent', default='station_seeker')
  parser.add_argument('--rounds', type=int, default=2)
  args = parser.parse_args(argv)
  suite = evaluation.get_suite(args.suite)
  start = time.perf_counter()
  ray = ray_runner.init(num_cpus=2)
  ray_start_s = time.perf_counter() - start
  times = {'local': [], 'ray': []}
  loads = []
  for _ in range(args.rounds):
    for engine in ('local', 'ray'):
      output_dir = tempfile.mkdtemp(prefix=f'eval-{engine}-')
      loads.append(os.getloadavg()[0])
      start = time.perf_counter()
      evaluation.evaluate(args.agent, suite, output_dir, num_shards=2 if engine == 'ray' else 1,
                          workers=2, use_ray=engine == 'ray', progress=False, artifacts=False)
      times[engine].append(time.perf_counter() - start)
  ray.shutdown()
  local, on_ray = min(times['local']), min(times['ray'])
  print(json.dumps({'suite': suite.name, 'agent': args.agent, 'rounds': args.rounds,
                    'local_s': [round(t, 1) for t in times['local']],
                    'ray_s': [round(t, 1) for t in times['ray']],
                    'ray_over_local_best': round(on_ray / local, 3),
                    'ray_init_s': round(ray_start_s, 1),
                    'load_1min': [round(value, 2) for value in loads]}))


if __name__ == '__main__':
  main()
