"""Everything that can be evaluated, behind one batched policy interface.

A batched policy acts for a batch of B environments at once:

    policy.begin_episode(indices, seeds=None)   # rows `indices` start new episodes
    actions = policy(observations)              # [B, *observation shape] -> [B, *action shape]
    policy.feedback(rewards, terminated, truncated)   # optional: after every step, [B] each

`begin_episode` may leave out `seeds`; when it accepts them it gets the suite seeds of
the rows, so a random policy can draw from per-seed streams and a seed's result does
not depend on which row or batch it was flown in. `make_policy(spec, batch_size)` builds:

- `random`: uniformly random actions of any action space, from a stream per suite seed;
- the baselines of the environment's evaluation plug-in (the balloon's `station_seeker`,
  `random_walk`, `mpc` and `perciatelli44`, see `agents.env.balloon.evaluation`); a
  baseline that acts in the slab (`mpc`) sends placeholder actions, its slab computing
  the real ones; a baseline that declares a `spec_argument` is also flown as
  `<name>:<argument>` (`perciatelli44:<PATH>`, the weights at PATH);
- `run:<RUN_DIR>`: a trained run's deterministic policy (the newest checkpoint that
  reads, or `checkpoint`), the algorithm's network and normaliser run as one TensorFlow
  function on the whole batch;
- `savedmodel:<DIR>`: an exported `policy/` SavedModel, on the environment its record
  (`policy.yaml`) names;
- `<module>:<factory>`: a user policy. `factory(batch_size=B)` (or `factory()`) returns
  either a batched policy as above, or an agent with BLE's Agent interface
  (`begin_episode(observation)`, `step(reward, observation)`, `end_episode(reward,
  terminal)`), which `BLEAgentAdapter` flies as one agent per row (the factory is then
  called once per row, with `num_actions=N, observation_shape=(...)` when it takes them).

Which environment an agent flies is `resolve_env_id`'s answer.
"""

import importlib
import inspect
import os

import numpy as np

from agents import plugins
from agents.evaluation import environments
from agents.evaluation.errors import EvaluationError
from agents.run import policy_record

GENERIC_AGENTS = ('random',)


class RandomPolicy:
  """Uniformly random actions of a Discrete, MultiDiscrete, MultiBinary or Box space.

  Row i's actions for the whole episode are drawn at `begin_episode` from a generator
  seeded by (seed, suite seed), so a seed's episode does not depend on its row or batch.
  """

  def __init__(self, action_space, batch_size, episode_length, seed=0):
    self._draw = _uniform_draw(action_space)
    self._seed = seed
    self._length = episode_length
    self._step = np.zeros(batch_size, np.intp)
    self._rows = np.arange(batch_size)
    self._fresh = np.random.default_rng([seed, 2 ** 31])  # rows begun without a seed
    self._actions = np.zeros((batch_size, episode_length, *action_space.shape),
                             action_space.dtype)

  def begin_episode(self, indices, seeds=None):
    seeds = [None] * len(indices) if seeds is None else seeds
    for row, seed in zip(indices, seeds):
      generator = np.random.default_rng(
          self._fresh.integers(2 ** 63) if seed is None else [self._seed, int(seed)])
      self._actions[row] = self._draw(generator, self._length)
      self._step[row] = 0

  def __call__(self, observations):
    step = np.minimum(self._step, self._length - 1)
    self._step += 1
    return self._actions[self._rows, step]


def _uniform_draw(space):
  """A function (generator, count) -> `count` uniform actions of `space`.

  Raises:
    EvaluationError: a space the random policy does not draw from (named).
  """
  from gymnasium import spaces
  if isinstance(space, spaces.Discrete):
    return lambda generator, count: space.start + generator.integers(0, space.n, count)
  if isinstance(space, spaces.MultiDiscrete):
    return lambda generator, count: space.start + generator.integers(
        0, space.nvec, (count, *space.shape))
  if isinstance(space, spaces.MultiBinary):
    return lambda generator, count: generator.integers(0, 2, (count, *space.shape))
  if isinstance(space, spaces.Box) and space.is_bounded():
    return lambda generator, count: generator.uniform(space.low, space.high,
                                                      (count, *space.shape))
  raise EvaluationError(f'the random agent draws from bounded Discrete, MultiDiscrete, '
                        f'MultiBinary or Box action spaces, not {space}.')


