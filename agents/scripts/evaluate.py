"""Evaluates balloon agents on suites of seeded episodes (BLE's eval), and plays a run's policy.

    python -m agents.scripts.evaluate --agent=station_seeker|random_walk|random|run:<RUN_DIR>|
        savedmodel:<DIR>|<module:factory> --suite=small_eval --output_dir=DIR
        [--num_shards=K --shard_index=i] [--workers=N] [--ray | --ray_address=ADDR]
        [--flight_paths] [--checkpoint=NAME] [--overwrite] [--nogallery]
    python -m agents.scripts.evaluate combine DIR
    python -m agents.scripts.evaluate compare DIR_A DIR_B ... [--output_dir=DIR]

The library is `agents.evaluation`; this is its command line. Bad input (an unknown
agent or suite, a run without a checkpoint, a shard index out of range, an output
directory holding another evaluation, a factory that does not import or returns the
wrong shape) prints one line and exits with code 2.

The building blocks of `visualize` and of the learning benchmark also live here:

  policy = DeterministicPolicy(run_dir)            # latest checkpoint of the run
  env = builders.make_env(policy.config)
  for step in play_episode(env, policy, seed=0):   # one Step per environment step
    ...                                            # step.reward, step.info, step.done
  actions = policy(observations)                   # or a batch of up to num_agents rows
"""

import argparse
import collections
import os
import sys

import numpy as np


class Step(collections.namedtuple('Step', 'observ, reward, terminated, truncated, info')):
  """One environment step of `play_episode`."""

  __slots__ = ()

  @property
  def done(self):
    """Whether the episode ended here (terminated or truncated)."""
    return bool(self.terminated or self.truncated)


class DeterministicPolicy:
  """The mode of a trained run's policy, for a batch of up to `num_agents` observations.

  Row i of a batch acts as agent i of the algorithm, whose per-agent state (a recurrent
  network's memory) `begin_episode` clears.
  """

  def __init__(self, run_dir, checkpoint=None):
    """Restores the run's algorithm.

    Args:
      run_dir: run directory with `config.yaml` and `checkpoints/`.
      checkpoint: checkpoint prefix; None takes the latest.

    Raises:
      agents.configs.ConfigError: the run has no config.yaml or no checkpoint.
    """
    import tensorflow as tf

    from agents import builders
    self.config, algorithm, observation_space, _ = builders.restore_algorithm(
        run_dir, checkpoint, is_training=False)
    self.num_agents = int(self.config['environment']['num_agents'])
    self._algorithm = algorithm

    @tf.function(input_signature=[tf.TensorSpec([None, *observation_space.shape], tf.float32)])
    def perform(observations):
      return algorithm.perform(tf.range(tf.shape(observations)[0]), observations)
    self._perform = perform

  def begin_episode(self, indices=(0,)):
    """Starts new episodes for the batch rows `indices`."""
    self._check_batch(max(indices, default=-1) + 1)
    self._algorithm.begin_episode(np.asarray(indices, np.int32))

  def __call__(self, observations):
    """Actions [B, ...] for observations [B, ...], B <= num_agents."""
    self._check_batch(len(observations))
    return self._perform(np.asarray(observations, np.float32)).numpy()

  def _check_batch(self, size):
    if size > self.num_agents:
      raise ValueError(f'DeterministicPolicy acts for at most num_agents = {self.num_agents} '
                       f'observations at once (the run\'s per-agent state), got {size}.')


def play_episode(env, policy, seed, max_steps=None, on_reset=None):
  """Plays one episode; yields a `Step` after each environment step.

  Args:
    env: a Gymnasium environment (one, not a vector).
    policy: a `DeterministicPolicy`, or any callable observations [B, ...] -> actions
      [B, ...] with a `begin_episode(indices)` method; the episode is its row 0.
    seed: seed of the episode's reset.
    max_steps: stop after this many steps even if the episode goes on (None: play it out).
    on_reset: optional function (observ, info) called after the reset, before the
      first step (e.g. to render the first frame).
  """
  policy.begin_episode([0])
  observ, info = env.reset(seed=seed)
  if on_reset is not None:
    on_reset(observ, info)
  length = 0
  while max_steps is None or length < max_steps:
    observ, reward, terminated, truncated, info = env.step(policy(observ[None])[0])
    length += 1
    step = Step(observ, float(reward), terminated, truncated, info)
    yield step
    if step.done:
      return


# ------------------------------------------------------------------ command line

_SUBCOMMANDS = ('combine', 'compare')


class _Parser(argparse.ArgumentParser):
  """An argument parser whose errors are one line and exit code 2."""

  def error(self, message):
    raise _UsageError(f'{self.prog}: error: {message}')


class _UsageError(Exception):
  pass


