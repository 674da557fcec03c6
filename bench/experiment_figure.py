"""The experiment figure of docs/experiments.md: a learning curve over N fits, two configs.

    python -m bench.experiment_figure [--config=pendulum] [--n_fit=4] [--steps=200000]
        [--output_dir=DIR] [--reuse_a=EXPERIMENT_DIR] [--figure=PNG]

Trains (or resumes, or reuses with `--reuse_a`) two experiments of the same
config and seeds, `algorithm.policy_objective` = kl_penalty (the default) and
clipped, draws both mean training curves with 95 % bands on one axes, and
prints JSON with the statistics table of every method (`comparison.py`) and
the load average.
"""

import argparse
import json
import os
import sys
import tempfile


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--config', default='pendulum')
  parser.add_argument('--n_fit', type=int, default=4)
  parser.add_argument('--steps', type=int, default=200_000)
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--output_dir', default=None)
  parser.add_argument('--reuse_a', default=None, help='An existing kl_penalty experiment.')
  parser.add_argument('--figure', default='docs/images/experiment_pendulum.png')
  args = parser.parse_args(argv)
  import pandas as pd

  from agents.experiment import ConfigExperiment, comparison, plots
  output_dir = args.output_dir or tempfile.mkdtemp(prefix='bench-figure-')
  load_before = os.getloadavg()
  experiments = {}
  for objective in ('kl_penalty', 'clipped'):
    if objective == 'kl_penalty' and args.reuse_a:
      experiment = ConfigExperiment.load(args.reuse_a, quiet=True)
    else:
      experiment = ConfigExperiment(
          args.config, n_fit=args.n_fit, fit_budget=args.steps, output_dir=output_dir,
          seed=args.seed, name=objective, quiet=True,
          overrides={'algorithm.policy_objective': objective})
      experiment.fit()
    experiments[objective] = experiment
  frames = [experiment.get_writer_data().assign(name=objective)
            for objective, experiment in experiments.items()]
  plots.plot_writer_data(frames, 'mean_score', smooth=3, ci=0.95, path=args.figure,
                         title=f'{args.config}: training return, mean of {args.n_fit} fits, '
                               '95 % CI')
  scores = {objective: experiment.final_scores()
            for objective, experiment in experiments.items()}
  tables = {}
  for method in comparison.METHODS:
    result = comparison.compare_scores(scores, method)
    tables[method] = json.loads(result.pairs.to_json(orient='records'))
  tables['experiments'] = json.loads(result.experiments.to_json(orient='records'))
  print(pd.concat([comparison.compare_scores(scores, m).pairs for m in comparison.METHODS])
        .to_string(index=False), file=sys.stderr)
  json.dump(dict(config=args.config, n_fit=args.n_fit, steps=args.steps,
                 scores={k: [float(x) for x in v] for k, v in scores.items()},
                 comparison=tables, figure=args.figure, load_before=load_before,
                 load_after=os.getloadavg()), sys.stdout, indent=2)
  print()


if __name__ == '__main__':
  main()
