"""Experiment manager benchmark: N fits in parallel against the same fits one after another.

    python -m bench.experiment_parallel [--config=pendulum] [--n_fit=4] [--steps=200000]
        [--workers=2] [--output_dir=DIR] [--order=sequential,parallel]

Runs the same experiment (same seeds) twice, in fresh directories: with
`max_workers=1` (one fit at a time) and with `max_workers=--workers`, and
prints JSON with both wall times, the speed-up, each fit's final training
score in both runs (they should match seed by seed: same seed, one
TensorFlow thread, same code path), the workers' CPU time, and the load
average before and after. On a machine that other jobs keep busy, the
speed-up says little: `cpu_per_wall` shows how many cores each run got.
Both runs use worker processes, so both pay the same start-up per fit.
"""

import argparse
import json
import os
import resource
import sys
import tempfile
import time


def _run(config, n_fit, steps, workers, output_dir, name, seed):
  from agents.experiment import ConfigExperiment
  experiment = ConfigExperiment(
      config, n_fit=n_fit, fit_budget=steps, output_dir=output_dir, max_workers=workers,
      seed=seed, name=name, quiet=True)
  start = time.perf_counter()
  before = resource.getrusage(resource.RUSAGE_CHILDREN)
  summary = experiment.fit()
  seconds = time.perf_counter() - start
  after = resource.getrusage(resource.RUSAGE_CHILDREN)
  cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
  # The workers' CPU time: with it, a parallel run on a busy machine shows whether
  # it lacked cores (CPU/wall near the core count) or work.
  return dict(workers=workers, wall_seconds=round(seconds, 1), worker_cpu_seconds=round(cpu, 1),
              cpu_per_wall=round(cpu / seconds, 2),
              status=list(summary['status']), seeds=[int(s) for s in summary['seed']],
              final_scores=[None if s != s else round(float(s), 3)
                            for s in experiment.final_scores()])


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--config', default='pendulum')
  parser.add_argument('--n_fit', type=int, default=4)
  parser.add_argument('--steps', type=int, default=200_000)
  parser.add_argument('--workers', type=int, default=os.cpu_count() or 2)
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--order', default='sequential,parallel')
  parser.add_argument('--output_dir', default=None)
  args = parser.parse_args(argv)
  output_dir = args.output_dir or tempfile.mkdtemp(prefix='bench-experiment-')
  result = dict(config=args.config, n_fit=args.n_fit, steps=args.steps, cpus=os.cpu_count(),
                load_before=os.getloadavg())
  for order in args.order.split(','):
    workers = 1 if order == 'sequential' else args.workers
    result[order] = _run(args.config, args.n_fit, args.steps, workers, output_dir,
                         f'{order}-{args.config}', args.seed)
    result[f'load_after_{order}'] = os.getloadavg()
  if 'sequential' in result and 'parallel' in result:
    result['speedup'] = round(result['sequential']['wall_seconds'] /
                              result['parallel']['wall_seconds'], 2)
    result['same_final_scores'] = (result['sequential']['final_scores'] ==
                                   result['parallel']['final_scores'])
  json.dump(result, sys.stdout, indent=2)
  print()


if __name__ == '__main__':
  main()
