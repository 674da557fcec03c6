"""Exports a trained policy as a TensorFlow SavedModel that loads without this package.

    python -m agents.scripts.export --logdir=RUN_DIR [--outdir=DIR] [--checkpoint=PATH]

What the SavedModel holds is the algorithm's `export_policy` (see
`agents.algorithms.algorithm`): for PPO, the network and the observation
normaliser with `action(observ)`, `value(observ)` and, for a recurrent policy,
`initial_state(batch_size)` (`agents/algorithms/ppo/exported_policy.py`). Load
it with `tf.saved_model.load(path)` in any TensorFlow program. A missing run,
a run without a checkpoint, or an outdir that is a file or not writable is one
line on stderr and exit code 2.
"""

import os
import sys

from agents import builders, configs, training
from agents.tools import command_line

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


def main(argv=None):
  """Command line: export the latest (or given) checkpoint of a run; returns the exit code."""
  parser = command_line.OneLineArgumentParser(prog=_PROG, description=__doc__.split('\n')[0])
  parser.add_argument('--logdir', required=True, help='Run directory.')
  parser.add_argument('--outdir', default=None, help='Where to write; default RUN_DIR/policy.')
  parser.add_argument('--checkpoint', default=None, help='Checkpoint prefix; default latest.')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  import tensorflow as tf
  outdir = args.outdir or os.path.join(args.logdir, 'policy')
  try:
    _check_outdir(outdir)
    _, algorithm, observation_space, _ = builders.restore_algorithm(
        args.logdir, args.checkpoint, is_training=False)
    path = training.save_policy(algorithm, observation_space, outdir)
  except configs.ConfigError as error:
    print(f'{_PROG}: error: {error}', file=sys.stderr)
    return 2
  except (OSError, tf.errors.OpError) as error:
    message = str(getattr(error, 'message', None) or error).splitlines()[0]
    print(f'{_PROG}: error: cannot write {outdir}: {message}', file=sys.stderr)
    return 2
  print(f'Exported the policy to {path}.')
  return 0


if __name__ == '__main__':
  sys.exit(main())