class TensorFlowPolicy:
  """A deterministic TensorFlow policy over the whole batch, recurrent state kept per row.

  Wraps an object with `action(observ)` (feed-forward) or `action(observ, state)` and
  `initial_state(n)` (recurrent): an `export.ExportedPolicy` built from a restored run, or
  a loaded SavedModel.
  """

  def __init__(self, model, batch_size, recurrent):
    self._model = model
    self._recurrent = recurrent
    self._state = None
    if recurrent:
      self._initial = model.initial_state(1).numpy()
      self._state = np.repeat(self._initial, batch_size, axis=0)

  def begin_episode(self, indices, seeds=None):
    del seeds
    if self._recurrent:
      self._state[np.asarray(indices, np.intp)] = self._initial

  def __call__(self, observations):
    observations = np.asarray(observations, np.float32)
    if self._recurrent:
      out = self._model.action(observations, self._state)
      self._state = out['state'].numpy()
      return out['action'].numpy()
    return self._model.action(observations).numpy()


class BLEAgentAdapter:
  """Flies agents written against BLE's Agent interface, one agent per batch row.

  Row i's agent sees BLE's calls in BLE's order: `begin_episode(observation)` for the
  first action, `step(reward, observation)` for the next ones and `end_episode(reward,
  terminal)` when the episode ends.
  """

  def __init__(self, agents):
    self._agents = list(agents)
    self._fresh = np.ones(len(self._agents), bool)
    self._rewards = np.zeros(len(self._agents))
    for agent in self._agents:
      set_mode = getattr(agent, 'set_mode', None)
      if callable(set_mode):
        try:
          set_mode('eval')
        except Exception:  # noqa: BLE001 - BLE's AgentMode enum; the string is a best effort
          pass

  def begin_episode(self, indices, seeds=None):
    del seeds
    self._fresh[np.asarray(indices, np.intp)] = True

  def __call__(self, observations):
    actions = np.empty(len(self._agents), np.int64)
    for row, agent in enumerate(self._agents):
      if self._fresh[row]:
        actions[row] = agent.begin_episode(observations[row])
        self._fresh[row] = False
      else:
        actions[row] = agent.step(float(self._rewards[row]), observations[row])
    return actions

  def feedback(self, rewards, terminated, truncated):
    self._rewards = np.asarray(rewards, np.float64)
    for row in np.flatnonzero(np.asarray(terminated) | np.asarray(truncated)):
      self._agents[row].end_episode(float(self._rewards[row]), bool(terminated[row]))


def is_ble_agent(obj):
  """Whether `obj` has BLE's Agent interface (rather than the batched one)."""
  return all(callable(getattr(obj, name, None))
             for name in ('begin_episode', 'step', 'end_episode')) and not callable(obj)


def describe_agent(spec, checkpoint=None):
  """What identifies an agent in a shard file: {'kind', ...} (paths made absolute).

  A baseline with a `describe(argument)` adds what it returns (Perciatelli44: the SHA-256
  of its weights).

  Raises:
    EvaluationError: an unknown agent, or a baseline whose `describe` refuses its input.
  """
  kind, rest = split_spec(spec)
  if kind == 'baseline':
    return {'kind': 'baseline', **_baseline_description(spec)}
  if kind == 'run':
    run_dir = os.path.abspath(rest)
    return {'kind': 'run', 'run_dir': run_dir,
            'checkpoint': os.path.basename(resolve_checkpoint(run_dir, checkpoint))}
  if kind == 'savedmodel':
    return {'kind': 'savedmodel', 'path': os.path.abspath(rest)}
  return {'kind': kind}


