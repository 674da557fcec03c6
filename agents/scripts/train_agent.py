"""The `--agent` path of `agents.scripts.train`: trains a Python agent with BLE's interface.

    python -m agents.scripts.train --agent=examples.dqn_agent:DQNAgent --config=balloon \
        --logdir=logs --num_agents=8 --set loop.steps=76800 --set agent.learning_rate=1e-3

The run directory is `<logdir>/<timestamp>-<config>/`, as for an in-graph run:
config.yaml (`agents.python_agents.agent_configs`), run.yaml, metrics.jsonl and
TensorBoard's `train/` (one row per iteration), `checkpoints/`, and `policy/` when the
agent has `export(directory)` (`agents.python_agents.agent_runs`). Bad input (an agent
that does not import or lacks a method, an argument its constructor refuses, a config
key) is one line and exit 2 with nothing written; an agent that fails while training
keeps the last checkpoint and exits 1.
"""

import os
import sys

from agents import configs
from agents.tools import directory_lock, interrupts

_PROG = 'agents.scripts.train'


def resolve(args, saved, run_dir):
  """(config, agent source) of the `--agent` run in `run_dir`, new or resumed.

  Raises:
    ConfigError: a bad flag, config, key or value, or a change a resumed run refuses.
    AgentSpecError: the agent does not import, is not a class, lacks a method, or its
      constructor refuses the arguments.
  """
  from agents.python_agents import agent_configs, agent_runs
  logdir = os.path.expanduser(args.logdir)
  if os.path.exists(logdir) and not os.path.isdir(logdir):
    raise configs.ConfigError(f'--logdir {args.logdir} is a file, not a directory.')
  if args.algorithm is not None:
    raise configs.ConfigError('--algorithm names an in-graph algorithm; this run trains '
                              'a Python agent (--agent).')
  overrides = dict(configs.parse_override(text) for text in args.overrides)
  flags = {'environment.num_agents': args.num_agents, 'environment.processes':
           args.env_processes, 'seed': args.seed, 'loop.track': args.track}
  overrides.update({key: value for key, value in flags.items() if value is not None})
  overrides, kwargs = agent_configs.split_overrides(overrides)
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
  return config, source


def train(args, saved, run_dir, held_directories):
  """Trains or resumes the `--agent` run in `run_dir`; returns the exit code.

  Args:
    args: the parsed flags of `agents.scripts.train`.
    saved: the run's config.yaml as saved, or None for a new run.
    run_dir: the run directory.
    held_directories: the `ExitStack` that holds the run directory until training ends.
  """
  from agents.python_agents import agent as agent_lib
  from agents.python_agents import agent_runs
  try:
    config, source = resolve(args, saved, run_dir)
  except (configs.ConfigError, agent_runs.AgentSpecError) as error:
    return _fail(error, 2)
  is_new_run = saved is None and not os.path.exists(run_dir)
  try:
    held_directories.enter_context(directory_lock.hold(run_dir, 'training run'))
  except directory_lock.DirectoryBusyError as error:
    return _fail(error, 2)
  try:
    env, max_episode_length = _build_env(config['environment'])
  except (ValueError, TypeError) as error:
    _remove_new_run(run_dir, is_new_run)
    return _fail(f"cannot build {config['environment']['id']}: {error}", 2)
  try:
    try:
      agent = agent_runs.make_agent(source, int(env.action_space.n),
                                    tuple(env.observation_space.shape), len(env),
                                    config['agent']['kwargs'])
    except Exception as error:  # noqa: BLE001 - the user's constructor: its message, one line
      _remove_new_run(run_dir, is_new_run)
      return _fail(f'agent {source.spec!r} raised when constructed: '
                   f'{type(error).__name__}: {error}', 2)
    configs.save_yaml(config, os.path.join(run_dir, 'config.yaml'))
    iterations = agent_runs.iterations_for(config['loop']['steps'], len(env),
                                           max_episode_length)
    result = agent_runs.train_agent(run_dir, env, agent, iterations, max_episode_length,
                                    seed=config['seed'], quiet=args.quiet, config=config)
  except (agent_lib.CheckpointMismatchError, agent_lib.CheckpointLoadError) as error:
    return _fail(error, 2)
  except (agent_lib.AgentError, agent_lib.AgentStepError, agent_lib.CollectorError) as error:
    print(f'{_PROG}: error: {error}', file=sys.stderr)
    print(f'{_PROG}: the run keeps its newest checkpoint: {run_dir}', file=sys.stderr)
    return 1
  finally:
    env.close()
  if result['interrupted']:
    print(f"Run interrupted by {result['signal']} at step {result['step']}: {run_dir}")
    return interrupts.exit_code(result['signal'])
  exported = f"; policy exported to {result['exported']}" if result['exported'] else ''
  print(f"Run finished at step {result['step']} (iteration {result['iteration']}): "
        f'{run_dir}{exported}')
  return 0


def _build_env(environment):
  """(the batch of `environment.num_agents`, the episode length) of the config, built as an
  in-graph run builds it (`agents.builders.make_batch_env`)."""
  from agents import builders
  from agents.python_agents import fit_adapter
  batch = builders.make_batch_env({'environment': environment})
  batch.env_id = environment['id']  # What run_training_loop reads the episode statistics by.
  length = environment['max_episode_steps'] or fit_adapter.episode_length(environment['id'])
  return batch, length


def _remove_new_run(run_dir, is_new_run):
  """Removes the folder a new run made before it wrote anything of its own."""
  if is_new_run and os.path.isdir(run_dir) and not os.listdir(run_dir):
    os.rmdir(run_dir)


def _fail(error, code):
  print(f'{_PROG}: error: {error}', file=sys.stderr)
  return code
