"""Trains an agent: the command line of `agents.training.train` and of Python agents.

    python -m agents.scripts.train --logdir=DIR --config=NAME|PATH.yaml|module:function
        [--timestamp=T]
        [--algorithm=NAME|pkg.module:Class | --agent=NAME|pkg.module:Class] [--num_agents=N]
        [--env_processes[=true|false]|--noenv_processes] [--seed=S]
        [--set section.key=VALUE ...] [--quiet]
        [--track=mlflow,wandb]
    python -m agents.scripts.train --resume=RUN_DIR [--set section.key=VALUE ...] [...]

The run lives in `<logdir>/<timestamp>-<config name or YAML stem>/`. Passing the
timestamp of an existing run resumes it with its saved config, as does `--resume`
with the run's directory itself (whatever its name, e.g. a copied run); `--set` may
then change only the step budget, the cadences and what the config marks resumable
(e.g. `--set loop.steps=400000` extends a finished run). Any bad input (flag, config,
key, value, path) is one line on stderr and exit code 2, before anything is built or
written.

What trains is named by one of two exclusive flags: `--algorithm`, an in-graph
algorithm (the registry's name or a class of the algorithm interface), recorded as
`algorithm.name` in config.yaml; or `--agent`, a Python agent with BLE's Agent
interface (`pkg.module:Class`, single or batched, or a `create_agent` name such as
`station_seeker`), recorded as `agent.name`, trained by `run_training_loop` in a run
directory of the same layout (`agents.python_agents.agent_runs`; its config:
`agents.python_agents.agent_configs`). `--set agent.KEY=VALUE` passes the agent's
constructor arguments; `loop.steps` is its budget in environment steps. A run of
`--agent` resumes with `--timestamp` as any run.
"""

import contextlib
import datetime
import glob
import logging
import os
import shutil
import sys

from agents import configs
from agents.configs import yaml_io
from agents.run import directory_lock, tracking
from agents.tools import interrupts
from agents.training import command_line

_PROG = 'agents.scripts.train'


def parse_args(argv):
  """The parsed flags, with `run_dir` set (a new run's or the resumed one's)."""
  parser = command_line.OneLineArgumentParser(prog=_PROG,
                                              description='Train an agent with a config.')
  parser.add_argument('--logdir', default=None,
                      help='Base directory of the runs (required unless --resume).')
  parser.add_argument('--config', default=None,
                      help=f'One of {sorted(configs.CONFIGS)}, the path of a YAML config, or '
                      "'module:function' returning a config (BatchPPO's flat locals() or a run "
                      'config) (required unless --resume).')
  parser.add_argument('--timestamp', default=None,
                      help='Run timestamp; an existing run with it is resumed.')
  parser.add_argument('--resume', default=None, metavar='RUN_DIR',
                      help='Resume the run in this directory with its saved config (instead '
                      'of --logdir, --config and --timestamp).')
  trained = parser.add_mutually_exclusive_group()
  trained.add_argument('--algorithm', default=None,
                       help="An in-graph algorithm: a registered one ('ppo', 'random') or "
                       "'package.module:Class' (config key algorithm.name).")
  trained.add_argument('--agent', default=None,
                       help="A Python agent with BLE's Agent interface: "
                       "'package.module:Class' or a create_agent name ('random', "
                       "'station_seeker', ...) (config key agent.name).")
  parser.add_argument('--num_agents', type=int, default=None,
                      help='Parallel environments (environment.num_agents).')
  command_line.add_boolean_flag(
      parser, 'env_processes', None, 'Step the environments in worker processes (neither '
      "flag: environment.processes, by default 'auto').", 'Step the environments in this process.')
  parser.add_argument('--seed', type=int, default=None, help='Random seed.')
  parser.add_argument('--set', dest='overrides', action='append', default=[],
                      metavar='KEY=VALUE',
                      help='Override a config key (section.key or a unique key; YAML value).')
  parser.add_argument('--quiet', action='store_true', help='No progress bar.')
  parser.add_argument('--track', type=tracking.parse_names, default=None,
                      metavar='mlflow,wandb',
                      help='Experiment trackers beside metrics.jsonl and TensorBoard '
                      "(loop.track); '' for none.")
  args = parser.parse_args(argv)
  if args.resume is None:
    missing = [flag for flag, value in (('--logdir', args.logdir), ('--config', args.config))
               if value is None]
    if missing:
      parser.error(f'the following arguments are required: {", ".join(missing)} '
                   '(or --resume=RUN_DIR)')
    args.run_dir = run_directory(args.logdir, args.timestamp or _now(),
                                 config_label(args.config))
    return args
  given = [flag for flag, value in (('--logdir', args.logdir), ('--config', args.config),
                                    ('--timestamp', args.timestamp)) if value is not None]
  if given:
    parser.error(f'--resume names the run; drop {", ".join(given)}.')
  args.run_dir = os.path.abspath(os.path.expanduser(args.resume))
  if not os.path.isfile(os.path.join(args.run_dir, 'config.yaml')):
    parser.error(f'--resume {args.resume}: no run there (no config.yaml).')
  args.logdir = os.path.dirname(args.run_dir)
  return args


