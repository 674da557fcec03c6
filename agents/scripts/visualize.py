"""Flies a trained policy; writes videos, plots and episode statistics.

    python -m agents.scripts.visualize --logdir=RUN_DIR --outdir=DIR [--num_episodes=N]
        [--checkpoint=PATH] [--format=mp4|gif] [--max_steps=N] [--frame_every=K] [--seed=S]
    python -m agents.scripts.visualize --savedmodel=DIR --outdir=DIR [--config=NAME] ...

The policy is a run's (its `config.yaml` and its latest or given checkpoint) or an
exported SavedModel (`agents.scripts.export`), which flies the environment of its
record's config (`policy.yaml`), or of `--config`, with no training and no run
directory; a folder exported before records flies `balloon` unless `--config` says
otherwise, and a damaged record is one line naming the file and field. It plays
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

BatchPPO's `--num_agents` and `--env_processes` (`=False`, `--noenv_processes`) are
accepted, so its commands run as written; episodes are played one at a time in this
process, where they are rendered, so neither flag changes what is played.

The balloon always flies with BLE's reward here, as in evaluation: a run trained
with the shaped `progress_reward` is shown with that shaping switched off.
"""

import json
import os
import sys

from agents.training import command_line


def main(argv=None):
  """Console entry point `agents-visualize`; returns the exit code."""
  parser = command_line.OneLineArgumentParser(prog='agents.scripts.visualize',
                                              description=__doc__.split('\n', maxsplit=1)[0])
  parser.add_argument('--logdir', default=None, help='Run directory <logdir>/<time>-<config>.')
  parser.add_argument('--savedmodel', default=None,
                      help='Exported policy to fly instead of a run (agents.scripts.export).')
  parser.add_argument('--config', default=None,
                      help='With --savedmodel: the config (name or YAML) of the environment; '
                      "default the one in its record (policy.yaml), else 'balloon'.")
  parser.add_argument('--outdir', required=True, help='Where to write videos and statistics.')
  parser.add_argument('--num_episodes', type=int, default=5)
  parser.add_argument('--checkpoint', default=None, help='Checkpoint prefix; default latest.')
  parser.add_argument('--format', dest='video_format', choices=('mp4', 'gif'), default=None)
  parser.add_argument('--max_steps', type=int, default=None, help='Cut episodes at this length.')
  parser.add_argument('--frame_every', type=int, default=None,
                      help='Video frame every K steps; default picks by episode length.')
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--num_agents', type=int, default=1,
                      help="BatchPPO's flag, accepted: episodes are played one at a time here.")
  command_line.add_boolean_flag(
      parser, 'env_processes', True, "BatchPPO's flag, accepted: episodes are played in this "
      'process, where they are rendered.', 'The same as --env_processes here.')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  from agents import configs
  from agents.evaluation import recording
  try:
    for flag in ('num_episodes', 'max_steps', 'frame_every', 'num_agents'):
      value = getattr(args, flag)
      if value is not None and value < 1:
        raise configs.ConfigError(f'--{flag} must be at least 1, got {value}.')
    if os.path.exists(args.outdir) and not os.path.isdir(args.outdir):
      raise configs.ConfigError(f'--outdir {args.outdir} is a file, not a directory.')
    result = recording.visualize(args.logdir, args.outdir, args.num_episodes, args.checkpoint,
                       args.video_format, args.max_steps, args.seed, args.frame_every,
                       args.savedmodel, args.config)
  except configs.ConfigError as error:
    print(f'agents.scripts.visualize: error: {error}', file=sys.stderr)
    return 2
  print(json.dumps({key: result[key] for key in ('mean_return', 'std_return', 'mean_length')}))
  return 0


if __name__ == '__main__':
  sys.exit(main())
