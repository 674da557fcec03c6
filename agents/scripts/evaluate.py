"""Evaluates agents on suites of seeded episodes (BLE's eval), for any Gymnasium environment.

    python -m agents.scripts.evaluate --agent=random|station_seeker|random_walk|mpc|
        perciatelli44[:PATH]|run:<RUN_DIR>|savedmodel:<DIR>|<module:factory>
        --suite=small_eval --output_dir=DIR
        [--env=ID] [--num_shards=K --shard_index=i] [--workers=N] [--ray | --ray_address=ADDR]
        [--flight_paths] [--checkpoint=NAME | --average_last=K] [--overwrite] [--nogallery]
        [--record]
    python -m agents.scripts.evaluate combine DIR [--nogallery] [--record]
    python -m agents.scripts.evaluate compare DIR_A DIR_B ... [--output_dir=DIR]
    python -m agents.scripts.evaluate groups --group=NAME=MEMBER[,MEMBER...] ... [--metric=M]
    python -m agents.scripts.evaluate ensemble --run=RUN_DIR --run=RUN_DIR ...
        [--suite=small_eval] [--output_dir=DIR]

`groups` pairs groups of fits seed by seed, each group the per-seed mean of its members
(evaluation folders, or `TABLE.csv:COLUMN` columns of a per-seed table;
`agents.evaluation.fit_groups`); `ensemble` flies several fits as one agent, their action
probabilities averaged (`agents.evaluation.ensemble`).

A `savedmodel:<DIR>` agent flies the environment its record (`policy.yaml`, written by
`agents.scripts.export`) names, and the line before the table says what it is; with
`--record` a complete suite's results are added to that record and its model card.
The library is `agents.evaluation`; this is its command line. Bad input (an unknown
agent or suite, a run without a checkpoint, a shard index out of range, an output
directory holding another evaluation, a factory that does not import or returns the
wrong shape) prints one line and exits with code 2.
"""

import os
import shlex
import sys

from agents.training.command_line import OneLineArgumentParser as _Parser

_SUBCOMMANDS = ('combine', 'compare', 'groups', 'ensemble')


def _parser(command):
  if command == 'combine':
    parser = _Parser(prog='agents.scripts.evaluate combine',
                     description='Merges shard files into results.json and summary.json.')
    parser.add_argument('output_dir')
    parser.add_argument('--nogallery', dest='gallery', action='store_false',
                        help='do not re-fly the best, median and worst seeds for pictures')
    parser.add_argument('--record', action='store_true',
                        help="the shards flew savedmodel:<DIR>: add the combined results to "
                        "the policy's record (policy.yaml) and model card")
    return parser
  if command == 'compare':
    parser = _Parser(prog='agents.scripts.evaluate compare',
                     description='Paired statistics of agents on the same seeds.')
    parser.add_argument('directories', nargs='+')
    parser.add_argument('--output_dir', default=None,
                        help='where comparison.json and comparison.png go (default: the first '
                        'directory)')
    parser.add_argument('--metric', default=None,
                        help="a per-seed field (default: the environment's headline metric, "
                        'the balloon: twr50, else cumulative_reward)')
    return parser
  if command in ('groups', 'ensemble'):
    return _study_parser(command)
  parser = _Parser(prog='agents.scripts.evaluate', description=__doc__.split('\n', maxsplit=1)[0])
  parser.add_argument('--agent', required=True,
                      help="random, an environment's baseline (the balloon's station_seeker, "
                      'random_walk, mpc, perciatelli44[:PATH]), run:<RUN_DIR>, '
                      'savedmodel:<DIR> or <module>:<factory>')
  parser.add_argument('--env', default=None,
                      help="the Gymnasium id flown (default: the run's environment, the "
                      "baseline's, else the one with an evaluation plug-in, the balloon)")
  parser.add_argument('--suite', default='small_eval',
                      help="micro_eval, tiny_eval, small_eval, medium_eval, big_eval, the "
                      "environment's own (the balloon: *_strata, all_strata), with options "
                      'after a colon (small_eval:wind=procedural), or '
                      'custom:seeds=A-B,episode_length=N[,option=value] (the balloon: '
                      "wind=generative|procedural|static; default: a trained agent's own "
                      'wind, else generative)')
  parser.add_argument('--output_dir', required=True)
  parser.add_argument('--num_shards', type=int, default=None)
  parser.add_argument('--shard_index', type=int, default=None)
  parser.add_argument('--workers', type=int, default=2,
                      help='worker processes, one slab of environments each (0: in-process)')
  parser.add_argument('--slab_size', type=int, default=None,
                      help='environments per slab at most (default: '
                      'agents.evaluation.runner.DEFAULT_SLAB_SIZE)')
  parser.add_argument('--ray', action='store_true', help='run the shards as Ray tasks')
  parser.add_argument('--ray_address', default=None, help='Ray cluster address')
  checkpoint = parser.add_mutually_exclusive_group()
  checkpoint.add_argument('--checkpoint', default=None, help='run:<RUN_DIR> checkpoint name')
  checkpoint.add_argument('--average_last', type=int, default=None, metavar='K',
                          help='run:<RUN_DIR> only: fly the mean weights of its last K '
                          'checkpoints (written to RUN_DIR/averaged/; '
                          'agents.training.weight_averaging)')
  parser.add_argument('--flight_paths', action='store_true')
  parser.add_argument('--overwrite', action='store_true',
                      help='replace results of another evaluation in --output_dir')
  parser.add_argument('--nogallery', dest='gallery', action='store_false')
  parser.add_argument('--quiet', action='store_true', help='no progress bar')
  parser.add_argument('--record', action='store_true',
                      help="savedmodel:<DIR> only: add the results to the policy's record "
                      '(policy.yaml) and model card')
  return parser


