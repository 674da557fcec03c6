"""Trains an agent with a named config; writes a run directory that can be resumed.

    python -m agents.scripts.train --logdir=DIR --config=NAME [--timestamp=T]
        [--num_agents=N] [--env_processes|--noenv_processes] [--seed=S]
        [--set key=value ...]

The run lives in `<logdir>/<timestamp>-<config>/`: `config.yaml` (the resolved,
validated config), `checkpoints/`, TensorBoard event files under `train/` (and
`eval/`), `metrics.jsonl` (the loop's rows and one 'update' row of PPO
statistics per report) and, at the end, `policy/`, the exported SavedModel.
Passing the timestamp of an existing run resumes it from its last checkpoint
with its saved config. Ctrl-C saves a checkpoint and exits cleanly.
"""

import argparse
import datetime
import functools
import importlib
import logging
import os
import signal
import sys

import gymnasium

from agents.scripts import config_schema, configs

_LOG = logging.getLogger('agents.scripts.train')


class _OneLineArgumentParser(argparse.ArgumentParser):
  """Reports a bad flag as one line and exits with code 2."""

  def error(self, message):
    self.exit(2, f'{self.prog}: error: {message}\n')


def make_env(config):
  """Builds one environment of the config (picklable through functools.partial)."""
  for module in config['env_imports']:
    importlib.import_module(module)
  kwargs = dict(config['env_kwargs'])
  if config['max_episode_steps'] is not None:
    kwargs['max_episode_steps'] = config['max_episode_steps']
  return gymnasium.make(config['env'], **kwargs)


def make_vector_env(config, num_envs):
  """Builds a slab of `num_envs` environments with the environment's own vector implementation."""
  for module in config['env_imports']:
    importlib.import_module(module)
  kwargs = dict(config['env_kwargs'])
  if config['max_episode_steps'] is not None:
    kwargs['max_episode_steps'] = config['max_episode_steps']
  return gymnasium.make_vec(config['env'], num_envs=num_envs,
                            vectorization_mode='vector_entry_point', **kwargs)


