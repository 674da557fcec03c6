"""BLE's training command, with BLE 1.0.1's flags: `python -m agents.python_agents.train`.

    python -m agents.python_agents.train --base_dir=/tmp/ble/train --agent=quantile \\
        --num_iterations=200 [--run_number=1] [--episodes_per_iteration=50] \\
        [--max_episode_length=960] [--collectors=console --collectors=pickle] \\
        [--agent_gin_file=FILE] [--gin_bindings='QuantileAgent.learning_rate = 1e-4'] \\
        [--env_name=BalloonLearningEnvironment-v0] [--wind_field=generative|simple] \\
        [--renderer=matplotlib --render_period=10]

As BLE's `python -m balloon_learning_environment.train`: binds the agent's gin
configuration (`run_helpers.bind_gin_variables`), makes the environment and the agent
(`create_agent`), and trains with `run_training_loop` in `<base_dir>/<agent>/<run_number>`
(BLE's train.py joins the agent's name and the run number to `--base_dir`):
`checkpoints/` and `metrics/<collector>/`. With `--renderer`, the last frame is saved as
`<base_dir>/balloon_path.png`, as BLE does. Running the same command again resumes.

Differences: `--wind_field=generative` (the default) flies BLE's generative wind, as
BLE does (NumPy seeds, not JAX keys), `simple` the static field and `procedural` this
project's own generated wind (`ble_names`); episodes are seeded from 0 and the
iteration (`run_training_loop`'s `seed`); an unknown collector is refused, not skipped.
Bad input (a flag, an agent name, a gin file or binding, a base directory holding another
agent's checkpoints) prints one line naming it and exits with code 2, before anything is
written. The gin bindings need gin-config (`pip install 'agents[gin]'`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from agents.python_agents import ble_flags

PROG = 'agents.python_agents.train'


def define_flags() -> ble_flags.Flags:
  """BLE 1.0.1 train.py's flags, names and defaults."""
  flags = ble_flags.Flags(PROG, 'Trains an agent with BLE\'s flags (run_training_loop).')
  flags.string('agent', 'dqn', 'Type of agent to create.')
  flags.string('env_name', 'BalloonLearningEnvironment-v0', 'Name of environment to create.')
  flags.integer('num_iterations', 200, 'Number of iterations to train for.', lower_bound=1)
  flags.integer('max_episode_length', 960, 'Maximum number of steps per episode. Assuming '
                '2 days, with each step lasting 3 minutes.', lower_bound=1)
  flags.string('base_dir', None, 'Directory where to store statistics/images.',
               required=True)
  flags.integer('run_number', 1, 'When running multiple agents in parallel, this number '
                'differentiates between the runs. It is appended to base_dir.')
  flags.enum('wind_field', 'generative', list(ble_flags.WIND_FIELDS),
             'The wind field type to use.')
  flags.string('agent_gin_file', None, 'Gin file for agent configuration.')
  flags.multi_string('collectors', ['console'],
                     'Collectors to include in metrics collection.')
  flags.multi_string('gin_bindings', [], 'Gin bindings to override default values.')
  flags.enum('renderer', None, ble_flags.RENDERERS, 'The renderer to use. Note that it is '
             'fastest to have this set to None.')
  flags.integer('render_period', 10, 'The period to render with. Only has an effect if '
                'renderer is not None.', lower_bound=1)
  flags.integer('episodes_per_iteration', 50, 'The number of episodes to run in one '
                'iteration. Checkpointing occurs at the end of each iteration.',
                lower_bound=1)
  return flags


def run_directory(args: Any) -> str:
  """Where BLE's train.py writes: `<base_dir>/<agent>/<run_number>`."""
  return os.path.join(args.base_dir, args.agent, str(args.run_number))


def main(argv: Sequence[str] | None = None) -> int:
  """Trains as the flags say; returns the exit code (2: bad input, nothing written)."""
  flags = define_flags()
  args = flags.parse(sys.argv[1:] if argv is None else argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  from agents.python_agents import command_setup as setup  # noqa: PLC0415
  try:
    collector_constructors = setup.collectors(args.collectors)
    setup.bind_gin(args)
    env = setup.make_env(args.env_name, args.wind_field, args.renderer)
  except setup.BadInputError as error:
    flags.error(str(error))
  try:
    agent = setup.make_agent(args.agent, env.action_space, env.observation_space)
    result = setup.train(run_directory(args), env, agent, args, collector_constructors)
  except setup.BadInputError as error:
    flags.error(str(error))
  finally:
    env.close()
  if result['interrupted']:
    from agents.tools import interrupts  # noqa: PLC0415
    print(f"{PROG}: interrupted by {result['signal']}; iteration {result['iteration']} is "
          f'saved in {run_directory(args)}.', file=sys.stderr)
    return interrupts.exit_code(result['signal'])
  return 0


if __name__ == '__main__':
  sys.exit(main())
