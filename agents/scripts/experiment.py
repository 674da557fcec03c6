"""Command line of the experiment manager: fit, optimize, plot, evaluate, compare, profile.

    python -m agents.scripts.experiment fit --config=pendulum --n_fit=4 --output_dir=DIR [--ray]
    python -m agents.scripts.experiment optimize --config=pendulum --n_trials=30 --output_dir=DIR
    python -m agents.scripts.experiment plot DIR [DIR ...] --tag=mean_score \
        [--phase=eval_suite --tag=twr50] [--reference='station seeker=0.313'] [--label=NAME ...]
    python -m agents.scripts.experiment evaluate DIR --suite=small_eval [--weights=best]
    python -m agents.scripts.experiment compare DIR_A DIR_B [--method=welch]
    python -m agents.scripts.experiment profile DIR --budget=20000

An experiment lives in `<output_dir>/<name>/` (the name defaults to the
config's). Running `fit` or `optimize` again with the same flags resumes it:
finished fits are kept, unfinished ones continue from their checkpoints, and
the search continues its study (`--new_study` starts another). Each command
shows progress and prints a summary table. Bad input: one line on stderr and
exit code 2; Ctrl-C or SIGTERM: every running fit saves a checkpoint, exit code
130. A fit whose experiment process dies (even by SIGKILL) saves and stops too.
"""

import logging
import os
import sys

from agents.configs import parse_override
from agents.run import tracking
from agents.training import command_line

_PROG = 'agents.scripts.experiment'


class UsageError(ValueError):
  """A flag's value is malformed."""


def _references(texts):
  """{label: value} of the plot's `--reference LABEL=VALUE` flags."""
  references = {}
  for text in texts:
    label, _, raw = text.rpartition('=')
    try:
      value = float(raw)
    except ValueError:
      value = None
    if value is None or not label.strip():
      raise UsageError(f'--reference {text!r} must look like LABEL=NUMBER.')
    references[label.strip()] = value
  return references


def _add_experiment_flags(parser):
  parser.add_argument('--config', required=True, help='A config name or a YAML config file.')
  parser.add_argument('--output_dir', default='experiments', help='Folder of experiments.')
  parser.add_argument('--name', default=None, help="The experiment's name (folder).")
  parser.add_argument('--n_fit', type=int, default=4, help='Independent fits (seeds).')
  parser.add_argument('--budget', type=int, default=None, help='Training steps per fit.')
  parser.add_argument('--seed', type=int, default=None, help='Root seed of the fits.')
  parser.add_argument('--set', dest='overrides', action='append', default=[],
                      metavar='KEY=VALUE', help='Override a config key, e.g. '
                      'algorithm.learning_rate=1e-3.')
  parser.add_argument('--max_workers', type=int, default=None, help='Fits running at once.')
  parser.add_argument('--ray', action='store_true', help='Run the fits as Ray tasks.')
  parser.add_argument('--ray_address', default=None, help='Ray cluster address.')
  parser.add_argument('--quiet', action='store_true', help='No progress bars.')
  parser.add_argument('--track', type=tracking.parse_names, default=None,
                      metavar='mlflow,wandb', help='Experiment trackers of every fit '
                      "(loop.track); each fit is the run '<name>-fit<k>' of the experiment.")


def parse_args(argv):
  """The parsed command line (`fit`, `compare` and their flags)."""
  parser = command_line.OneLineArgumentParser(
      prog=_PROG, description=__doc__.split('\n', maxsplit=1)[0])
  commands = parser.add_subparsers(dest='command', required=True,
                                   parser_class=command_line.OneLineArgumentParser)
  fit = commands.add_parser('fit', help='Train n_fit seeds of a config in parallel.')
  _add_experiment_flags(fit)
  optimize = commands.add_parser('optimize', help='Search hyperparameters with Optuna.')
  _add_experiment_flags(optimize)
  optimize.add_argument('--n_trials', type=int, default=20, help='Finished trials wanted.')
  optimize.add_argument('--timeout', type=float, default=None, help='Seconds; no new trial '
                        'starts after it.')
  optimize.add_argument('--trial_fits', type=int, default=2, help='Fits per trial.')
  optimize.add_argument('--sampler', default='tpe', help='tpe, random, grid or cmaes.')
  optimize.add_argument('--pruner', default='median', help='none, median or halving.')
  optimize.add_argument('--fit_fraction', type=float, default=0.25,
                        help='Trials report every this fraction of the budget.')
  optimize.add_argument('--n_workers', type=int, default=1, help='Trials running at once.')
  optimize.add_argument('--new_study', action='store_true',
                        help='Start a new study instead of continuing the last one.')
  plot = commands.add_parser('plot', help='Learning curves of experiments, with CI bands.')
  plot.add_argument('directories', nargs='+', help='Experiment directories.')
  plot.add_argument('--tag', default='mean_score')
  plot.add_argument('--phase', default='train')
  plot.add_argument('--smooth', type=int, default=1, help='Moving-average window (rows).')
  plot.add_argument('--ci', type=float, default=0.95, help='Band confidence level; 0: none.')
  plot.add_argument('--reference', action='append', default=[], metavar='LABEL=VALUE',
                    help='A dashed horizontal line, e.g. "station seeker=0.313"; repeatable.')
  plot.add_argument('--label', action='append', default=None, metavar='NAME',
                    help='A curve label, one per directory in order (default: the '
                    "experiments' names); repeatable.")
  plot.add_argument('--output', default=None, help='PNG path (default: in the first '
                    'experiment directory).')
  evaluate = commands.add_parser('evaluate', help='Evaluate every fit on a suite.')
  evaluate.add_argument('directory')
  evaluate.add_argument('--suite', default=None)
  evaluate.add_argument('--weights', default='newest', choices=('newest', 'best'),
                        help="newest: each fit's latest checkpoint; best: its best_policy/, "
                        'the weights that scored best on loop.select_suite.')
  compare = commands.add_parser('compare', help='Statistical comparison of experiments.')
  compare.add_argument('directories', nargs='+', help='Two or more experiment directories.')
  compare.add_argument('--method', default='permutation',
                       choices=('permutation', 'welch', 'tukey', 'adastop'))
  compare.add_argument('--tag', default='mean_score')
  compare.add_argument('--phase', default='train')
  compare.add_argument('--alpha', type=float, default=0.05)
  profile = commands.add_parser('profile', help='cProfile of a short fit of an experiment.')
  profile.add_argument('directory')
  profile.add_argument('--budget', type=int, default=None)
  return parser.parse_args(argv)