def make_batch_env(config, processes=None):
  """Builds the `BatchEnv` of `num_agents` environments, in processes when configured.

  Args:
    config: a validated config.
    processes: override of the config's `env_processes`.

  Returns:
    A `BatchEnv`.
  """
  from agents.tools import batch_env as batch_env_lib
  from agents.tools import external_process
  processes = config['env_processes'] if processes is None else processes
  num_agents = config['num_agents']
  per_process = config['envs_per_process']
  if not per_process:
    # One worker per core: more workers than cores only adds switching. In
    # this process, one slab holds everything.
    workers = max(1, min(num_agents, os.cpu_count() or 1)) if processes else 1
    per_process = -(-num_agents // workers)
  if not config['vector_env']:
    return batch_env_lib.BatchEnv.from_constructors(
        functools.partial(make_env, dict(config)), num_agents, processes=processes,
        envs_per_process=per_process if processes else 1)
  sizes = [min(per_process, num_agents - start) for start in range(0, num_agents, per_process)]
  constructors = [functools.partial(make_vector_env, dict(config), size) for size in sizes]
  if not processes:
    return batch_env_lib.BatchEnv([make() for make in constructors])
  workers = []
  try:
    for number, make in enumerate(constructors):
      workers.append(external_process.ExternalProcess(make, index=number * per_process,
                                                      wait=False))
    for worker in workers:
      worker.wait_ready()
  except BaseException:
    for worker in workers:
      worker.close()
    raise
  return batch_env_lib.BatchEnv(workers)


def build_algorithm(config, observation_space, action_space, is_training=None):
  """Builds the network and the PPO algorithm of a config for the given spaces."""
  from agents.algorithms.ppo import ppo
  from agents.scripts import networks
  if config['algorithm'] != 'ppo':
    raise config_schema.ConfigError(
        f"Config key 'algorithm' must be 'ppo', got {config['algorithm']!r}.")
  network = networks.make_network(
      config['network'], observation_space, action_space, seed=config['seed'],
      policy_layers=config['policy_layers'], value_layers=config['value_layers'],
      activation=config['activation'], init_std=config['init_std'],
      gru_units=config['gru_units'])
  hparams = {key: config[key] for key in (
      'segment_length', 'update_epochs', 'num_minibatches', 'discount', 'gae_lambda',
      'learning_rate', 'max_grad_norm', 'policy_objective', 'kl_target', 'kl_init_penalty',
      'kl_cutoff_factor', 'kl_cutoff_coef', 'clip_ratio', 'value_coef', 'entropy_coef',
      'normalize_observ', 'observ_clip', 'normalize_reward', 'reward_clip',
      'normalize_advantage', 'seed')}
  return ppo.PPO(config['num_agents'], observation_space, action_space, network,
                 is_training=is_training, **hparams)


class _InterruptedError(Exception):
  """Raised between fused calls after Ctrl-C, so the run can save and stop."""


class _ProgressReporter:
  """Feeds the loop's reports to a tqdm bar and writes PPO update rows to metrics.jsonl."""

  def __init__(self, loop, algorithm, total, initial, stop_flag, quiet=False):
    import tqdm
    self._loop = loop
    self._algorithm = algorithm
    self._stop_flag = stop_flag
    self._updates_logged = int(algorithm.num_updates.numpy())
    self._mean_score = None
    self.bar = tqdm.tqdm(total=total, initial=initial, unit='step', dynamic_ncols=True,
                         smoothing=0.1, disable=quiet)

  def __call__(self, row):
    if row['phase'] == 'train':
      self.bar.update(row['step'] - self.bar.n)
    if row['mean_score'] is not None:
      self._mean_score = row['mean_score']
      # tqdm's own rate is the steps/s; the postfix adds the mean score.
      postfix = {'score': f"{row['mean_score']:.1f}", 'phase': row['phase']}
      self.bar.set_postfix(postfix, refresh=False)
    updates = int(self._algorithm.num_updates.numpy())
    if updates != self._updates_logged:
      self._updates_logged = updates
      metrics = {name: float(value.numpy()) for name, value in self._algorithm.metrics.items()}
      self._loop.metrics.write(dict(step=row['step'], phase='update', updates=updates, **metrics))
    if self._stop_flag['stop']:
      raise _InterruptedError()

  @property
  def mean_score(self):
    return self._mean_score


def configure_threads(threads):
  """Sets TensorFlow's intra- and inter-op thread pools (0 keeps the default)."""
  import tensorflow as tf
  if not threads:
    return
  try:
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
  except RuntimeError:
    # TensorFlow already started in this process (tests, notebooks); keep its pools.
    _LOG.debug('TensorFlow is initialised; tf_threads=%d is ignored.', threads)


def train(config, run_dir, quiet=False, export_policy=True):
  """Trains (or resumes) a run in `run_dir`; returns a summary dict.

  Args:
    config: a validated config.
    run_dir: the run directory; created when missing.
    quiet: disable the progress bar.
    export_policy: write the SavedModel `policy/` when training finishes.

  Returns:
    dict with the final step, whether it was interrupted, and the last mean score.
  """
  import tensorflow as tf

  from agents.scripts import export
  from agents.tools import in_graph_batch_env
  from agents.tools import loop as loop_lib
  os.makedirs(run_dir, exist_ok=True)
  config_path = os.path.join(run_dir, 'config.yaml')
  if not os.path.exists(config_path):
    config_schema.save_yaml(config, config_path)
  configure_threads(config['tf_threads'])
  tf.random.set_seed(config['seed'])
  stop_flag = {'stop': False}

  def on_interrupt(signum, frame):
    del signum, frame
    stop_flag['stop'] = True
    # A second Ctrl-C falls back to the default behaviour.
    signal.signal(signal.SIGINT, signal.default_int_handler)

  # Installed before the slow start (workers, tracing): a Ctrl-C then stops
  # the run at its first report, with a checkpoint.
  previous_handler = signal.signal(signal.SIGINT, on_interrupt)
  batch_env = None
  try:
    batch_env = make_batch_env(config)
    env = in_graph_batch_env.InGraphBatchEnv(batch_env, seed=config['seed'])
    loop = loop_lib.Loop(run_dir)
    algorithm = build_algorithm(config, batch_env.observation_space, batch_env.action_space,
                                is_training=loop.is_training)
    batch_steps = config['num_agents'] * config['steps_per_call']
    train_steps = config['eval_every'] or config['steps']
    loop.add_phase('train', env, algorithm, steps=train_steps, is_training=True,
                   steps_per_call=config['steps_per_call'], log_every=config['log_every'],
                   report_every=batch_steps, checkpoint_every=config['checkpoint_every'])
    if config['eval_every']:
      loop.add_phase('eval', env, algorithm, steps=config['eval_steps'], is_training=False,
                     steps_per_call=config['steps_per_call'], log_every=config['eval_steps'],
                     report_every=config['eval_steps'])
    # The eval phase does not count towards the training budget.
    cycle = train_steps + (config['eval_steps'] if config['eval_every'] else 0)
    full_cycles, rest = divmod(config['steps'], train_steps)
    max_step = full_cycles * cycle + rest
    initial = loop.restore() or 0
    reporter = _ProgressReporter(loop, algorithm, max_step, initial, stop_flag, quiet)

    interrupted = False
    try:
      step = loop.run(max_step, on_report=reporter)
    except _InterruptedError:
      interrupted = True
      step = int(loop.step.numpy())
      path = loop.save_checkpoint()
      reporter.bar.write(f'Interrupted at step {step}; saved checkpoint {path}.')
    reporter.bar.update(step - reporter.bar.n)
    reporter.bar.close()
    if export_policy and not interrupted:
      export.export_policy(algorithm, batch_env.observation_space,
                           os.path.join(run_dir, 'policy'))
    return dict(step=step, interrupted=interrupted, mean_score=reporter.mean_score,
                run_dir=run_dir)
  finally:
    signal.signal(signal.SIGINT, previous_handler)
    if batch_env is not None:
      batch_env.close()


def run_directory(logdir, timestamp, config_name):
  """Returns `<logdir>/<timestamp>-<config_name>`."""
  return os.path.join(os.path.expanduser(logdir), f'{timestamp}-{config_name}')


def parse_args(argv):
  parser = _OneLineArgumentParser(
      prog='agents.scripts.train', description='Train an agent with a named config.')
  parser.add_argument('--logdir', required=True, help='Base directory of the runs.')
  parser.add_argument('--config', required=True, help=f'One of {sorted(configs.CONFIGS)}.')
  parser.add_argument('--timestamp', default=None,
                      help='Run timestamp; an existing run with it is resumed.')
  parser.add_argument('--num_agents', type=int, default=None, help='Parallel environments.')
  parser.add_argument('--env_processes', dest='env_processes', action='store_const', const=True,
                      default=None, help='Step the environments in worker processes.')
  parser.add_argument('--noenv_processes', dest='env_processes', action='store_const',
                      const=False, help='Step the environments in this process.')
  parser.add_argument('--seed', type=int, default=None, help='Random seed.')
  parser.add_argument('--set', dest='overrides', action='append', default=[],
                      metavar='KEY=VALUE', help='Override a config key (YAML value).')
  parser.add_argument('--quiet', action='store_true', help='No progress bar.')
  return parser.parse_args(argv)


def resolve_run(args):
  """Returns (config, run_dir) from parsed flags; resumes the saved config if the run exists."""
  timestamp = args.timestamp or datetime.datetime.now().strftime('%Y%m%dT%H%M%S')
  run_dir = run_directory(args.logdir, timestamp, args.config)
  overrides = dict(config_schema.parse_override(text) for text in args.overrides)
  for key in ('num_agents', 'env_processes', 'seed'):
    if getattr(args, key) is not None:
      overrides[key] = getattr(args, key)
  config_path = os.path.join(run_dir, 'config.yaml')
  if os.path.exists(config_path):
    if args.config not in configs.CONFIGS:
      raise configs.UnknownConfigError(
          f"Unknown config '{args.config}'; expected one of {sorted(configs.CONFIGS)}.")
    config = config_schema.load_yaml(config_path)
    if overrides:
      raise config_schema.ConfigError(
          f'Run {run_dir} already exists; flags {sorted(overrides)} cannot change its config '
          'on resume.')
    return config, run_dir
  return configs.resolve(args.config, overrides), run_dir


def main(argv=None):
  """Console entry point `agents-train`; returns the exit code."""
  args = parse_args(sys.argv[1:] if argv is None else argv)
  try:
    config, run_dir = resolve_run(args)
  except config_schema.ConfigError as error:
    print(f'agents.scripts.train: error: {error}', file=sys.stderr)
    return 2
  logging.basicConfig(level=logging.INFO, format='%(message)s')
  # Our INFO lines, not TensorFlow's (a line per checkpoint save and per export; some of
  # TensorFlow logs through absl).
  for name in ('tensorflow', 'absl'):
    logging.getLogger(name).setLevel(logging.WARNING)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  result = train(config, run_dir, quiet=args.quiet)
  state = 'interrupted' if result['interrupted'] else 'finished'
  print(f"Run {state} at step {result['step']}: {run_dir}")
  return 0


if __name__ == '__main__':
  sys.exit(main())