def split_spec(spec):
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


def _spec_argument(name):
  """What the baseline `name` takes after a colon (its `spec_argument`), or None."""
  env_id = environments.baseline_env_id(name)
  if env_id is None:
    return None
  return environments.get(env_id).baselines[name].spec_argument


def _baseline_usage(name):
  """How a baseline is named in an agent spec: `mpc`, `perciatelli44[:PATH]`."""
  argument = _spec_argument(name)
  return name if argument is None else f'{name}[:{argument}]'


def baseline_parts(spec):
  """(name, argument) of a baseline's spec, the argument None for a bare name.

  `mpc` -> ('mpc', None); `perciatelli44:w.pb` -> ('perciatelli44', 'w.pb').
  """
  if spec in GENERIC_AGENTS or environments.baseline_env_id(spec) is not None:
    return spec, None
  name, _, argument = spec.partition(':')
  return name, argument


def _baseline_description(spec):
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


def run_env_id(run_dir):
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


def resolve_env_id(spec, env_id=None):
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
    return environments.baseline_env_id(baseline_parts(rest)[0])
  return environments.default_env_id()


def observation_kwargs(spec, environment):
  """The environment options an agent must be flown with (`EnvironmentEvaluation
  .observation_kwargs`): those of a run's config (`run:`) or of an exported policy's
  record (`savedmodel:`); {} for any other agent.

  Raises:
    EvaluationError: an unreadable config or a damaged record.
  """
  kwargs = _trained_env_kwargs(spec)
  return {} if kwargs is None else environment.observation_kwargs(kwargs)


def suite_defaults(spec, environment):
  """The suite options an agent is flown with when its suite names none
  (`EnvironmentEvaluation.suite_defaults`: the balloon's wind it trained in): from a
  run's config (`run:`) or an exported policy's record (`savedmodel:`); {} for any other
  agent (the environment's defaults).

  Raises:
    EvaluationError: an unreadable config or a damaged record.
  """
  kwargs = _trained_env_kwargs(spec)
  return {} if kwargs is None else environment.suite_defaults(kwargs)


def _trained_env_kwargs(spec):
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


def resolve_checkpoint(run_dir, checkpoint=None):
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
    path = checkpoints.newest_readable(directory) if os.path.isdir(directory) else None
  except checkpoints.CheckpointError as error:
    raise EvaluationError(f'run:{run_dir}: {error}') from None
  if path is None:
    raise EvaluationError(f'run directory {run_dir} has no checkpoint in {directory}.')
  return path


def make_policy(spec, batch_size, episode_length=None, checkpoint=None, env_id=None):
  """The batched policy of an agent spec (see the module docstring).

  Args:
    spec: the agent spec.
    batch_size: rows of the batch.
    episode_length: steps of an episode (None: the environment's default).
    checkpoint: for `run:`, a checkpoint name or prefix (None: the newest that reads).
    env_id: the environment flown (None: see `resolve_env_id`).

  Raises:
    EvaluationError: an unknown agent, a run without a checkpoint or of another
      environment, a SavedModel that does not load or takes other observations, or a
      factory that cannot be imported or does not return a policy.
  """
  return policy_builder(spec, episode_length, checkpoint, env_id)(batch_size)