def _study_parser(command):
  """The parsers of `groups` and `ensemble`, the statistics of several fits."""
  if command == 'groups':
    parser = _Parser(prog='agents.scripts.evaluate groups',
                     description='Paired statistics of groups of fits, each group the per-seed '
                     'mean of its members; the first group minus each other one.')
    parser.add_argument('--group', action='append', required=True,
                        help='NAME=MEMBER[,MEMBER...]: evaluation folders with results.json, '
                        'or TABLE.csv:COLUMN columns of a per-seed table (repeat)')
    parser.add_argument('--metric', default='twr50',
                        help="the evaluation folders' per-seed field; a table's column is "
                        'taken as it is')
    return parser
  parser = _Parser(prog='agents.scripts.evaluate ensemble',
                   description='Flies several fits as one agent: their action probabilities '
                   'averaged, then the mode.')
  parser.add_argument('--run', action='append', required=True, help='a run directory (repeat)')
  parser.add_argument('--suite', default='small_eval')
  parser.add_argument('--output_dir', default=None,
                      help='where the per-seed results go (results.json), to pair them later')
  return parser


def _table(rows):
  """A plain-text table of summaries: the headline metric, then the environment's columns."""
  from agents.evaluation import environments
  environment = environments.get(rows[0]['env_id'])
  label = environment.metric_label
  extra = environment.table_columns
  lines = [f'{"agent":<28} {"suite":<14} {"seeds":>6}  {label + " mean [95% CI]":<24} '
           f'{"IQM [95% CI]":<24} {"median":>6}' + ''.join(
               f'  {header:>{max(len(header), 8)}}' for header, _, _ in extra)]
  for row in rows:
    stats = row[row['table_metric']]
    lines.append(
        f'{row["agent"][:28]:<28} {row["suite"]["name"][:14]:<14} {row["num_seeds"]:>6}  '
        + f'{_interval(stats["mean"], stats["mean_ci95"]):<24} '
        + f'{_interval(stats["iqm"], stats["iqm_ci95"]):<24} {_number(stats["median"]):>6}'
        + ''.join(f'  {_number(row[name][statistic]):>{max(len(header), 8)}}'
                  for header, name, statistic in extra))
  lines.append(environment.table_note)
  return '\n'.join(lines)


def _number(value):
  """An int as it is, a float with three decimals."""
  return str(value) if isinstance(value, int) else f'{value:.3f}'


def _interval(point, interval):
  return f'{_number(point)} [{_number(interval[0])}, {_number(interval[1])}]'


