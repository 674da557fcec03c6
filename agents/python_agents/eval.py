"""BLE's evaluation command, with BLE 1.0.1's flags: `python -m agents.python_agents.eval`.

    python -m agents.python_agents.eval --agent=station_seeker --suite=small_eval \\
        [--output_dir=/tmp/ble/eval] [--num_shards=K --shard_idx=i] [--pretty_json] \\
        [--checkpoint_dir=DIR --checkpoint_idx=N] [--name_override=NAME] \\
        [--agent_gin_file=FILE] [--gin_bindings=...] [--wind_field=generative|simple] \\
        [--renderer=matplotlib --render_period=10]

As BLE's `python -m balloon_learning_environment.eval.eval`: binds the agent's gin
configuration, creates the agent, loads `--checkpoint_idx` from `--checkpoint_dir` when
both are given, flies the suite's seeds (shard `--shard_idx` of `--num_shards`:
contiguous slices, as BLE's) with `eval_lib.eval_agent`, and writes BLE's JSON, one
object per seed, to `<output_dir>/<suite>/<name>.json`, the name being
`--name_override`, else `<agent>_<checkpoint_idx>` or `<agent>`, with `_<shard_idx>`
appended when `--num_shards` > 1. The defaults are BLE's: `--agent=dqn`,
`--suite=big_eval` (10,000 seeds), `--output_dir=/tmp/ble/eval`.

Differences: `--wind_field=generative` (the default) flies BLE's generative wind, as
BLE does (wind/generative.py; NumPy seeds, not JAX keys), `simple` the static field and
`procedural` this project's own generated wind; `--renderer` and `--render_period` are
accepted and unused (draw flights with `agents.scripts.visualize`). Bad input (a flag,
an agent, a gin file or binding, a shard index not below `--num_shards`, a checkpoint that
does not load) prints one line naming it and exits with code 2, before anything is
written.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from agents.python_agents import ble_flags

PROG = 'agents.python_agents.eval'


def define_flags() -> ble_flags.Flags:
  """BLE 1.0.1 eval.py's flags, names and defaults."""
  from agents.python_agents import eval_lib  # noqa: PLC0415 - the suites' names
  flags = ble_flags.Flags(PROG, "Evaluates an agent with BLE's flags (eval_agent).")
  flags.string('agent', 'dqn', 'The name of the agent to create.')
  flags.enum('suite', 'big_eval', eval_lib.available_suites(), 'The evaluation suite to run.')
  flags.enum('wind_field', 'generative', list(ble_flags.WIND_FIELDS),
             'The wind field type to use.')
  flags.string('agent_gin_file', None, 'Gin file for agent configuration.')
  flags.multi_string('gin_bindings', [], 'Gin bindings to override default values.')
  flags.string('output_dir', '/tmp/ble/eval', 'The directory to output the json summary.')
  flags.integer('num_shards', 1, 'The number of per-agent shards to split the eval job into.',
                lower_bound=1)
  flags.integer('shard_idx', 0, 'The index of the shard.', lower_bound=0)
  flags.boolean('pretty_json', False, 'If true, it will write json files with an indent of 2.')
  flags.string('checkpoint_dir', None, 'The directory to load checkpoints from.')
  flags.integer('checkpoint_idx', None, 'The checkpoint iteration number to load.')
  flags.string('name_override', None,
               'If supplied, this will be the name used for the json output file.')
  flags.enum('renderer', None, ble_flags.RENDERERS, 'The renderer to use (unused here).')
  flags.integer('render_period', 10, 'The period to render with (unused here).',
                lower_bound=1)
  return flags


def main(argv: Sequence[str] | None = None) -> int:
  """Evaluates as the flags say; returns the exit code (2: bad input, nothing written)."""
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  flags = define_flags()
  args = flags.parse(sys.argv[1:] if argv is None else argv)
  from agents.evaluation import environments  # noqa: PLC0415
  from agents.python_agents import command_setup as setup  # noqa: PLC0415
  from agents.python_agents import eval_lib  # noqa: PLC0415
  try:
    suite = setup.eval_suite(args.suite, args.wind_field, args.num_shards, args.shard_idx)
    setup.bind_gin(args)
    observation_space, action_space = environments.get(environments.default_env_id()).spaces
    agent = setup.make_agent(args.agent, action_space, observation_space)
    if args.checkpoint_dir is not None and args.checkpoint_idx is not None:
      setup.load_checkpoint(agent, args.checkpoint_dir, args.checkpoint_idx)
  except setup.BadInputError as error:
    flags.error(str(error))
  results = eval_lib.eval_agent(agent, None, suite, render_period=args.render_period)
  path = setup.result_path(args)
  setup.write_result(path, results, args.pretty_json)
  print(f'{len(results)} seeds of {args.suite}: {path}')
  return 0


if __name__ == '__main__':
  sys.exit(main())