def policy_builder(spec, episode_length=None, checkpoint=None, env_id=None):
  """A function `batch_size -> batched policy` for an agent spec (arguments as `make_policy`).

  What is costly to load (a run's checkpoint, a SavedModel, a factory's module) is loaded
  here, once; each call then builds a policy of its own with its own per-row state, so
  several batches (the fleets of `runner.fly`) can be flown side by side.

  Raises:
    EvaluationError: as `make_policy`, here or at the first call.
  """
  kind, rest = split_spec(spec)
  environment = environments.get(resolve_env_id(spec, env_id))
  episode_length = episode_length or environment.default_episode_length()
  if kind == 'baseline':
    if rest in GENERIC_AGENTS:
      action_space = environment.spaces[1]
      return lambda batch_size: RandomPolicy(action_space, batch_size, episode_length)
    name, argument = baseline_parts(rest)
    if name not in environment.baselines:
      raise EvaluationError(f'agent {name!r} is a baseline of '
                            f'{environments.baseline_env_id(name)}, not of {environment.env_id}.')
    baseline = environment.baselines[name]
    _baseline_description(rest)  # refuses missing or bad weights here, in one line
    arguments = () if argument is None else (argument,)
    return lambda batch_size: baseline(batch_size, episode_length, *arguments)
  if kind == 'run':
    model = _run_model(rest, checkpoint, environment.env_id)
  elif kind == 'savedmodel':
    model = _saved_model(rest, environment)
  else:
    factory = _import_factory(rest)
    return lambda batch_size: _factory_policy(factory, rest, batch_size, environment)
  recurrent = hasattr(model, 'initial_state')
  return lambda batch_size: TensorFlowPolicy(model, batch_size, recurrent)


def _run_model(run_dir, checkpoint, env_id):
  """The deterministic policy module of a run's checkpoint (what it exports as policy/).

  For PPO: the network and the observation normaliser, any batch size, in memory.
  """
  path = resolve_checkpoint(run_dir, checkpoint)
  trained_on = run_env_id(run_dir)
  if trained_on != env_id:
    raise EvaluationError(f'run directory {run_dir} trained on {trained_on}, not {env_id}.')
  from agents.training import builders
  try:
    _, algorithm, observation_space, _ = builders.restore_algorithm(
        run_dir, path, is_training=False)
  except (ValueError, FileNotFoundError) as error:  # ConfigError is a ValueError
    raise EvaluationError(f'run:{run_dir}: {error}') from None
  return algorithm.export_policy(observation_space)


def saved_model_record(path):
  """The record (`agents.run.policy_record`) of an exported policy folder; None if it has none.

  Raises:
    EvaluationError: the record is damaged (naming the file and the field).
  """
  try:
    return policy_record.load(path)
  except policy_record.PolicyRecordError as error:
    raise EvaluationError(f'savedmodel:{path}: {error}') from None


def load_saved_model(path):
  """Loads an exported policy (any environment); EvaluationError unless it has `action`."""
  if not os.path.exists(os.path.join(path, 'saved_model.pb')):
    raise EvaluationError(f'savedmodel:{path} is not a SavedModel directory (no '
                          'saved_model.pb).')
  import tensorflow as tf
  model = tf.saved_model.load(path)
  if not hasattr(model, 'action'):
    raise EvaluationError(f'savedmodel:{path} has no `action` function (export it with '
                          'agents.scripts.export).')
  return model


def _saved_model(path, environment):
  """`load_saved_model`, refusing a model that does not take the environment's observations."""
  model = load_saved_model(path)
  options = observation_kwargs(f'savedmodel:{path}', environment)
  check_observation_shape(model, path, environment.observation_space(options),
                          environment.env_id)
  return model


def check_observation_shape(model, path, observation_space, environment):
  """Refuses a SavedModel whose `action` takes observations of another shape.

  Args:
    model: the loaded SavedModel.
    path: its directory, for the message.
    observation_space: the environment's observation space (or its shape).
    environment: what the environment is, for the message.

  Raises:
    EvaluationError: naming both shapes.
  """
  expected = tuple(getattr(observation_space, 'shape', observation_space))
  shape = _input_shape(model.action)
  if shape is not None and tuple(shape[1:]) != expected:
    raise EvaluationError(f'savedmodel:{path} takes observations of shape {tuple(shape)}, not '
                          f'[B, {", ".join(map(str, expected))}] ({environment}).')


