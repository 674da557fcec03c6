"""What BLE's `train` and `eval` commands share: gin, the environment, the agent, the output.

Each step turns the errors of bad input (an unknown agent, a gin binding that does not
bind, an unknown environment, a checkpoint that does not load, ...) into `BadInputError`,
whose message is the one line the command prints before exiting with code 2.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import gymnasium

from agents.python_agents import agent as agent_lib
from agents.python_agents import ble_flags, eval_lib, run_helpers, train_lib
from agents.python_agents import collectors as collectors_lib

if TYPE_CHECKING:
  from agents.evaluation import suites as suites_lib

_BALLOON = 'BalloonLearningEnvironment-v0'
# Errors of a constructor refusing its arguments (gin's or create_agent's).
_CONSTRUCTOR_ERRORS = (ValueError, TypeError, KeyError, ImportError)


class BadInputError(Exception):
  """Input the command refuses; the message names the culprit, on one line."""


def collectors(names: Sequence[str]) -> list[collectors_lib.CollectorConstructor]:
  """The collector constructors named by `--collectors`."""
  try:
    return train_lib.get_collector_data(names)
  except ValueError as error:
    raise BadInputError(f'--collectors: {error}') from None


def bind_gin(args: Any) -> None:
  """`bind_gin_variables(--agent, --agent_gin_file, --gin_bindings)`, as BLE's scripts."""
  try:
    run_helpers.bind_gin_variables(args.agent, args.agent_gin_file, args.gin_bindings)
  except run_helpers.UnknownAgentError as error:
    raise BadInputError(f'--agent: {error}') from None
  except run_helpers.GinConfigError as error:
    head = str(error).split(':', maxsplit=1)[0]
    flag = '--gin_bindings' if 'binding' in head else '--agent_gin_file'
    raise BadInputError(f'{flag}: {error}') from None
  except ImportError as error:
    raise BadInputError(str(error)) from None


def make_env(env_name: str, wind_field: str, renderer: str | None = None) -> gymnasium.Env:
  """`gymnasium.make(env_name)`; the balloon with `wind_field`'s wind and, with a renderer,
  frames (`render_mode='rgb_array'`)."""
  # Registers the balloon.
  # pylint: disable-next=unused-import
  import agents.env  # noqa: F401, PLC0415
  try:
    gymnasium.spec(env_name)
  except gymnasium.error.Error as error:
    raise BadInputError(f'--env_name={env_name}: {_one_line(error)}') from None
  kwargs: dict[str, Any] = {}
  if env_name == _BALLOON:
    kwargs['wind'] = ble_flags.wind_option(wind_field)
  elif wind_field != 'generative':
    raise BadInputError(f'--wind_field={wind_field}: only the balloon ({_BALLOON}) has a wind '
                   f'field, not {env_name}.')
  if renderer is not None:
    kwargs['render_mode'] = 'rgb_array'
  try:
    return gymnasium.make(env_name, **kwargs)
  except (gymnasium.error.Error, TypeError, ValueError) as error:
    raise BadInputError(f'--env_name={env_name}: {_one_line(error)}') from None


def make_agent(name: str, action_space: Any, observation_space: Any) -> Any:
  """`create_agent(name, action_space.n, observation_space.shape)`."""
  if not isinstance(action_space, gymnasium.spaces.Discrete):
    raise BadInputError(f'BLE\'s agents take discrete actions; the environment has {action_space}.')
  try:
    return run_helpers.create_agent(name, int(action_space.n),
                                    observation_shape=tuple(observation_space.shape))
  except run_helpers.UnknownAgentError as error:
    raise BadInputError(f'--agent: {error}') from None
  except _CONSTRUCTOR_ERRORS as error:
    raise BadInputError(f'--agent={name}: {type(error).__name__}: {_one_line(error)}') from None


def train(run_dir: str, env: Any, agent: Any, args: Any,
          collector_constructors: Sequence[collectors_lib.CollectorConstructor]
          ) -> dict[str, Any]:
  """`run_training_loop` in `run_dir`; then, with `--renderer`, the last frame as
  `<base_dir>/balloon_path.png` (BLE's)."""
  from agents.run import directory_lock  # noqa: PLC0415
  try:
    result = train_lib.run_training_loop(
        run_dir, env, agent, args.num_iterations, args.max_episode_length,
        collector_constructors, render_period=args.render_period,
        episodes_per_iteration=args.episodes_per_iteration)
  except (agent_lib.CheckpointMismatchError, agent_lib.CheckpointLoadError,
          directory_lock.DirectoryBusyError) as error:
    raise BadInputError(f'--base_dir: {_one_line(error)}') from None
  if args.renderer is not None:
    frame = env.render()
    if frame is not None:
      import matplotlib.image  # noqa: PLC0415 - the viz extra, asked for by --renderer
      matplotlib.image.imsave(os.path.join(args.base_dir, 'balloon_path.png'), frame)
  return result


def load_checkpoint(agent: Any, checkpoint_dir: str, checkpoint_idx: int) -> None:
  """`agent.load_checkpoint(checkpoint_dir, checkpoint_idx)`, refusing one that fails."""
  try:
    agent.load_checkpoint(checkpoint_dir, checkpoint_idx)
  except Exception as error:  # noqa: BLE001 - any agent's own error: the input is bad
    raise BadInputError(f'--checkpoint_dir={checkpoint_dir} --checkpoint_idx={checkpoint_idx}: '
                   f'the checkpoint does not load ({type(error).__name__}: '
                   f'{_one_line(error)})') from None


def eval_suite(name: str, wind_field: str, num_shards: int,
               shard_idx: int) -> suites_lib.Suite:
  """The suite `--suite` names, with `--wind_field`'s wind, cut to shard `shard_idx`."""
  from agents.evaluation import suites as suites_lib  # noqa: PLC0415
  if shard_idx >= num_shards:
    raise BadInputError(f'--shard_idx={shard_idx}: must be below --num_shards={num_shards}.')
  suite = eval_lib.get_eval_suite(name)
  seeds = suite.shard(num_shards, shard_idx) if num_shards > 1 else suite.seeds
  if not seeds:
    raise BadInputError(f'--shard_idx={shard_idx}: shard {shard_idx} of {num_shards} of {name} '
                   f'has no seeds ({len(suite.seeds)} seeds in all).')
  options = dict(suite.options, wind=ble_flags.wind_option(wind_field))
  return suites_lib.Suite(suite.name, seeds, suite.episode_length, **options)


def result_path(args: Any) -> str:
  """BLE's eval JSON: `<output_dir>/<suite>/<name>.json`, the name being `--name_override`,
  else `<agent>_<checkpoint_idx>` or `<agent>`, then `_<shard_idx>` when sharded."""
  if args.name_override:
    name = args.name_override
  elif args.checkpoint_idx is not None:
    name = f'{args.agent}_{args.checkpoint_idx}'
  else:
    name = args.agent
  if args.num_shards > 1:
    name = f'{name}_{args.shard_idx}'
  return os.path.join(args.output_dir, args.suite, f'{name}.json')


def write_result(path: str, results: Sequence[eval_lib.EvaluationResult], pretty: bool) -> None:
  """Writes the per-seed results as BLE's JSON (indent 2 when `pretty`), atomically."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  temporary = f'{path}.tmp-{os.getpid()}'
  with open(temporary, 'w', encoding='utf-8') as file:
    json.dump(results, file, cls=eval_lib.EvalResultEncoder, indent=2 if pretty else None)
  os.replace(temporary, path)


def _one_line(error: BaseException) -> str:
  text = ' '.join(run_helpers.without_gin_context(str(error)).split())
  return text or type(error).__name__
