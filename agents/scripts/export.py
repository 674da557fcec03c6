"""Exports a trained policy as a TensorFlow SavedModel, with its record and model card.

    python -m agents.scripts.export --logdir=RUN_DIR [--outdir=DIR]
        [--checkpoint=PATH | --average_last=K]
        [--name=NAME] [--eval_suite=SUITE [--workers=N] | --evaluation=EVAL_DIR]

What the SavedModel holds is the algorithm's `export_policy` (see
`agents.algorithms.algorithm`): for PPO, the network and the observation
normaliser with `action(observ)`, `value(observ)` and, for a recurrent policy,
`initial_state(batch_size)` (`agents/algorithms/ppo/exported_policy.py`). Load
it with `tf.saved_model.load(path)` in any TensorFlow program. With `--average_last=K`
the weights are the mean of the run's last K checkpoints' (`agents.training.weight_averaging`;
the averaged checkpoint is kept in `RUN_DIR/averaged/`, and the record's notes say so).

Beside it go `policy.yaml`, the policy's record (config, training steps and time, the
version and commit that trained it, evaluations, how to load it: `agents.run.policy_record`),
and `MODEL_CARD.md`, the same as Markdown to publish (`agents.run.model_card`). The record
holds evaluations only when they were measured on these weights: `--eval_suite` flies
the exported SavedModel on a suite now; `--evaluation` takes the results of
`agents.scripts.evaluate --agent=run:RUN_DIR` on the exported checkpoint. A missing
run, a run without a checkpoint, an evaluation of another run or checkpoint, or an
outdir that is a file or not writable is one line on stderr and exit code 2.
"""

import os
import shlex
import sys
import tempfile

from agents import configs
from agents.run import export, policy_record
from agents.training import builders, command_line, weight_averaging

_PROG = 'agents.scripts.export'


def _check_outdir(outdir):
  """Refuses an outdir that is a file or whose nearest existing folder is not writable."""
  if os.path.exists(outdir) and not os.path.isdir(outdir):
    raise configs.ConfigError(f'--outdir {outdir} is a file, not a directory.')
  folder = os.path.abspath(outdir)
  while not os.path.exists(folder):
    folder = os.path.dirname(folder)
  if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
    raise configs.ConfigError(f'--outdir {outdir}: {folder} is not a writable directory.')


def _checkpoint(logdir, checkpoint):
  """The checkpoint to export: `checkpoint`, else the newest that reads (None: none)."""
  if checkpoint:
    return checkpoint
  from agents.run import checkpoints
  try:
    return checkpoints.newest_readable(os.path.join(logdir, 'checkpoints'))
  except checkpoints.CheckpointError as error:
    raise configs.ConfigError(str(error)) from None


def _check_suite(suite, env_id):
  """Refuses a suite the run's environment cannot fly, before anything is written."""
  from agents import evaluation
  try:
    evaluation.get_suite(suite, env_id)
  except evaluation.EvaluationError as error:
    raise configs.ConfigError(f'--eval_suite {suite}: {error}') from None


def _measure(outdir, suite, workers, command):
  """Flies the exported SavedModel on `suite`; returns the record's evaluation entry."""
  from agents import evaluation
  with tempfile.TemporaryDirectory(prefix='export-eval-') as scratch:
    try:
      outcome = evaluation.evaluate(f'savedmodel:{outdir}', suite, scratch, workers=workers,
                                    artifacts=False, gallery=False, progress=False)
    except evaluation.EvaluationError as error:
      raise configs.ConfigError(f'{outdir} is exported, with no evaluation in its record: '
                                f'--eval_suite {suite}: {error}') from None
  return policy_record.evaluation_of(outcome['summary'], command, outdir)


