"""What an agent spec names, and where and with what options the agent flies.

An agent spec is what `--agent` takes (`agents.evaluation.policies` builds its policy):
a baseline (`random`, an evaluation plug-in's baselines, `<name>:<argument>` for one that
declares a `spec_argument`), `run:<RUN_DIR>`, `savedmodel:<DIR>` or `<module>:<factory>`.

    from agents.evaluation import agent_specs
    agent_specs.split_spec('run:logdir/run')           # ('run', 'logdir/run')
    agent_specs.resolve_env_id('savedmodel:policy/')  # the env_id its policy.yaml names

`resolve_env_id` says which environment an agent flies, `observation_kwargs` and
`suite_defaults` the options it flies with, and `describe_agent` what identifies it in a
shard file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from agents import plugins
from agents.evaluation import environments
from agents.evaluation.errors import EvaluationError
from agents.run import policy_record

GENERIC_AGENTS = ('random',)


def describe_agent(spec: str, checkpoint: str | None = None) -> dict[str, Any]:
  """What identifies an agent in a shard file: {'kind', ...} (paths made absolute).

  A baseline with a `describe(argument)` adds what it returns (Perciatelli44: the SHA-256
  of its weights).

  Raises:
    EvaluationError: an unknown agent, or a baseline whose `describe` refuses its input.
  """
  kind, rest = split_spec(spec)
  if kind == 'baseline':
    return {'kind': 'baseline', **baseline_description(spec)}
  if kind == 'run':
    run_dir = os.path.abspath(rest)
    return {'kind': 'run', 'run_dir': run_dir,
            'checkpoint': os.path.basename(resolve_checkpoint(run_dir, checkpoint))}
  if kind == 'savedmodel':
    return {'kind': 'savedmodel', 'path': os.path.abspath(rest)}
  return {'kind': kind}


def split_spec(spec: str) -> tuple[str, str]:
  """('baseline' | 'run' | 'savedmodel' | 'factory', rest) of an agent spec.

  Raises:
    EvaluationError: the spec is none of these (the message lists the baselines).
  """
  if spec in GENERIC_AGENTS or environments.baseline_env_id(spec) is not None:
    return 'baseline', spec
  for kind in ('run', 'savedmodel'):
    if spec.startswith(kind + ':'):
      return kind, spec[len(kind) + 1:]
  module, colon, factory = spec.partition(':')
  if colon and factory and _spec_argument(module) is not None:
    return 'baseline', spec
  if colon and module and factory:
    return 'factory', spec
  baselines = sorted({_baseline_usage(name) for env_id in plugins.ENVIRONMENTS.names()
                      for name in environments.get(env_id).baselines})
  raise EvaluationError(
      f'unknown agent {spec!r}; choose {", ".join([*baselines, *GENERIC_AGENTS])}, '
      'run:<RUN_DIR>, savedmodel:<DIR> or <module>:<factory>.')


def _spec_argument(name: str) -> str | None:
  """What the baseline `name` takes after a colon (its `spec_argument`), or None."""
  env_id = environments.baseline_env_id(name)
  if env_id is None:
    return None
  return environments.get(env_id).baselines[name].spec_argument


def _baseline_usage(name: str) -> str:
  """How a baseline is named in an agent spec: `mpc`, `perciatelli44[:PATH]`."""
  argument = _spec_argument(name)
  return name if argument is None else f'{name}[:{argument}]'


def baseline_parts(spec: str) -> tuple[str, str | None]:
  """(name, argument) of a baseline's spec, the argument None for a bare name.

  `mpc` -> ('mpc', None); `perciatelli44:w.pb` -> ('perciatelli44', 'w.pb').
  """
  if spec in GENERIC_AGENTS or environments.baseline_env_id(spec) is not None:
    return spec, None
  name, _, argument = spec.partition(':')
  return name, argument


def baseline_description(spec: str) -> dict[str, Any]:
  """What the baseline's `describe(argument)` says of it ({} without one).

  Raises:
    EvaluationError: `describe` refuses the argument (missing or bad weights), in one line.
  """
  name, argument = baseline_parts(spec)
  env_id = environments.baseline_env_id(name)
  if env_id is None:
    return {}
  try:
    return dict(environments.get(env_id).baselines[name].describe(argument))
  except (OSError, ValueError) as error:
    raise EvaluationError(f'--agent {spec}: {error}') from None


def run_env_id(run_dir: str) -> str:
  """The Gymnasium id a run trained on, from its config.yaml.

  Raises:
    EvaluationError: the run directory or its config.yaml is missing or unreadable.
  """
  from agents import configs
  path = os.path.join(run_dir, 'config.yaml')
  if not os.path.isdir(run_dir):
    raise EvaluationError(f'run directory {run_dir} does not exist.')
  if not os.path.exists(path):
    raise EvaluationError(f'run directory {run_dir} has no config.yaml.')
  try:
    config = configs.load_yaml(path)
  except (OSError, ValueError) as error:  # ConfigError is a ValueError
    raise EvaluationError(f'run:{run_dir}: {error}') from None
  return config.get('env') or config.get('environment', {}).get('id')


def resolve_env_id(spec: str, env_id: str | None = None) -> str:
  """The environment an agent flies: `env_id`, else the agent's own, else the default.

  The agent's own: a run's environment (`run:`), an exported policy's (`savedmodel:`, from
  its record, `policy.yaml`), or the environment whose evaluation plug-in has the
  baseline. Else the one environment with an evaluation plug-in
  (`environments.default_env_id`).

  Raises:
    EvaluationError: an unknown agent, no environment named and no default one, a
      damaged policy record, or an `env_id` other than the record's.
  """
  kind, rest = split_spec(spec)
  if kind == 'savedmodel':
    record = saved_model_record(rest)
    if record is not None:
      if env_id and env_id != record['env_id']:
        raise EvaluationError(f'savedmodel:{rest} was trained on {record["env_id"]} (its '
                              f'{policy_record.FILENAME}), not {env_id}.')
      return record['env_id']
  if env_id:
    return env_id
  if kind == 'run':
    run_dir = os.path.abspath(rest)
    if os.path.exists(os.path.join(run_dir, 'config.yaml')):
      return run_env_id(run_dir)
  elif kind == 'baseline' and rest not in GENERIC_AGENTS:
    baseline_env_id = environments.baseline_env_id(baseline_parts(rest)[0])
    if baseline_env_id is not None:  # Always, for a spec that `split_spec` took.
      return baseline_env_id
  return environments.default_env_id()


def observation_kwargs(spec: str,
                       environment: environments.EnvironmentEvaluation) -> dict[str, Any]:
  """The environment options an agent must be flown with (`EnvironmentEvaluation
  .observation_kwargs`): those of a run's config (`run:`) or of an exported policy's
  record (`savedmodel:`); {} for any other agent.

  Raises:
    EvaluationError: an unreadable config or a damaged record.
  """
  kwargs = _trained_env_kwargs(spec)
  return {} if kwargs is None else environment.observation_kwargs(kwargs)


def suite_defaults(spec: str, environment: environments.EnvironmentEvaluation) -> dict[str, Any]:
  """The suite options an agent is flown with when its suite names none
  (`EnvironmentEvaluation.suite_defaults`: the balloon's wind it trained in): from a
  run's config (`run:`) or an exported policy's record (`savedmodel:`); {} for any other
  agent (the environment's defaults).

  Raises:
    EvaluationError: an unreadable config or a damaged record.
  """
  kwargs = _trained_env_kwargs(spec)
  return {} if kwargs is None else environment.suite_defaults(kwargs)


def _trained_env_kwargs(spec: str) -> Mapping[str, Any] | None:
  """The environment kwargs of the config a `run:` or `savedmodel:` agent trained with,
  as saved (None for other agents, or none saved)."""
  kind, rest = split_spec(spec)
  config = None
  if kind == 'run' and os.path.exists(os.path.join(rest, 'config.yaml')):
    from agents.configs import yaml_io
    try:
      config = yaml_io.read_yaml(os.path.join(rest, 'config.yaml'))
    except (OSError, ValueError) as error:  # ConfigError is a ValueError
      raise EvaluationError(f'run:{rest}: {error}') from None
  elif kind == 'savedmodel':
    record = saved_model_record(rest)
    config = None if record is None else record['config']
  if not config:
    return None
  return (config.get('environment') or {}).get('kwargs') or {}


def resolve_checkpoint(run_dir: str, checkpoint: str | None = None) -> str:
  """The checkpoint prefix to restore: `checkpoint` (name or path) or the newest that reads.

  A damaged newest checkpoint (a kill during a save, a full disk) is skipped with a
  warning, as on resume (`agents.run.checkpoints.newest_readable`).

  Raises:
    EvaluationError: the run directory or the checkpoint does not exist, or every
      checkpoint of the run is damaged.
  """
  if not os.path.isdir(run_dir):
    raise EvaluationError(f'run directory {run_dir} does not exist.')
  directory = os.path.join(run_dir, 'checkpoints')
  if checkpoint:
    path = checkpoint if os.path.dirname(checkpoint) else os.path.join(directory, checkpoint)
    if not os.path.exists(path + '.index'):
      raise EvaluationError(f'checkpoint {path} does not exist (no {path}.index).')
    return path
  from agents.run import checkpoints
  try:
    newest = checkpoints.newest_readable(directory) if os.path.isdir(directory) else None
  except checkpoints.CheckpointError as error:
    raise EvaluationError(f'run:{run_dir}: {error}') from None
  if newest is None:
    raise EvaluationError(f'run directory {run_dir} has no checkpoint in {directory}.')
  return newest


def saved_model_record(path: str) -> dict[str, Any] | None:
  """The record (`agents.run.policy_record`) of an exported policy folder; None if it has none.

  Raises:
    EvaluationError: the record is damaged (naming the file and the field).
  """
  try:
    return policy_record.load(path)
  except policy_record.PolicyRecordError as error:
    raise EvaluationError(f'savedmodel:{path}: {error}') from None
