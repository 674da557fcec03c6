"""Times one agent on one evaluation suite with local workers; prints JSON.

    OPENBLAS_NUM_THREADS=1 python -m bench.evaluation_suite --agent=station_seeker \
        --suite=big_eval --output_dir=/tmp/big_ss [--workers=2] [--slab_size=1024]

The output directory keeps the per-seed results (the station seeker's big_eval is what
`python -m agents.evaluation.strata` ranks). The JSON has the wall time, balloon steps/s
and the 1-minute load average sampled every 10 s during the run (the machine is shared).
"""

import argparse
import json
import os
import threading
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')

from agents import evaluation  # noqa: E402
from agents.evaluation import runner  # noqa: E402


def _sample_load(samples, stop):
  while not stop.wait(10.0):
    samples.append(os.getloadavg()[0])


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--agent', default='station_seeker')
  parser.add_argument('--suite', default='big_eval')
  parser.add_argument('--output_dir', required=True)
  parser.add_argument('--workers', type=int, default=2)
  parser.add_argument('--slab_size', type=int, default=runner.DEFAULT_SLAB_SIZE)
  parser.add_argument('--ray', action='store_true')
  parser.add_argument('--num_shards', type=int, default=None)
  parser.add_argument('--overwrite', action='store_true')
  args = parser.parse_args(argv)
  suite = evaluation.get_suite(args.suite)
  samples, stop = [os.getloadavg()[0]], threading.Event()
  sampler = threading.Thread(target=_sample_load, args=(samples, stop), daemon=True)
  sampler.start()
  start = time.perf_counter()
  outcome = evaluation.evaluate(
      args.agent, suite, args.output_dir, num_shards=args.num_shards or (None if args.ray else 1),
      workers=args.workers, use_ray=args.ray, slab_size=args.slab_size,
      overwrite=args.overwrite, progress=False, artifacts=False)
  seconds = time.perf_counter() - start
  stop.set()
  steps = sum(result.final_timestep for result in outcome['results'])
  summary = outcome['summary'] or {}
  print(json.dumps({
      'agent': args.agent, 'suite': suite.name, 'seeds': len(outcome['results']),
      'engine': 'ray' if args.ray else f'local, {args.workers} workers',
      'slab_size': args.slab_size, 'seconds': round(seconds, 1),
      'balloon_steps_per_s': round(steps / seconds), 'twr50_mean': summary.get(
          'twr50', {}).get('mean'),
      'load_1min': {'start': samples[0], 'max': max(samples), 'mean': round(
          sum(samples) / len(samples), 2)}, 'cpus': os.cpu_count()}))


if __name__ == '__main__':
  main()
