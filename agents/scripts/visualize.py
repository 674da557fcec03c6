"""Flies a trained policy; writes videos, plots and episode statistics.

    python -m agents.scripts.visualize --logdir=RUN_DIR --outdir=DIR [--num_episodes=N]
        [--checkpoint=PATH] [--format=mp4|gif] [--max_steps=N] [--frame_every=K] [--seed=S]
    python -m agents.scripts.visualize --savedmodel=DIR --outdir=DIR [--config=balloon] ...

The policy is a run's (its `config.yaml` and its latest or given checkpoint) or an
exported SavedModel (`agents.scripts.export`), which flies the environment of
`--config` (default `balloon`) with no training and no run directory. It plays
`num_episodes` episodes with the policy's mode, and writes:

- `episode-<i>.mp4` (or `.gif`) for environments that render rgb arrays, one
  frame every `frame_every` steps (default: every step for episodes of up to
  500 steps, else about 120 frames per episode);
- `episodes.json` with the return and length of every episode (for the balloon
  also its TWR50, the fraction of steps within 50 km);
- `infos-<i>.png`, one panel per scalar the environment reports in its step
  infos (for the balloon: pressure, battery, distance, power, ...);
- for the balloon, `flight-<i>.png`: the environment's own flight plot (ground
  track, altitude over the wind column, battery) at the end of the episode.

The balloon always flies with BLE's reward here, as in evaluation: a run trained
with the shaped `progress_reward` is shown with that shaping switched off.
"""

import json
import os
import sys

import numpy as np

from agents.env.balloon.constants import BALLOON_ENV_ID
from agents.tools import command_line


def _video_writer_format(requested):
  if requested:
    return requested
  try:
    import imageio_ffmpeg  # noqa: F401
  except ImportError:
    return 'gif'
  return 'mp4'


def _write_video(frames, path, fps):
  import imageio.v2 as imageio
  if path.endswith('.gif'):
    imageio.mimsave(path, frames, duration=1000.0 / fps, loop=0)
  else:
    imageio.mimsave(path, frames, fps=fps, macro_block_size=1)


def _numeric_infos(info):
  values = {}
  for key, value in info.items():
    array = np.asarray(value)
    if array.shape == () and np.issubdtype(array.dtype, np.number):
      values[key] = float(array)
  return values


def _plot_infos(trace, rewards, path):
  """Plots every scalar the episode reported in its infos, one panel each, against time."""
  import matplotlib
  matplotlib.use('Agg')
  import matplotlib.pyplot as plt
  keys = sorted(trace)
  panels = keys + ['reward']
  figure, axes = plt.subplots(len(panels), 1, figsize=(8, 1.6 * len(panels)), sharex=True,
                              squeeze=False)
  for axis, key in zip(axes[:, 0], panels):
    axis.plot(trace[key] if key != 'reward' else rewards)
    axis.set_ylabel(key, rotation=0, ha='right', fontsize=8)
  axes[-1, 0].set_xlabel('step')
  figure.tight_layout()
  figure.savefig(path, dpi=80)
  plt.close(figure)


def _run_policy(run_dir, checkpoint):
  """(policy, config) of a training run."""
  from agents.evaluation import play
  policy = play.DeterministicPolicy(run_dir, checkpoint)
  return policy, policy.config


def _saved_model_policy(path, config_name):
  """(policy, config) of an exported SavedModel flying the environment of `config_name`."""
  from agents import configs
  from agents.evaluation import errors, policies
  try:
    model = policies.load_saved_model(path)
  except errors.EvaluationError as error:
    raise configs.ConfigError(str(error)) from None
  config = configs.resolve(config_name)
  from agents import builders
  probe = builders.make_env(config)
  try:
    policies.check_observation_shape(model, path, probe.observation_space,
                                     f"the environment of config {config_name!r}")
  except errors.EvaluationError as error:
    raise configs.ConfigError(str(error)) from None
  finally:
    probe.close()
  policy = policies.TensorFlowPolicy(model, 1, hasattr(model, 'initial_state'))
  return policy, config