def _existing(evaluation_dir, logdir, checkpoint):
  """(summary, command) of an evaluate output folder of this run's exported checkpoint.

  Raises:
    ConfigError: the folder holds no complete evaluation, or one of another agent, run
      or checkpoint (whose results would not be these weights').
  """
  from agents import evaluation
  from agents.evaluation import suite_runs
  try:
    summary = suite_runs.summarize_dir(evaluation_dir)
  except (evaluation.EvaluationError, OSError, ValueError) as error:
    raise configs.ConfigError(f'--evaluation {evaluation_dir}: {error}') from None
  info = summary.get('agent_info') or {}
  flown = (info.get('kind'), info.get('run_dir'), info.get('checkpoint'))
  exported = ('run', os.path.abspath(logdir), os.path.basename(checkpoint))
  if flown != exported:
    raise configs.ConfigError(
        f'--evaluation {evaluation_dir} flew agent {summary["agent"]} '
        f'(checkpoint {info.get("checkpoint")}), not run:{logdir} at checkpoint {exported[2]}; '
        'its results are not those of the exported weights.')
  command = (f'python -m agents.scripts.evaluate --agent=run:{logdir} --checkpoint='
             f'{exported[2]} --suite={summary["suite"]["name"]} --output_dir={evaluation_dir}')
  return summary, command


def main(argv=None):
  """Command line: export the latest (or given) checkpoint of a run; returns the exit code."""
  argv = list(sys.argv[1:] if argv is None else argv)
  parser = command_line.OneLineArgumentParser(
      prog=_PROG, description=__doc__.split('\n', maxsplit=1)[0])
  parser.add_argument('--logdir', required=True, help='Run directory.')
  parser.add_argument('--outdir', default=None, help='Where to write; default RUN_DIR/policy.')
  source = parser.add_mutually_exclusive_group()
  source.add_argument('--checkpoint', default=None, help='Checkpoint prefix; default latest.')
  source.add_argument('--average_last', type=int, default=None, metavar='K',
                      help='Export the mean weights of the last K checkpoints.')
  parser.add_argument('--name', default=None,
                      help="The policy's name in its record; default the run's folder name.")
  evaluations = parser.add_mutually_exclusive_group()
  evaluations.add_argument('--eval_suite', default=None,
                           help='Fly the exported policy on this suite (e.g. small_eval) and '
                           'record the results.')
  evaluations.add_argument('--evaluation', default=None,
                           help='Record the results in this evaluate output folder of '
                           'run:RUN_DIR at the exported checkpoint.')
  parser.add_argument('--workers', type=int, default=2,
                      help='With --eval_suite: worker processes (0: in-process).')
  args = parser.parse_args(argv)
  import tensorflow as tf
  outdir = args.outdir or os.path.join(args.logdir, 'policy')
  command = 'python -m agents.scripts.export ' + shlex.join(argv)
  try:
    _check_outdir(outdir)
    step = notes = None
    if args.average_last is not None:
      averaged, restored = weight_averaging.average_and_restore(args.logdir, args.average_last)
      checkpoint, step = averaged.prefix, averaged.step
      notes = f'Weights: {weight_averaging.describe(averaged)}.'
    else:
      checkpoint = _checkpoint(args.logdir, args.checkpoint)
      restored = builders.restore_algorithm(args.logdir, checkpoint, is_training=False)
    config, algorithm, observation_space, _ = restored
    # Checked before anything is written: a refused evaluation leaves no folder behind.
    if args.eval_suite:
      _check_suite(args.eval_suite, config.environment.id)
    existing = args.evaluation and _existing(args.evaluation, args.logdir, checkpoint)
    path = export.save_policy(algorithm, observation_space, outdir, config=config,
                              run_dir=args.logdir, step=step, checkpoint=checkpoint,
                              name=args.name, notes=notes)
    if args.eval_suite:
      policy_record.add_evaluation(path, _measure(path, args.eval_suite, args.workers,
                                                  command))
    elif existing:
      policy_record.add_evaluation(path, policy_record.evaluation_of(*existing, path))
  except configs.ConfigError as error:
    print(f'{_PROG}: error: {error}', file=sys.stderr)
    return 2
  except (OSError, tf.errors.OpError) as error:
    message = str(getattr(error, 'message', None) or error).splitlines()[0]
    print(f'{_PROG}: error: cannot write {outdir}: {message}', file=sys.stderr)
    return 2
  print(policy_record.describe(policy_record.load(path)))
  print(f'Exported the policy to {path}, with {policy_record.FILENAME} and MODEL_CARD.md.')
  return 0


if __name__ == '__main__':
  sys.exit(main())
