"""Hyperparameter search benchmark: TPE with the median pruner on Pendulum, fixed budget.

    python -m bench.experiment_search [--config=pendulum] [--n_trials=20] [--steps=50000]
        [--trial_fits=2] [--fit_fraction=0.25] [--parallelization=inline] [--output_dir=DIR]

Runs an Optuna search (TPE, median pruner) of `--n_trials` trials, each of
`--trial_fits` fits of `--steps` steps reported every `--fit_fraction` of the
budget, then trains the default config with the same fits and budget, and
prints JSON: the best score found and its values, the default config's score,
the fraction of trials pruned, the steps spent against a search without
pruning, the wall time and the load average.
"""

import argparse
import json
import os
import sys
import tempfile
import time


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--config', default='pendulum')
  parser.add_argument('--n_trials', type=int, default=20)
  parser.add_argument('--steps', type=int, default=50_000)
  parser.add_argument('--trial_fits', type=int, default=2)
  parser.add_argument('--fit_fraction', type=float, default=0.25)
  parser.add_argument('--parallelization', default='inline')
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--output_dir', default=None)
  args = parser.parse_args(argv)
  import optuna

  from agents.experiment import ConfigExperiment, search
  output_dir = args.output_dir or tempfile.mkdtemp(prefix='bench-search-')
  load_before = os.getloadavg()
  start = time.perf_counter()
  default = ConfigExperiment(
      args.config, n_fit=args.trial_fits, fit_budget=args.steps, output_dir=output_dir,
      seed=args.seed, name=f'default-{args.config}', parallelization=args.parallelization,
      quiet=True)
  default.fit()
  default_seconds = time.perf_counter() - start
  experiment = ConfigExperiment(
      args.config, n_fit=args.trial_fits, fit_budget=args.steps, output_dir=output_dir,
      seed=args.seed, name=f'search-{args.config}', parallelization=args.parallelization,
      quiet=True)
  start = time.perf_counter()
  best = experiment.optimize_hyperparams(
      n_trials=args.n_trials, n_fit=args.trial_fits, sampler='tpe', pruner='median',
      fit_fraction=args.fit_fraction, continue_previous=True)
  search_seconds = time.perf_counter() - start
  study = optuna.load_study(study_name=experiment.study['study_name'],
                            storage=search.storage_url(experiment.directory))
  spent = sum(max(t.intermediate_values) if t.intermediate_values else 0 for t in study.trials)
  result = dict(
      config=args.config, n_trials=args.n_trials, steps_per_fit=args.steps,
      trial_fits=args.trial_fits, fit_fraction=args.fit_fraction,
      best_score=experiment.study['best_value'], best_params=best,
      default_score=float(default.final_scores().mean()),
      default_scores=[float(s) for s in default.final_scores()],
      trials=experiment.study['trials'], pruned=experiment.study['pruned'],
      failed=experiment.study['failed'],
      fraction_pruned=round(experiment.study['pruned'] / max(1, experiment.study['trials']), 3),
      steps_spent_fraction_of_unpruned=round(spent / (args.steps * len(study.trials)), 3),
      search_wall_seconds=round(search_seconds, 1),
      default_wall_seconds=round(default_seconds, 1),
      load_before=load_before, load_after=os.getloadavg(), directory=experiment.directory)
  json.dump(result, sys.stdout, indent=2)
  print()


if __name__ == '__main__':
  main()