def _parser(command):
  if command == 'combine':
    parser = _Parser(prog='agents.scripts.evaluate combine',
                     description='Merges shard files into results.json and summary.json.')
    parser.add_argument('output_dir')
    parser.add_argument('--nogallery', dest='gallery', action='store_false',
                        help='do not re-fly the best, median and worst seeds for pictures')
    return parser
  if command == 'compare':
    parser = _Parser(prog='agents.scripts.evaluate compare',
                     description='Paired statistics of agents on the same seeds.')
    parser.add_argument('directories', nargs='+')
    parser.add_argument('--output_dir', default=None,
                        help='where comparison.json and comparison.png go (default: the first '
                        'directory)')
    parser.add_argument('--metric', default='twr50', choices=('twr50', 'time_within_radius'))
    return parser
  parser = _Parser(prog='agents.scripts.evaluate', description=__doc__.split('\n')[0])
  parser.add_argument('--agent', required=True,
                      help='station_seeker, random_walk, random, run:<RUN_DIR>, '
                      'savedmodel:<DIR> or <module>:<factory>')
  parser.add_argument('--suite', default='small_eval',
                      help='micro_eval, tiny_eval, small_eval, medium_eval, big_eval, '
                      '*_strata, all_strata, or custom:seeds=A-B,episode_length=N,wind=W')
  parser.add_argument('--output_dir', required=True)
  parser.add_argument('--num_shards', type=int, default=None)
  parser.add_argument('--shard_index', type=int, default=None)
  parser.add_argument('--workers', type=int, default=2,
                      help='worker processes, one slab of balloons each (0: in-process)')
  parser.add_argument('--slab_size', type=int, default=None,
                      help='balloons per slab at most (default: '
                      'agents.evaluation.runner.DEFAULT_SLAB_SIZE)')
  parser.add_argument('--ray', action='store_true', help='run the shards as Ray tasks')
  parser.add_argument('--ray_address', default=None, help='Ray cluster address')
  parser.add_argument('--checkpoint', default=None, help='run:<RUN_DIR> checkpoint name')
  parser.add_argument('--flight_paths', action='store_true')
  parser.add_argument('--overwrite', action='store_true',
                      help='replace results of another evaluation in --output_dir')
  parser.add_argument('--nogallery', dest='gallery', action='store_false')
  parser.add_argument('--quiet', action='store_true', help='no progress bar')
  return parser


def _table(rows):
  """A plain-text table of summaries (TWR50 over the full episode length)."""
  lines = [f'{"agent":<28} {"suite":<14} {"seeds":>6}  {"TWR50 mean [95% CI]":<24} '
           f'{"IQM [95% CI]":<24} {"median":>6}  {"BLE TWR50":>9}  {"failures":>8}']
  for row in rows:
    twr, ble = row['twr50'], row['time_within_radius']
    lines.append(
        f'{row["agent"][:28]:<28} {row["suite"]["name"][:14]:<14} {row["num_seeds"]:>6}  '
        f'{twr["mean"]:.3f} [{twr["mean_ci95"][0]:.3f}, {twr["mean_ci95"][1]:.3f}]      '
        f'{twr["iqm"]:.3f} [{twr["iqm_ci95"][0]:.3f}, {twr["iqm_ci95"][1]:.3f}]      '
        f'{twr["median"]:>6.3f}  {ble["mean"]:>9.3f}  {row["failures"]["any"]:>8}')
  lines.append('TWR50 = steps within 50 km / episode length; BLE TWR50 = / steps flown.')
  return '\n'.join(lines)


def _run(args):
  from agents import evaluation
  from agents.evaluation import runner
  if args.shard_index is not None and args.num_shards is None:
    raise evaluation.EvaluationError('--shard_index needs --num_shards.')
  suite = evaluation.get_suite(args.suite)
  outcome = evaluation.evaluate(
      args.agent, suite, args.output_dir,
      num_shards=args.num_shards if args.num_shards is not None else (
          None if (args.ray or args.ray_address) else 1),
      shard_index=args.shard_index, workers=args.workers,
      use_ray=args.ray, ray_address=args.ray_address,
      slab_size=runner.DEFAULT_SLAB_SIZE if args.slab_size is None else args.slab_size,
      flight_paths=args.flight_paths, checkpoint=args.checkpoint, overwrite=args.overwrite,
      progress=not args.quiet, artifacts=True, gallery=args.gallery)
  if outcome['complete']:
    print(_table([outcome['summary']]))
    print(f'Wrote {os.path.join(args.output_dir, "summary.json")}.')
  else:
    print(f'Shard written to {args.output_dir}; run the other shards, then '
          f'`python -m agents.scripts.evaluate combine {args.output_dir}`.')


def _combine(args):
  from agents.evaluation import api
  summary = api.finish(args.output_dir, artifacts=True, gallery=args.gallery)
  print(_table([summary]))
  print(f'Wrote {os.path.join(args.output_dir, "results.json")} and summary.json.')


def _compare(args):
  from agents.evaluation import api
  output_dir = args.output_dir or args.directories[0]
  comparison = api.compare(args.directories, output_dir, args.metric)
  print(_table(comparison['agents']))
  for pair in comparison['pairs']:
    low, high = pair['mean_difference_ci95']
    poi_low, poi_high = pair['probability_of_improvement_ci95']
    print(f'{pair["x"]} - {pair["y"]}: {pair["mean_difference"]:+.3f} [{low:+.3f}, {high:+.3f}]'
          f', Wilcoxon p={pair["wilcoxon_p"]:.3g}, wins/ties/losses {pair["wins"]}/'
          f'{pair["ties"]}/{pair["losses"]}, P(improvement) '
          f'{pair["probability_of_improvement"]:.3f} [{poi_low:.3f}, {poi_high:.3f}]')
  print(f'Wrote {os.path.join(output_dir, "comparison.json")} and comparison.png.')


def main(argv=None):
  """Command line; returns the exit code (2 for bad input)."""
  argv = list(sys.argv[1:] if argv is None else argv)
  command = argv[0] if argv and argv[0] in _SUBCOMMANDS else 'run'
  if command != 'run':
    argv = argv[1:]
  from agents.evaluation import EvaluationError
  try:
    args = _parser(command).parse_args(argv)
    {'run': _run, 'combine': _combine, 'compare': _compare}[command](args)
  except (_UsageError, EvaluationError) as error:
    message = ' '.join(str(error).split())
    prefix = '' if isinstance(error, _UsageError) else 'evaluate: error: '
    print(prefix + message, file=sys.stderr)
    return 2
  except KeyboardInterrupt:
    print('evaluate: interrupted; finished seeds are saved, run the same command to resume.',
          file=sys.stderr)
    return 130
  return 0


if __name__ == '__main__':
  sys.exit(main())
