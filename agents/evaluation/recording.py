"""Records episodes of a trained policy: videos, plots of the step infos, episodes.json.

The library side of `python -m agents.scripts.visualize`:

    from agents.evaluation import recording
    result = recording.visualize('logdir/<timestamp>-balloon', 'videos', num_episodes=3)

An environment's evaluation plug-in may set what playback shows (`playback_kwargs`,
e.g. the balloon's BLE reward), add per-episode values from the step infos
(`playback_summary`, the balloon's TWR50) and save the last frame as a plot
(`final_frame_plot`, the balloon's flight).
"""

import json
import os
import sys

import numpy as np

from agents.evaluation import environments, errors, play, policies

# What a SavedModel exported before policy records flies unless told otherwise.
DEFAULT_CONFIG = 'balloon'


def _video_writer_format(requested):
  if requested:
    return requested
  try:
    import imageio_ffmpeg  # noqa: F401  pylint: disable=unused-import
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
  policy = play.DeterministicPolicy(run_dir, checkpoint)
  return policy, policy.config


def _saved_model_policy(path, config_name):
  """(policy, config) of an exported SavedModel flying the environment of `config_name`
  (None: its record's config, else `DEFAULT_CONFIG`)."""
  from agents import configs
  from agents.run import policy_record
  try:
    model = policies.load_saved_model(path)
    record = policies.saved_model_record(path)
  except errors.EvaluationError as error:
    raise configs.ConfigError(str(error)) from None
  if config_name is not None:
    config = configs.resolve(config_name)
    flown = f'config {config_name!r}'
  elif record is not None:
    print(f'visualize: flying {policy_record.describe(record)}.')
    config = configs.from_saved(record['config'],
                                f'{policy_record.path_in(path)}: field config')
    flown = f'the config of its record ({policy_record.FILENAME})'
  else:
    print(f'visualize: {path} has no {policy_record.FILENAME} (exported before policy '
          f'records); flying the environment of config {DEFAULT_CONFIG!r} (--config to '
          'choose another).')
    config = configs.resolve(DEFAULT_CONFIG)
    flown = f'config {DEFAULT_CONFIG!r}'
  from agents.training import builders
  probe = builders.make_env(config)
  try:
    policies.check_observation_shape(model, path, probe.observation_space,
                                     f'the environment of {flown}')
  except errors.EvaluationError as error:
    raise configs.ConfigError(str(error)) from None
  finally:
    probe.close()
  policy = policies.TensorFlowPolicy(model, 1, hasattr(model, 'initial_state'))
  return policy, config


def _renders(env, seed):
  """Whether the environment draws a frame here; says why not in one line when it cannot.

  MuJoCo draws through an OpenGL back end chosen by `MUJOCO_GL` (egl, osmesa or glfw,
  which needs a display); without a working one, episodes are played without videos.
  """
  try:
    env.reset(seed=seed)
    env.render()
    return True
  except Exception as error:  # pylint: disable=broad-exception-caught
    print(f'No videos: the environment cannot render here ({type(error).__name__}: '
          f'{str(error).splitlines()[0] if str(error) else ""}); for MuJoCo set MUJOCO_GL=egl '
          'or osmesa.', file=sys.stderr)
    return False


def visualize(run_dir, outdir, num_episodes=5, checkpoint=None, video_format=None,
              max_steps=None, seed=0, frame_every=None, savedmodel=None, config_name=None):
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
    config_name: with `savedmodel`, the config (name or YAML) whose environment it flies;
      None takes the config of its record (`policy.yaml`), else `DEFAULT_CONFIG`.

  Returns:
    The dict written to episodes.json.
  """
  from agents import configs
  from agents.training import builders
  if num_episodes < 1:
    raise configs.ConfigError(f'--num_episodes must be at least 1, got {num_episodes}.')
  if (run_dir is None) == (savedmodel is None):
    raise configs.ConfigError('Give exactly one of --logdir (a run) and --savedmodel.')
  if savedmodel is None:
    policy, config = _run_policy(run_dir, checkpoint)
  else:
    policy, config = _saved_model_policy(savedmodel, config_name)
  environment = environments.get(config.environment.id)
  # Shown with the reward evaluation flies (the balloon's: BLE's, not the shaped one).
  env_kwargs = dict(environment.playback_kwargs)
  os.makedirs(outdir, exist_ok=True)
  probe = builders.make_env(config, **env_kwargs)
  render_modes = probe.metadata.get('render_modes', [])
  probe.close()
  can_render = 'rgb_array' in render_modes
  if can_render:
    env_kwargs['render_mode'] = 'rgb_array'
    # Frames are drawn off screen: pygame (Gymnasium's classic-control renderer) then
    # looks for no display server, which on a machine without one prints an error line.
    os.environ.setdefault('SDL_VIDEODRIVER', 'dummy')
  env = builders.make_env(config, **env_kwargs)
  if can_render and not _renders(env, seed):
    env.close()
    env_kwargs.pop('render_mode')
    can_render = False
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
    record.update(environment.playback_summary(trace))
    if frames:
      path = os.path.join(outdir, f'episode-{episode}.{video_format}')
      _write_video(frames, path, fps)
      record['video'] = os.path.basename(path)
    if trace:
      path = os.path.join(outdir, f'infos-{episode}.png')
      _plot_infos(trace, rewards, path)
      record['infos_plot'] = os.path.basename(path)
    if environment.final_frame_plot and frames:
      import imageio.v2 as imageio
      path = os.path.join(outdir, f'flight-{episode}.png')
      imageio.imwrite(path, frames[-1])  # The renderer's flight plot at the episode's end.
      record['flight_plot'] = os.path.basename(path)
    episodes.append(record)
  env.close()
  returns = [record['return'] for record in episodes]
  source = {'run_dir': os.path.abspath(run_dir)} if savedmodel is None else {
      'savedmodel': os.path.abspath(savedmodel)}
  result = {**source, 'config': config.environment.id,
            'mean_return': float(np.mean(returns)), 'std_return': float(np.std(returns)),
            'mean_length': float(np.mean([record['length'] for record in episodes])),
            'episodes': episodes}
  with open(os.path.join(outdir, 'episodes.json'), 'w', encoding='utf-8') as file:
    json.dump(result, file, indent=2)
  return result