def _announce_saved_model(args, verb='Flying'):
  """Prints what a savedmodel: agent is (from its record); checks --record can be kept.

  Args:
    args: parsed flags with `agent`, `env` and `record`.
    verb: what is done with the policy, for the line that names it.

  Returns:
    The folder whose record takes the results (with --record), else None.
  """
  from agents.evaluation import EvaluationError, policies
  from agents.run import policy_record
  kind, path = policies.split_spec(args.agent)
  if kind != 'savedmodel':
    if args.record:
      raise EvaluationError(f'--record adds results to an exported policy\'s record; '
                            f'--agent {args.agent} is not savedmodel:<DIR>.')
    return None
  record = policies.saved_model_record(path)
  if record is None:
    print(f'{path} has no {policy_record.FILENAME} (exported before policy records); flying '
          f'it on {policies.resolve_env_id(args.agent, args.env)}.')
    if args.record:
      raise EvaluationError(f'--record: {path} has no {policy_record.FILENAME} to add the '
                            'results to; export the policy again with agents.scripts.export.')
    return None
  print(f'{verb} {policy_record.describe(record)}.')
  if args.record and policy_record.weights_digest(path) != record['weights_sha256']:
    raise EvaluationError(f'--record: {policy_record.path_in(path)} describes other weights '
                          f'than {path} holds (weights_sha256); export the policy again.')
  return path if args.record else None


def _run(args):
  from agents import evaluation
  from agents.evaluation import runner
  if args.shard_index is not None and args.num_shards is None:
    raise evaluation.EvaluationError('--shard_index needs --num_shards.')
  recorded = _announce_saved_model(args)
  if args.average_last is not None:
    args.checkpoint = _average(args.agent, args.average_last)
  outcome = evaluation.evaluate(
      args.agent, args.suite, args.output_dir,
      num_shards=args.num_shards if args.num_shards is not None else (
          None if (args.ray or args.ray_address) else 1),
      shard_index=args.shard_index, workers=args.workers,
      use_ray=args.ray, ray_address=args.ray_address,
      slab_size=runner.DEFAULT_SLAB_SIZE if args.slab_size is None else args.slab_size,
      flight_paths=args.flight_paths, checkpoint=args.checkpoint, overwrite=args.overwrite,
      progress=not args.quiet, artifacts=True, gallery=args.gallery, env_id=args.env)
  if outcome['complete']:
    print(_table([outcome['summary']]))
    print(f'Wrote {os.path.join(args.output_dir, "summary.json")}.')
    if recorded:
      _record(recorded, outcome['summary'], args.command_line)
  else:
    if recorded:
      print('--record: the suite is not complete in this run, so the record is unchanged.')
    print(f'Shard written to {args.output_dir}; run the other shards, then '
          f'`python -m agents.scripts.evaluate combine {args.output_dir}`.')


def _average(agent, last):
  """Writes the mean of the last `last` checkpoints of a run: agent; returns its prefix."""
  from agents import configs
  from agents.evaluation import EvaluationError, policies
  from agents.training import weight_averaging
  kind, run_dir = policies.split_spec(agent)
  if kind != 'run':
    raise EvaluationError(f'--average_last averages the checkpoints of a run:<RUN_DIR> agent, '
                          f'not {agent}.')
  try:
    averaged = weight_averaging.average_checkpoints(run_dir, last)
  except configs.ConfigError as error:
    raise EvaluationError(f'--average_last {last}: {error}') from None
  print(f'Flying {weight_averaging.describe(averaged)}.')
  return averaged.prefix


def _record(path, summary, command_line):
  """Adds a complete evaluation of savedmodel:`path` to its record and model card."""
  from agents.evaluation import EvaluationError
  from agents.run import model_card, policy_record
  try:
    policy_record.add_evaluation(path, policy_record.evaluation_of(summary, command_line, path))
  except policy_record.PolicyRecordError as error:
    raise EvaluationError(f'--record: {error}') from None
  print(f'Added the {summary["suite"]["name"]} results to {policy_record.path_in(path)} and '
        f'{model_card.FILENAME}.')