def _input_shape(function):
  """The observation shape of a loaded SavedModel function, or None if unknown."""
  try:
    args, _ = function.concrete_functions[0].structured_input_signature
    return args[0].shape.as_list()
  except (AttributeError, IndexError, TypeError):
    return None


def _import_factory(spec):
  module_name, _, name = spec.partition(':')
  try:
    module = importlib.import_module(module_name)
  except Exception as error:  # noqa: BLE001 - any import failure is the user's input
    raise EvaluationError(f'--agent {spec}: cannot import module {module_name!r}: '
                          f'{type(error).__name__}: {error}') from None
  factory = getattr(module, name, None)
  if not callable(factory):
    raise EvaluationError(f'--agent {spec}: module {module_name!r} has no callable {name!r}.')
  return factory


def _factory_policy(factory, spec, batch_size, environment):
  observation_space, action_space = environment.spaces
  offered = dict(batch_size=batch_size, observation_shape=tuple(observation_space.shape))
  if hasattr(action_space, 'n'):
    offered['num_actions'] = int(action_space.n)
  first = _call_factory(factory, spec, **offered)
  if is_ble_agent(first):
    rest = [_call_factory(factory, spec, **offered) for _ in range(batch_size - 1)]
    return BLEAgentAdapter([first, *rest])
  if not (callable(first) and callable(getattr(first, 'begin_episode', None))):
    raise EvaluationError(
        f'--agent {spec}: the factory returned a {type(first).__name__}, which is neither a '
        'batched policy (callable, with begin_episode(indices)) nor a BLE Agent '
        '(begin_episode, step, end_episode).')
  return first


def _call_factory(factory, spec, **offered):
  try:
    parameters = inspect.signature(factory).parameters
  except (TypeError, ValueError):
    parameters = {}
  takes_all = any(p.kind == p.VAR_KEYWORD for p in parameters.values())
  kwargs = {key: value for key, value in offered.items() if takes_all or key in parameters}
  try:
    return factory(**kwargs)
  except Exception as error:  # noqa: BLE001 - the user's factory failed
    raise EvaluationError(f'--agent {spec}: the factory raised {type(error).__name__}: '
                          f'{error}') from None


def check_actions(actions, batch_size, spec, action_space):
  """Actions as an array [B, *action shape] of the space's dtype.

  Integral floats are accepted for integer spaces.

  Raises:
    EvaluationError: actions that are not an array, of another shape, or outside an
      integer action space (naming the agent).
  """
  try:
    actions = np.asarray(actions)
  except Exception as error:  # noqa: BLE001
    raise EvaluationError(f'--agent {spec} returned actions that are not an array: '
                          f'{error}') from None
  expected = (batch_size, *action_space.shape)
  if actions.shape != expected:
    raise EvaluationError(f'--agent {spec} returned actions of shape {actions.shape} for '
                          f'{batch_size} observations; expected {expected}.')
  dtype = np.dtype(action_space.dtype)
  if dtype.kind not in 'iu':
    return actions.astype(dtype)
  if actions.dtype.kind == 'f' and np.all(np.isfinite(actions)) and np.all(
      actions == np.round(actions)):
    actions = actions.astype(np.int64)
  if actions.dtype.kind not in 'iu' or not all(
      action_space.contains(row) for row in actions.astype(dtype)):
    bad = actions.ravel()[:5].tolist()
    raise EvaluationError(f'--agent {spec} returned actions {bad}... of dtype {actions.dtype}; '
                          f'expected actions of {action_space}.')
  return actions.astype(dtype)


def begin_episode(policy, indices, seeds):
  """Calls `policy.begin_episode(indices, seeds=...)`, or without seeds if not accepted."""
  try:
    parameters = inspect.signature(policy.begin_episode).parameters
  except (TypeError, ValueError):
    parameters = {}
  if 'seeds' in parameters or any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
    policy.begin_episode(indices, seeds=seeds)
  else:
    policy.begin_episode(indices)