def _now():
  """A new run's timestamp."""
  return datetime.datetime.now().strftime('%Y%m%dT%H%M%S')


def run_directory(logdir, timestamp, label):
  """Returns `<logdir>/<timestamp>-<label>`."""
  return os.path.join(os.path.expanduser(logdir), f'{timestamp}-{label}')


def config_label(name_or_path):
  """The run directory's suffix: the config name, the YAML file's stem, or the function's
  name of a 'module:function'."""
  if name_or_path in configs.CONFIGS:
    return name_or_path
  if name_or_path.count(':') == 1 and not os.path.exists(name_or_path):
    return name_or_path.split(':')[1].rsplit('.', 1)[-1]
  return os.path.splitext(os.path.basename(name_or_path))[0]


def flag_overrides(args):
  """The config overrides of the flags: every `--set`, then the flags that name a key."""
  overrides = dict(configs.parse_override(text) for text in args.overrides)
  flags = {'environment.num_agents': args.num_agents, 'environment.processes':
           args.env_processes, 'seed': args.seed, 'algorithm.name': args.algorithm,
           'loop.track': args.track}
  overrides.update({key: value for key, value in flags.items() if value is not None})
  return overrides


def resolve_run(args):
  """Returns (config, run_dir) from parsed flags; resumes the saved config if the run exists.

  Raises:
    ConfigError: any bad flag value, config, key or path.
  """
  logdir = os.path.expanduser(args.logdir)
  if os.path.exists(logdir) and not os.path.isdir(logdir):
    raise configs.ConfigError(f'--logdir {args.logdir} is a file, not a directory.')
  overrides = flag_overrides(args)
  run_dir = args.run_dir
  config_path = os.path.join(run_dir, 'config.yaml')
  if os.path.exists(config_path):
    saved = configs.load_yaml(config_path)
    config = configs.apply_overrides(saved, overrides)
    configs.resume_config(saved, config)  # Refuses changes a resumed run cannot take.
    return config, run_dir
  return configs.resolve(args.config, overrides), run_dir


def _saved_config(run_dir):
  """The run's config.yaml as saved (unvalidated), or None for a new run."""
  path = os.path.join(run_dir, 'config.yaml')
  if not os.path.exists(path):
    return None
  try:
    return yaml_io.read_yaml(path)
  except configs.ConfigError:
    return None  # Reported by the in-graph path, which reads it again.


def remove_if_empty(run_dir, is_new_run):
  """Removes a new run that saved no checkpoint (only its config.yaml and first logs);
  returns whether it did (an in-graph run's checkpoints)."""
  if not is_new_run or glob.glob(os.path.join(run_dir, 'checkpoints', 'ckpt-*.index')):
    return False
  shutil.rmtree(run_dir, ignore_errors=True)
  return True


def main(argv=None):
  """Console entry point `agents-train`; returns the exit code."""
  try:
    return _main(argv)
  except KeyboardInterrupt as error:  # Ctrl-C before training, or a second Ctrl-C or SIGTERM
    print(f'{_PROG}: {interrupts.describe(error)}', file=sys.stderr)
    return interrupts.exit_code(error)


def _main(argv):
  args = parse_args(sys.argv[1:] if argv is None else argv)
  # The run directory is held from before its config is written until training ends.
  with contextlib.ExitStack() as held_directories:
    return _train(args, held_directories)


def _train(args, held_directories):
  from agents.python_agents import agent_configs
  from agents.run import session
  from agents.training import trainer
  run_dir = args.run_dir
  saved = _saved_config(run_dir)
  if args.agent is not None or agent_configs.is_agent_config(saved):
    return _train_agent(args, saved, run_dir, held_directories)
  try:
    config, run_dir = resolve_run(args)
    is_new_run = not os.path.exists(run_dir)
  except configs.ConfigError as error:
    print(f'{_PROG}: error: {error}', file=sys.stderr)
    return 2
  try:
    held_directories.enter_context(directory_lock.hold(run_dir, 'training run'))
    config = session.prepare_run(config, run_dir)
  except directory_lock.DirectoryBusyError as error:
    print(f'{_PROG}: error: {error}', file=sys.stderr)
    return 2
  except configs.ConfigError as error:
    remove_if_empty(run_dir, is_new_run)
    print(f'{_PROG}: error: {error}', file=sys.stderr)
    return 2
  except OSError as error:
    print(f'{_PROG}: error: cannot write the run directory: {error}', file=sys.stderr)
    return 2
  logging.basicConfig(level=logging.INFO, format='%(message)s')
  # Our INFO lines, not TensorFlow's (a line per checkpoint save and per export; some of
  # TensorFlow logs through absl).
  for name in ('tensorflow', 'absl'):
    logging.getLogger(name).setLevel(logging.WARNING)
  from agents.run import checkpoints  # TensorFlow: once the inputs are checked
  from agents.tools import errors
  try:
    result = trainer.train(config, run_dir, quiet=args.quiet)
  except checkpoints.CheckpointSaveError as error:  # e.g. a full disk: not the input's fault
    print(f'{_PROG}: error: {error}', file=sys.stderr)
    return 1
  except checkpoints.CheckpointError as error:
    print(f'{_PROG}: error: {error}', file=sys.stderr)
    return 2
  except configs.ConfigError as error:  # The environment or the network refused the config.
    remove_if_empty(run_dir, is_new_run)
    print(f'{_PROG}: error: {error}', file=sys.stderr)
    return 2
  except errors.ClusterLostError as error:
    where = (f'stopped at step {error.step} with checkpoint {error.checkpoint}'
             if error.checkpoint else 'kept its newest checkpoint')
    print(f"{_PROG}: error: the Ray cluster's head at {error.address} was lost; the run "
          f'{where}; resume it with --resume={run_dir} on a running cluster.',
          file=sys.stderr)
    return 1
  except (errors.WorkerError, errors.NonFiniteError, errors.ActionError) as error:
    # The environment failed while training: its own message (a worker's error carries
    # the traceback of the environment's code), not the fused step's TensorFlow frames.
    kept = not remove_if_empty(run_dir, is_new_run)
    print(f'{_PROG}: error: the environment failed during training. {error}', file=sys.stderr)
    if kept:
      print(f'{_PROG}: the run keeps its newest checkpoint; resume it with '
            f'--resume={run_dir} once the environment is fixed.', file=sys.stderr)
    return 1
  if result['interrupted']:
    print(f"Run interrupted by {result['signal']} at step {result['step']}: {run_dir}")
    return interrupts.exit_code(result['signal'])
  print(f"Run finished at step {result['step']}: {run_dir}")
  return 0