def _combine(args):
  from agents.evaluation import results, suite_runs
  recorded = None
  if args.record:
    # The shards name the agent they flew; the record is checked before anything is written.
    header, _ = results.combine(args.output_dir, write=False)
    args.agent, args.env = header['agent'], header.get('env_id')
    recorded = _announce_saved_model(args, verb='Combining the results of')
  summary = suite_runs.finish(args.output_dir, artifacts=True, gallery=args.gallery)
  print(_table([summary]))
  print(f'Wrote {os.path.join(args.output_dir, "results.json")} and summary.json.')
  if recorded:
    _record(recorded, summary, args.command_line)


def _compare(args):
  from agents.evaluation import suite_runs
  output_dir = args.output_dir or args.directories[0]
  comparison = suite_runs.compare(args.directories, output_dir, args.metric)
  print(_table(comparison['agents']))
  for pair in comparison['pairs']:
    low, high = pair['mean_difference_ci95']
    poi_low, poi_high = pair['probability_of_improvement_ci95']
    print(f'{pair["x"]} - {pair["y"]}: {pair["mean_difference"]:+.3f} [{low:+.3f}, {high:+.3f}]'
          f', Wilcoxon p={pair["wilcoxon_p"]:.3g}, wins/ties/losses {pair["wins"]}/'
          f'{pair["ties"]}/{pair["losses"]}, P(improvement) '
          f'{pair["probability_of_improvement"]:.3f} [{poi_low:.3f}, {poi_high:.3f}]')
  print(f'Wrote {os.path.join(output_dir, "comparison.json")} and comparison.png.')


def _groups(args):
  from agents.evaluation import EvaluationError, fit_groups
  groups = {}
  for spec in args.group:
    name, _, members = spec.partition('=')
    if not name or not members:
      raise EvaluationError(f'--group {spec!r}: expected NAME=MEMBER[,MEMBER...].')
    groups[name] = members.split(',')
  outcome = fit_groups.compare_groups(groups, args.metric)
  for group in outcome['groups']:
    print(f'{group["group"]}: {group["fits"]} fits, {group["seeds"]} seeds, '
          f'mean {group["mean"]:.4f}')
  for pair in outcome['pairs']:
    low, high = pair['mean_difference_ci95']
    print(f'{pair["x"]} - {pair["y"]}: {pair["mean_difference"]:+.4f} [{low:+.4f}, '
          f'{high:+.4f}] over {pair["num_seeds"]} seeds, Wilcoxon p={pair["wilcoxon_p"]:.3g}, '
          f'wins/ties/losses {pair["wins"]}/{pair["ties"]}/{pair["losses"]}')


def _ensemble(args):
  from agents.evaluation import ensemble
  outcome = ensemble.fly_ensemble(args.run, args.suite, args.output_dir)
  low, high = outcome['mean_ci95']
  print(f'{outcome["agent"]} on {outcome["suite"]} ({outcome["seeds"]} seeds): '
        f'{outcome["metric"]} {outcome["mean"]:.4f} [{low:.4f}, {high:.4f}]')
  if args.output_dir:
    print(f'Wrote {os.path.join(args.output_dir, "results.json")}.')


def main(argv=None):
  """Command line; returns the exit code (2 for bad input)."""
  argv = list(sys.argv[1:] if argv is None else argv)
  command = argv[0] if argv and argv[0] in _SUBCOMMANDS else 'run'
  if command != 'run':
    argv = argv[1:]
  from agents.evaluation import EvaluationError
  try:
    args = _parser(command).parse_args(argv)
  except SystemExit as exit_:  # A bad flag (one line on stderr already) or --help.
    return exit_.code
  subcommand = [] if command == 'run' else [command]
  args.command_line = shlex.join(['python', '-m', 'agents.scripts.evaluate', *subcommand,
                                  *argv])
  try:
    {'run': _run, 'combine': _combine, 'compare': _compare, 'groups': _groups,
     'ensemble': _ensemble}[command](args)
  except EvaluationError as error:
    print('evaluate: error: ' + ' '.join(str(error).split()), file=sys.stderr)
    return 2
  except KeyboardInterrupt:
    print('evaluate: interrupted; finished seeds are saved, run the same command to resume.',
          file=sys.stderr)
    return 130
  return 0


if __name__ == '__main__':
  sys.exit(main())