def visualize(run_dir, outdir, num_episodes=5, checkpoint=None, video_format=None,
              max_steps=None, seed=0, frame_every=None, savedmodel=None, config_name='balloon'):
  """Plays episodes with the deterministic policy and writes their records.

  Args:
    run_dir: the run directory of a training run; None with `savedmodel`.
    outdir: where to write videos, plots and episodes.json.
    num_episodes: number of episodes.
    checkpoint: checkpoint prefix of the run; None takes the latest.
    video_format: 'mp4' or 'gif'; None picks mp4 when imageio-ffmpeg exists.
    max_steps: cut episodes after this many steps; None lets them end.
    seed: seed of the first episode's reset (episode i uses seed + i).
    frame_every: render one video frame every this many steps; None picks.
    savedmodel: an exported SavedModel directory to fly instead of a run.
    config_name: with `savedmodel`, the config (name or YAML) whose environment it flies.

  Returns:
    The dict written to episodes.json.
  """
  from agents import builders, configs
  from agents.evaluation import play
  if num_episodes < 1:
    raise configs.ConfigError(f'--num_episodes must be at least 1, got {num_episodes}.')
  if (run_dir is None) == (savedmodel is None):
    raise configs.ConfigError('Give exactly one of --logdir (a run) and --savedmodel.')
  if savedmodel is None:
    policy, config = _run_policy(run_dir, checkpoint)
  else:
    policy, config = _saved_model_policy(savedmodel, config_name)
  is_balloon = config['environment']['id'] == BALLOON_ENV_ID
  # The balloon is shown with BLE's reward, as evaluation flies it.
  env_kwargs = {'progress_reward': 0.0} if is_balloon else {}
  os.makedirs(outdir, exist_ok=True)
  probe = builders.make_env(config, **env_kwargs)
  render_modes = probe.metadata.get('render_modes', [])
  probe.close()
  can_render = 'rgb_array' in render_modes
  if can_render:
    env_kwargs['render_mode'] = 'rgb_array'
  env = builders.make_env(config, **env_kwargs)
  fps = env.metadata.get('render_fps') or 30
  horizon = max_steps or (env.spec.max_episode_steps if env.spec else None) or 500
  if frame_every is None:
    frame_every = 1 if horizon <= 500 else -(-horizon // 120)
  video_format = _video_writer_format(video_format)
  episodes = []
  for episode in range(num_episodes):
    frames, trace, rewards = [], {}, []
    render_first = (lambda *_, into=frames: into.append(env.render())) if can_render else None
    steps = play.play_episode(env, policy, seed + episode, max_steps, on_reset=render_first)
    for count, step in enumerate(steps, start=1):
      rewards.append(step.reward)
      for key, value in _numeric_infos(step.info).items():
        trace.setdefault(key, []).append(value)
      if can_render and (count % frame_every == 0 or step.done):
        frames.append(env.render())
    total, length = float(sum(rewards)), len(rewards)
    record = {'episode': episode, 'return': total, 'length': length}
    if is_balloon and trace.get('distance_km'):
      record['twr50'] = float(np.mean(np.asarray(trace['distance_km']) <= 50.0))
    if frames:
      path = os.path.join(outdir, f'episode-{episode}.{video_format}')
      _write_video(frames, path, fps)
      record['video'] = os.path.basename(path)
    if trace:
      path = os.path.join(outdir, f'infos-{episode}.png')
      _plot_infos(trace, rewards, path)
      record['infos_plot'] = os.path.basename(path)
    if is_balloon and frames:
      import imageio.v2 as imageio
      path = os.path.join(outdir, f'flight-{episode}.png')
      imageio.imwrite(path, frames[-1])  # The renderer's flight plot at the episode's end.
      record['flight_plot'] = os.path.basename(path)
    episodes.append(record)
  env.close()
  returns = [record['return'] for record in episodes]
  source = {'run_dir': os.path.abspath(run_dir)} if savedmodel is None else {
      'savedmodel': os.path.abspath(savedmodel)}
  result = {**source, 'config': config['environment']['id'],
            'mean_return': float(np.mean(returns)), 'std_return': float(np.std(returns)),
            'mean_length': float(np.mean([record['length'] for record in episodes])),
            'episodes': episodes}
  with open(os.path.join(outdir, 'episodes.json'), 'w', encoding='utf-8') as file:
    json.dump(result, file, indent=2)
  return result


def main(argv=None):
  """Console entry point `agents-visualize`; returns the exit code."""
  parser = command_line.OneLineArgumentParser(prog='agents.scripts.visualize',
                                              description=__doc__.split('\n')[0])
  parser.add_argument('--logdir', default=None, help='Run directory <logdir>/<time>-<config>.')
  parser.add_argument('--savedmodel', default=None,
                      help='Exported policy to fly instead of a run (agents.scripts.export).')
  parser.add_argument('--config', default='balloon',
                      help='With --savedmodel: the config (name or YAML) of the environment.')
  parser.add_argument('--outdir', required=True, help='Where to write videos and statistics.')
  parser.add_argument('--num_episodes', type=int, default=5)
  parser.add_argument('--checkpoint', default=None, help='Checkpoint prefix; default latest.')
  parser.add_argument('--format', dest='video_format', choices=('mp4', 'gif'), default=None)
  parser.add_argument('--max_steps', type=int, default=None, help='Cut episodes at this length.')
  parser.add_argument('--frame_every', type=int, default=None,
                      help='Video frame every K steps; default picks by episode length.')
  parser.add_argument('--seed', type=int, default=0)
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  from agents import configs
  try:
    for flag in ('num_episodes', 'max_steps', 'frame_every'):
      value = getattr(args, flag)
      if value is not None and value < 1:
        raise configs.ConfigError(f'--{flag} must be at least 1, got {value}.')
    if os.path.exists(args.outdir) and not os.path.isdir(args.outdir):
      raise configs.ConfigError(f'--outdir {args.outdir} is a file, not a directory.')
    result = visualize(args.logdir, args.outdir, args.num_episodes, args.checkpoint,
                       args.video_format, args.max_steps, args.seed, args.frame_every,
                       args.savedmodel, args.config)
  except configs.ConfigError as error:
    print(f'agents.scripts.visualize: error: {error}', file=sys.stderr)
    return 2
  print(json.dumps({key: result[key] for key in ('mean_return', 'std_return', 'mean_length')}))
  return 0


if __name__ == '__main__':
  sys.exit(main())
