"""Everything that can be evaluated, behind one batched policy interface.

A batched policy acts for a batch of B balloons at once:

    policy.begin_episode(indices, seeds=None)   # rows `indices` start new episodes
    actions = policy(observations)              # float32 [B, 1099] -> int [B] in {0, 1, 2}
    policy.feedback(rewards, terminated, truncated)   # optional: after every step, [B] each

`begin_episode` may leave out `seeds`; when it accepts them it gets the suite seeds of
the rows, so a random policy can draw from per-seed streams and a seed's result does
not depend on which row or batch it was flown in. `make_policy(spec, batch_size)` builds:

- `station_seeker`, `random_walk`, `random`: the baselines (agents/env/balloon/baselines.py);
- `run:<RUN_DIR>`: a trained run's deterministic policy (latest or `checkpoint`), the
  algorithm's network and normaliser run as one TensorFlow function on the whole batch;
- `savedmodel:<DIR>`: an exported `policy/` SavedModel;
- `<module>:<factory>`: a user policy. `factory(batch_size=B)` (or `factory()`) returns
  either a batched policy as above, or an agent with BLE's Agent interface
  (`begin_episode(observation)`, `step(reward, observation)`, `end_episode(reward,
  terminal)`), which `BLEAgentAdapter` flies as one agent per row (the factory is then
  called once per row, with `num_actions=3, observation_shape=(1099,)` when it takes them).
"""

import importlib
import inspect
import os

import numpy as np

from agents.env.balloon import baselines, constants
from agents.evaluation.errors import EvaluationError

BASELINES = ('station_seeker', 'random_walk', 'random')
BALLOON_ENV_ID = constants.BALLOON_ENV_ID


class StationSeeker:
  """BLE's StationSeeker, stateless."""

  def begin_episode(self, indices, seeds=None):
    del indices, seeds

  def __call__(self, observations):
    return baselines.station_seeker(observations)


class _PerSeedStream:
  """Per-row draws precomputed at `begin_episode` from a generator seeded by the suite seed."""

  def __init__(self, batch_size, episode_length, seed):
    self._seed = seed
    self._length = episode_length
    self._step = np.zeros(batch_size, np.intp)
    self._rows = np.arange(batch_size)
    self._fresh = np.random.default_rng([seed, 2 ** 31])  # rows begun without a seed

  def _generator(self, suite_seed):
    if suite_seed is None:
      return np.random.default_rng(self._fresh.integers(2 ** 63))
    return np.random.default_rng([self._seed, int(suite_seed)])

  def _next_step(self):
    step = np.minimum(self._step, self._length - 1)
    self._step += 1
    return step


class RandomPolicy(_PerSeedStream):
  """Uniformly random actions, from a stream per suite seed."""

  def __init__(self, batch_size, episode_length=constants.EPISODE_STEPS, seed=0):
    super().__init__(batch_size, episode_length, seed)
    self._actions = np.ones((batch_size, episode_length), np.int64)

  def begin_episode(self, indices, seeds=None):
    seeds = [None] * len(indices) if seeds is None else seeds
    for row, seed in zip(indices, seeds):
      self._actions[row] = self._generator(seed).integers(0, 3, self._length)
      self._step[row] = 0

  def __call__(self, observations):
    return self._actions[self._rows, self._next_step()]


class RandomWalkPolicy(_PerSeedStream):
  """BLE's random walk (see `baselines.RandomWalkPolicy`), from a stream per suite seed."""

  def __init__(self, batch_size, episode_length=constants.EPISODE_STEPS, seed=0):
    super().__init__(batch_size, episode_length, seed)
    self._noise = np.zeros((batch_size, episode_length))
    self._target = np.zeros(batch_size)

  def begin_episode(self, indices, seeds=None):
    seeds = [None] * len(indices) if seeds is None else seeds
    for row, seed in zip(indices, seeds):
      generator = self._generator(seed)
      self._target[row] = generator.uniform(6500.0, 11400.0)
      self._noise[row] = generator.standard_normal(self._length)
      self._step[row] = 0

  def __call__(self, observations):
    step = self._next_step()
    # The spread of the target's step grows with the time elapsed (BLE's rule).
    elapsed_s = step * constants.AGENT_STEP_S
    self._target += elapsed_s * 0.1666 * self._noise[self._rows, step]
    pressure = constants.COLUMN_MIN_PRESSURE + np.asarray(observations)[:, 0] * (
        constants.COLUMN_MAX_PRESSURE - constants.COLUMN_MIN_PRESSURE)
    return np.where(pressure - 100.0 > self._target, constants.UP,
                    np.where(pressure + 100.0 < self._target, constants.DOWN,
                             constants.STAY)).astype(np.int64)


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
  """What identifies an agent in a shard file: {'kind', ...} (paths made absolute)."""
  kind, rest = split_spec(spec)
  if kind == 'run':
    run_dir = os.path.abspath(rest)
    return {'kind': 'run', 'run_dir': run_dir,
            'checkpoint': os.path.basename(resolve_checkpoint(run_dir, checkpoint))}
  if kind == 'savedmodel':
    return {'kind': 'savedmodel', 'path': os.path.abspath(rest)}
  return {'kind': kind}


def split_spec(spec):
  """('baseline' | 'run' | 'savedmodel' | 'factory', rest) of an agent spec."""
  if spec in BASELINES:
    return 'baseline', spec
  for kind in ('run', 'savedmodel'):
    if spec.startswith(kind + ':'):
      return kind, spec[len(kind) + 1:]
  module, colon, factory = spec.partition(':')
  if colon and module and factory:
    return 'factory', spec
  raise EvaluationError(
      f'unknown agent {spec!r}; choose station_seeker, random_walk, random, run:<RUN_DIR>, '
      'savedmodel:<DIR> or <module>:<factory>.')