def resolve_agent_run(args, saved, run_dir):
  """The config of the `--agent` run in `run_dir`, new or resumed (checked: the agent
  resolves and its constructor takes the kwargs).

  Raises:
    ConfigError: a bad flag, config, key or value, or a change a resumed run refuses.
    AgentSpecError: the agent does not import, is not a class, lacks a method, or its
      constructor refuses the arguments.
  """
  from agents.python_agents import agent_configs, agent_runs
  logdir = os.path.expanduser(args.logdir)
  if os.path.exists(logdir) and not os.path.isdir(logdir):
    raise configs.ConfigError(f'--logdir {args.logdir} is a file, not a directory.')
  if args.algorithm is not None:  # A resumed --agent run, given --algorithm.
    raise configs.ConfigError('--algorithm names an in-graph algorithm; this run trains '
                              'a Python agent (--agent).')
  overrides, kwargs = agent_configs.split_overrides(flag_overrides(args))
  if saved is not None:
    if not agent_configs.is_agent_config(saved):
      name = (saved.get('algorithm') or {}).get('name')
      raise configs.ConfigError(f'{run_dir} was trained by the in-graph algorithm {name!r}; '
                                'resume it without --agent.')
    config = agent_configs.resume(saved, overrides, args.agent, kwargs)
  else:
    config = agent_configs.make(args.config, overrides, args.agent, kwargs)
  steps = config['loop']['steps']
  if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
    raise configs.ConfigError(f'loop.steps must be an int >= 1 (environment steps), got '
                              f'{steps!r}.')
  source = agent_runs.resolve_agent(config['agent']['name'])
  agent_runs.check_kwargs(source, config['agent']['kwargs'])
  return config


def _train_agent(args, saved, run_dir, held_directories):
  """Trains or resumes the `--agent` run in `run_dir`; returns the exit code."""
  from agents.python_agents import agent as agent_lib
  from agents.python_agents import agent_runs
  try:
    config = resolve_agent_run(args, saved, run_dir)
  except (configs.ConfigError, agent_runs.AgentSpecError) as error:
    return _fail(error, 2)
  is_new_run = saved is None and not os.path.exists(run_dir)
  try:
    held_directories.enter_context(directory_lock.hold(run_dir, 'training run'))
    result = agent_runs.train_run(config, run_dir, quiet=args.quiet)
  except directory_lock.DirectoryBusyError as error:
    return _fail(error, 2)
  except (configs.ConfigError, agent_runs.AgentSpecError) as error:
    if is_new_run and os.path.isdir(run_dir) and not os.listdir(run_dir):
      os.rmdir(run_dir)  # Refused before anything was written.
    return _fail(error, 2)
  except (agent_lib.CheckpointMismatchError, agent_lib.CheckpointLoadError) as error:
    return _fail(error, 2)
  except (agent_lib.AgentError, agent_lib.AgentStepError, agent_lib.CollectorError) as error:
    _fail(error, 1)
    print(f'{_PROG}: the run keeps its newest checkpoint: {run_dir}', file=sys.stderr)
    return 1
  if result['interrupted']:
    print(f"Run interrupted by {result['signal']} at step {result['step']}: {run_dir}")
    return interrupts.exit_code(result['signal'])
  exported = f"; policy exported to {result['exported']}" if result['exported'] else ''
  print(f"Run finished at step {result['step']} (iteration {result['iteration']}): "
        f'{run_dir}{exported}')
  return 0


def _fail(error, code):
  print(f'{_PROG}: error: {error}', file=sys.stderr)
  return code


if __name__ == '__main__':
  sys.exit(main())