def _manager(args):
  from agents.experiment import ExperimentManager
  overrides = dict(parse_override(text) for text in args.overrides)
  if args.track is not None:
    overrides['loop.track'] = args.track
  return ExperimentManager.from_config(
      args.config, n_fit=args.n_fit, fit_budget=args.budget, output_dir=args.output_dir,
      parallelization='ray' if args.ray else 'process', max_workers=args.max_workers,
      seed=args.seed, overrides=overrides, name=args.name, ray_address=args.ray_address,
      quiet=args.quiet)


def _load(directory):
  from agents.experiment import ConfigExperiment
  return ConfigExperiment.load(directory)


def run(args):
  """Runs one parsed command; returns the exit code."""
  import pandas as pd
  pd.set_option('display.width', 200)
  if args.command == 'fit':
    manager = _manager(args)
    print(f'Experiment {manager.directory}: {manager.n_fit} fits of {manager.fit_budget} steps.')
    summary = manager.fit()
    failed = manager.failed_fits()
    if args.quiet:
      print(summary.to_string(index=False))
    return 1 if failed else 0
  if args.command == 'optimize':
    manager = _manager(args)
    manager.optimize_hyperparams(
        n_trials=args.n_trials, timeout=args.timeout, n_fit=args.trial_fits,
        sampler=args.sampler, pruner=args.pruner, fit_fraction=args.fit_fraction,
        continue_previous=not args.new_study, n_workers=args.n_workers)
    return 0
  if args.command == 'plot':
    if args.label is not None and len(args.label) != len(args.directories):
      raise UsageError(f'{len(args.directories)} directories but {len(args.label)} --label: '
                       'give one per directory, in order.')
    managers = [_load(directory) for directory in args.directories]
    path = args.output or os.path.join(managers[0].directory, f'{args.tag}.png')
    managers[0].plot_writer_data(args.tag, phase=args.phase, smooth=args.smooth, ci=args.ci,
                                 managers=managers[1:], path=path,
                                 references=_references(args.reference), labels=args.label)
    from agents.experiment import writer_data
    frame = pd.concat([manager.get_writer_data() for manager in managers])
    print(writer_data.final_values(frame, args.tag, args.phase).to_frame(
        f'final {args.tag}').to_string())
    print(f'Wrote {path}')
    return 0
  if args.command == 'evaluate':
    frame = _load(args.directory).eval_agents(suite=args.suite, weights=args.weights)
    print(frame.to_string(index=False))
    return 0
  if args.command == 'compare':
    from agents.experiment import comparison
    result = comparison.compare([_load(directory) for directory in args.directories],
                                method=args.method, tag=args.tag, phase=args.phase,
                                alpha=args.alpha)
    print(result.experiments.to_string(index=False))
    print()
    print(result.pairs.to_string(index=False))
    return 0
  if args.command == 'profile':
    manager = _load(args.directory)
    print(f'Profile written to {manager.generate_profile(args.budget)}')
    return 0
  raise AssertionError(args.command)


def main(argv=None):
  """Console entry point `agents-experiment`; returns the exit code."""
  args = parse_args(sys.argv[1:] if argv is None else argv)
  logging.basicConfig(level=logging.INFO, format='%(message)s')
  for name in ('tensorflow', 'absl'):
    logging.getLogger(name).setLevel(logging.WARNING)
  from agents.configs import ConfigError
  from agents.experiment import (
    ExperimentError,
    comparison,
    manifest,
    plots,
    search,
    search_distributions,
  )
  bad_input = (UsageError, ConfigError, ExperimentError,
               manifest.NotAnExperimentError, search.SearchError,
               search_distributions.SearchSpaceError, comparison.ComparisonError,
               plots.NothingToPlotError)
  try:
    return run(args)
  except bad_input as error:
    print(f'{_PROG}: error: {error}', file=sys.stderr)
    return 2
  except NotImplementedError as error:
    print(f'{_PROG}: not available: {error}', file=sys.stderr)
    return 2
  except KeyboardInterrupt:
    print(f'{_PROG}: interrupted; finished fits are kept and running ones saved a '
          'checkpoint. Run the same command again to resume.', file=sys.stderr)
    return 130


if __name__ == '__main__':
  sys.exit(main())