def resolve_checkpoint(run_dir, checkpoint=None):
  """The checkpoint prefix to restore: `checkpoint` (name or path) or the latest.

  Raises:
    EvaluationError: the run directory or the checkpoint does not exist.
  """
  if not os.path.isdir(run_dir):
    raise EvaluationError(f'run directory {run_dir} does not exist.')
  directory = os.path.join(run_dir, 'checkpoints')
  if checkpoint:
    path = checkpoint if os.path.dirname(checkpoint) else os.path.join(directory, checkpoint)
    if not os.path.exists(path + '.index'):
      raise EvaluationError(f'checkpoint {path} does not exist (no {path}.index).')
    return path
  from agents.tools import checkpoints
  try:
    path = checkpoints.newest_readable(directory) if os.path.isdir(directory) else None
  except checkpoints.CheckpointError as error:
    raise EvaluationError(str(error)) from None
  if path is None:
    raise EvaluationError(f'run directory {run_dir} has no checkpoint in {directory}.')
  return path


def make_policy(spec, batch_size, episode_length=constants.EPISODE_STEPS, checkpoint=None):
  """The batched policy of an agent spec (see the module docstring).

  Raises:
    EvaluationError: an unknown agent, a run without a checkpoint or of another
      environment, a SavedModel that does not load, or a factory that cannot be imported
      or does not return a policy.
  """
  return policy_builder(spec, episode_length, checkpoint)(batch_size)


def policy_builder(spec, episode_length=constants.EPISODE_STEPS, checkpoint=None):
  """A function `batch_size -> batched policy` for an agent spec.

  What is costly to load (a run's checkpoint, a SavedModel, a factory's module) is loaded
  here, once; each call then builds a policy of its own with its own per-row state, so
  several batches (the fleets of `runner.fly`) can be flown side by side.

  Raises:
    EvaluationError: as `make_policy`, here or at the first call.
  """
  kind, rest = split_spec(spec)
  if kind == 'baseline':
    if rest == 'station_seeker':
      return lambda batch_size: StationSeeker()
    cls = RandomPolicy if rest == 'random' else RandomWalkPolicy
    return lambda batch_size: cls(batch_size, episode_length)
  if kind == 'run':
    model = _run_model(rest, checkpoint)
  elif kind == 'savedmodel':
    model = _saved_model(rest)
  else:
    factory = _import_factory(rest)
    return lambda batch_size: _factory_policy(factory, rest, batch_size)
  recurrent = hasattr(model, 'initial_state')
  return lambda batch_size: TensorFlowPolicy(model, batch_size, recurrent)


def _run_model(run_dir, checkpoint):
  path = resolve_checkpoint(run_dir, checkpoint)
  try:
    config, model, observation_space = _restore_policy(run_dir, path)
  except (ValueError, FileNotFoundError) as error:  # ConfigError is a ValueError
    raise EvaluationError(f'run:{run_dir}: {error}') from None
  env_id = config.get('env') or config.get('environment', {}).get('id')
  if env_id != BALLOON_ENV_ID:
    raise EvaluationError(f'run directory {run_dir} trained on {env_id}, not {BALLOON_ENV_ID}.')
  del observation_space
  return model


def _restore_policy(run_dir, path):
  """(config, deterministic policy module with `action`, observation space) of a checkpoint.

  The module is what the run exports as its SavedModel (for PPO: the network and the
  observation normaliser, any batch size), kept in memory.
  """
  from agents import builders
  config, algorithm, observation_space, _ = builders.restore_algorithm(
      run_dir, path, is_training=False)
  return config, algorithm.export_policy(observation_space), observation_space


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


def _saved_model(path):
  """`load_saved_model`, refusing a model that does not take the balloon's observations."""
  model = load_saved_model(path)
  check_observation_shape(model, path, (constants.OBSERVATION_SIZE,), 'the balloon')
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
    raise EvaluationError(f'savedmodel:{path} takes observations of shape '
                          f'{[None, *shape[1:]]}, not {[None, *expected]} ({environment}).')


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


def _factory_policy(factory, spec, batch_size):
  first = _call_factory(factory, spec, batch_size=batch_size, num_actions=3,
                        observation_shape=(constants.OBSERVATION_SIZE,))
  if is_ble_agent(first):
    rest = [_call_factory(factory, spec, batch_size=batch_size, num_actions=3,
                          observation_shape=(constants.OBSERVATION_SIZE,))
            for _ in range(batch_size - 1)]
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


def check_actions(actions, batch_size, spec):
  """Actions as int64 [B] in {0, 1, 2}; raises EvaluationError naming the agent otherwise."""
  try:
    actions = np.asarray(actions)
  except Exception as error:  # noqa: BLE001
    raise EvaluationError(f'--agent {spec} returned actions that are not an array: '
                          f'{error}') from None
  if actions.shape != (batch_size,):
    raise EvaluationError(f'--agent {spec} returned actions of shape {actions.shape} for '
                          f'observations [{batch_size}, {constants.OBSERVATION_SIZE}]; '
                          f'expected ({batch_size},).')
  if actions.dtype.kind == 'f' and np.all(np.isfinite(actions)) and np.all(
      actions == np.round(actions)):
    actions = actions.astype(np.int64)
  if actions.dtype.kind not in 'iu' or np.any((actions < 0) | (actions > 2)):
    bad = actions.ravel()[:5].tolist()
    raise EvaluationError(f'--agent {spec} returned actions {bad}... of dtype {actions.dtype}; '
                          'expected integers in {0 DOWN, 1 STAY, 2 UP}.')
  return actions.astype(np.int64)


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
