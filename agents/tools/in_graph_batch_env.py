"""Exposes a batch of Python environments as TensorFlow state and graph operations.

`InGraphBatchEnv` wraps a `BatchEnv` (see the contract in `batch_env.py`) so a
`tf.function` can drive it: the current observation, the last action, the last
reward and the terminated / truncated / done flags live in `tf.Variable`s, and
`simulate(action)` and `reset(indices)` are graph operations that call into
Python through `tf.numpy_function` and assign the results. Shapes and dtypes are
static, taken from the spaces, so the fused step traces once.

Infos: Gymnasium environments return a dict of extras per step. Only the keys
named in `info_specs` are exposed, each as a variable `infos[key]` of shape
`[B, *spec.shape]` together with its mask `infos['_' + key]` (Gymnasium's
vector format: the mask says which environments reported the key; the value is
zero where it is False). Keys that are not named are dropped, and the first
time each such key appears a warning names it, so nothing disappears silently.

Errors: an exception raised by the batch inside the graph reaches the caller
of the `tf.function` as a `tf.errors.OpError` carrying its type and message;
`FusedStep` re-raises the original exception (see `pop_python_error`), so an
`ActionError` or a `WorkerDiedError` can be caught by type.

The wrapper is deliberately not a `tf.Module`: an algorithm may keep a
reference to it without its variables entering the algorithm's checkpoint,
because environment state cannot be restored into fresh environments anyway.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from agents.tools import batch_restarts, episode_collectors
from agents.tools import space_spec as space_spec_lib


class InGraphBatchEnv:
  """A batch of environments stepped and reset from inside a TensorFlow graph.

  Attributes:
    observ: Variable [B, *observation_shape], the current observations.
    action: Variable [B, *action_shape], the last actions taken.
    reward: float32 Variable [B], the last rewards.
    terminated: bool Variable [B], the last step reached a terminal state.
    truncated: bool Variable [B], the last step cut the episode short.
    done: bool Variable [B], terminated or truncated; starts True so the first
      `simulate` call resets every environment.
    infos: dict of Variables, see the module docstring.
  """

  def __init__(self, batch_env: Any, info_specs: Mapping[str, Any] | None = None,
               seed: int | None = None,
               collectors: Iterable[episode_collectors.EpisodeCollector] = ()) -> None:
    """Creates the variables from the spaces of the batch.

    Must be called outside any `tf.function` (it creates variables).

    Args:
      batch_env: an object with the `BatchEnv` contract.
      info_specs: optional mapping from info key to a `tf.TensorSpec` (or a
        `(shape, dtype)` pair) of one environment's value; those keys are
        exposed as variables.
      seed: optional int. The first reset of environment `i` is seeded with
        `seed + i`; later resets continue the environment's own generator,
        so a run is reproducible without repeating episodes.
      collectors: `episode_collectors.EpisodeCollector`s fed with every step's
        Python arrays (per-episode statistics such as the balloon's TWR50); the
        info keys they read or drop on purpose are not warned about.

    Raises:
      TypeError: a space or an info spec has no fixed array form.
    """
    self._batch_env = batch_env
    self._batch_size = len(batch_env)
    self.observation_space = batch_env.observation_space
    self.action_space = batch_env.action_space
    self._observ_spec = space_spec_lib.space_spec(self.observation_space, 'observation space')
    self._action_spec = space_spec_lib.space_spec(self.action_space, 'action space')
    self._info_specs = {key: space_spec_lib.info_spec(key, spec)
                        for key, spec in sorted((info_specs or {}).items())}
    self._seed = seed
    self._seeded = np.zeros(self._batch_size, bool)
    self.collectors = list(collectors)
    # Keys the collectors consume (or drop on purpose) are not reported as dropped, nor
    # the batch's own restart flag (a restart already ends the episode as truncated).
    self._dropped_info_keys = episode_collectors.handled_info_keys(self.collectors)
    self._dropped_info_keys.add(batch_restarts.INFO_KEY)
    self._python_error: BaseException | None = None
    batch = [self._batch_size]
    with tf.name_scope('environment'):
      self.observ = _zeros_variable(batch, self._observ_spec, 'observ')
      self.action = _zeros_variable(batch, self._action_spec, 'action')
      self.reward = tf.Variable(tf.zeros(batch, tf.float32), trainable=False, name='reward')
      self.terminated = tf.Variable(tf.zeros(batch, tf.bool), trainable=False, name='terminated')
      self.truncated = tf.Variable(tf.zeros(batch, tf.bool), trainable=False, name='truncated')
      self.done = tf.Variable(tf.ones(batch, tf.bool), trainable=False, name='done')
      self.infos = {}
      for key, spec in self._info_specs.items():
        self.infos[key] = _zeros_variable(batch, spec, key)
        self.infos['_' + key] = tf.Variable(tf.zeros(batch, tf.bool), trainable=False,
                                            name='_' + key)

  def __len__(self) -> int:
    """Number of environments in the batch."""
    return self._batch_size

  def __getattr__(self, name: str) -> Any:
    """Forwards unknown attributes to the wrapped batch environment."""
    if name.startswith('_'):
      raise AttributeError(name)
    return getattr(self._batch_env, name)

  @property
  def batch_env(self) -> Any:
    """The wrapped Python batch environment."""
    return self._batch_env

  # The traced methods branch on Python values only (shapes, dtypes, None), so autograph
  # need not rewrite them: skipping the rewrite makes the first trace of a fused step in a
  # process faster (as PPO's and QR-DQN's methods do).
  @tf.autograph.experimental.do_not_convert
  def simulate(self, action: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
    """Steps all environments with the given actions and assigns the results.

    Graph-compatible. Integer actions are cast to an integer action dtype and
    float actions to a float one; other mismatches are errors.

    Args:
      action: tensor [B, *action_shape].

    Returns:
      Tuple (observ, reward, terminated, truncated) of the new values.

    Raises:
      ValueError: the action's static shape does not match [B, *action_shape].
      TypeError: the action's dtype cannot be cast to the action space's kind.
    """
    with tf.name_scope('environment/simulate'):
      action = self._check_action(action)
      output_dtypes = [self._observ_spec.dtype, tf.float32, tf.bool, tf.bool]
      output_dtypes += [dtype for spec in self._info_specs.values()
                        for dtype in (spec.dtype, tf.bool)]
      outputs = tf.numpy_function(self._step_python, [action], output_dtypes,
                                  stateful=True, name='batch_step')
      outputs = tf.nest.flatten(outputs)  # Eagerly, a single output is not a list.
      observ, reward, terminated, truncated = outputs[:4]
      batch = [self._batch_size]
      observ.set_shape(batch + self._observ_spec.shape.as_list())
      for tensor in (reward, terminated, truncated):
        tensor.set_shape(batch)
      assigned = [
          self.observ.assign(observ, read_value=False),
          self.action.assign(action, read_value=False),
          self.reward.assign(reward, read_value=False),
          self.terminated.assign(terminated, read_value=False),
          self.truncated.assign(truncated, read_value=False),
          self.done.assign(tf.logical_or(terminated, truncated), read_value=False),
      ] + self._assign_infos(outputs[4:], indices=None)
      # Returning through the assignments lets callers order on the new state.
      with tf.control_dependencies(_ops_of(assigned)):
        return tuple(tf.identity(tensor) for tensor in (observ, reward, terminated, truncated))

  @tf.autograph.experimental.do_not_convert
  def reset(self, indices: tf.Tensor | None = None) -> tf.Tensor:
    """Resets the given environments and assigns their first observations.

    Graph-compatible. Clears reward, terminated, truncated and done of the
    reset environments; leaves the last action as it was.

    Args:
      indices: int32 tensor [N] of batch positions; None resets all.

    Returns:
      Tensor [N, *observation_shape] of the new observations.
    """
    with tf.name_scope('environment/reset'):
      if indices is None:
        indices = tf.range(self._batch_size)
      indices = tf.convert_to_tensor(indices, tf.int32)
      output_dtypes = [self._observ_spec.dtype]
      output_dtypes += [dtype for spec in self._info_specs.values()
                        for dtype in (spec.dtype, tf.bool)]
      outputs = tf.numpy_function(self._reset_python, [indices], output_dtypes,
                                  stateful=True, name='batch_reset')
      outputs = tf.nest.flatten(outputs)  # Eagerly, a single output is not a list.
      observ = outputs[0]
      observ.set_shape([None] + self._observ_spec.shape.as_list())
      scatter_indices = indices[:, None]
      count = tf.shape(indices)[:1]
      assigned = [
          self.observ.scatter_nd_update(scatter_indices, observ),
          self.reward.scatter_nd_update(scatter_indices, tf.zeros(count, tf.float32)),
      ] + [flag.scatter_nd_update(scatter_indices, tf.zeros(count, tf.bool))
           for flag in (self.terminated, self.truncated, self.done)]
      assigned += self._assign_infos(outputs[1:], indices=scatter_indices)
      with tf.control_dependencies(_ops_of(assigned)):
        return tf.identity(observ)

  def close(self) -> None:
    """Closes the wrapped batch environment."""
    self._batch_env.close()

  def _check_action(self, action: tf.Tensor) -> tf.Tensor:
    action = tf.convert_to_tensor(action)
    expected_shape = tf.TensorShape([self._batch_size]).concatenate(self._action_spec.shape)
    if not action.shape.is_compatible_with(expected_shape):
      raise ValueError(f'Action of shape {action.shape} does not fit the batch of '
                       f'{self._batch_size} environments with action space {self.action_space}; '
                       f'expected shape {expected_shape}.')
    expected = self._action_spec.dtype
    if action.dtype != expected:
      same_kind = ((action.dtype.is_integer and expected.is_integer)
                   or (action.dtype.is_floating and expected.is_floating))
      if not same_kind:
        raise TypeError(f'Action of dtype {action.dtype.name} cannot be used for the action '
                        f'space {self.action_space} of dtype {expected.name}.')
      action = tf.cast(action, expected)
    return tf.ensure_shape(action, expected_shape)

  def pop_python_error(self) -> BaseException | None:
    """Returns and forgets the last exception raised by the batch inside the graph.

    TensorFlow turns an exception inside `tf.numpy_function` into a
    `tf.errors.OpError` that keeps only its text. `FusedStep` calls this to
    re-raise the original (an `ActionError`, a `WorkerDiedError`, ...) so
    callers can catch it by type.

    Returns:
      The exception, or None.
    """
    error, self._python_error = self._python_error, None
    return error

  def _step_python(self, action: np.ndarray) -> list[np.ndarray]:
    try:
      return self._step_checked(action)
    except Exception as error:
      self._python_error = error
      raise

  def _reset_python(self, indices: np.ndarray) -> list[np.ndarray]:
    try:
      return self._reset_checked(indices)
    except Exception as error:
      self._python_error = error
      raise

  def _step_checked(self, action: np.ndarray) -> list[np.ndarray]:
    observ, reward, terminated, truncated, infos = self._batch_env.step(action)
    observ = self._checked_observ(observ, self._batch_size, 'step')
    reward = _checked_flat(reward, np.float32, self._batch_size, 'reward')
    terminated = _checked_flat(terminated, bool, self._batch_size, 'terminated')
    truncated = _checked_flat(truncated, bool, self._batch_size, 'truncated')
    for collector in self.collectors:
      collector.step(reward, terminated, truncated, infos)
    return [observ, reward, terminated, truncated] + self._info_arrays(infos, self._batch_size)

  def _reset_checked(self, indices: np.ndarray) -> list[np.ndarray]:
    seeds = None
    if self._seed is not None:
      seeds = [None if self._seeded[index] else self._seed + int(index) for index in indices]
      self._seeded[indices] = True
    observ, infos = self._batch_env.reset(indices, seeds)
    for collector in self.collectors:
      collector.reset(indices)
    observ = self._checked_observ(observ, len(indices), 'reset')
    return [observ] + self._info_arrays(infos, len(indices))

  def _checked_observ(self, observ: Any, count: int, call: str) -> np.ndarray:
    observ = np.asarray(observ)
    expected = (count,) + tuple(self._observ_spec.shape.as_list())
    if observ.shape != expected:
      raise ValueError(f'Batch {call} returned observations of shape {observ.shape}; the '
                       f'observation space {self.observation_space} needs {expected}.')
    return observ.astype(self._observ_spec.dtype.as_numpy_dtype, copy=False)

  def _info_arrays(self, infos: Mapping[str, Any], count: int) -> list[np.ndarray]:
    """Lists value and mask arrays of the exposed info keys, zeros where missing."""
    space_spec_lib.warn_unexposed_infos(infos, self._info_specs, self._dropped_info_keys)
    arrays = []
    for key, spec in self._info_specs.items():
      shape = (count,) + tuple(spec.shape.as_list())
      dtype = spec.dtype.as_numpy_dtype
      if key in infos:
        value = np.asarray(infos[key])
        if value.shape != shape:
          raise ValueError(f'Info {key!r} has shape {value.shape}; its spec needs {shape}.')
        mask = np.asarray(infos.get('_' + key, np.ones(count, bool)), bool)
        arrays += [value.astype(dtype, copy=False), mask]
      else:
        arrays += [np.zeros(shape, dtype), np.zeros(count, bool)]
    return arrays

  def _assign_infos(self, arrays: Sequence[tf.Tensor], indices: tf.Tensor | None) -> list[Any]:
    """Assigns info values and masks (to `indices` only, when given); returns the updates."""
    updates = []
    for position, key in enumerate(self._info_specs):
      value, mask = arrays[2 * position], arrays[2 * position + 1]
      value.set_shape([None] + self._info_specs[key].shape.as_list())
      mask.set_shape([None])
      if indices is None:
        updates.append(self.infos[key].assign(value, read_value=False))
        updates.append(self.infos['_' + key].assign(mask, read_value=False))
      else:
        updates.append(self.infos[key].scatter_nd_update(indices, value))
        updates.append(self.infos['_' + key].scatter_nd_update(indices, mask))
    return updates


def _zeros_variable(batch: list[int], spec: tf.TensorSpec, name: str) -> tf.Variable:
  return tf.Variable(tf.zeros(batch + spec.shape.as_list(), spec.dtype), trainable=False,
                     name=name)


def _ops_of(updates: Iterable[Any]) -> list[Any]:
  """The ops behind variable updates, for control dependencies (nothing when eager)."""
  return [getattr(update, 'op', update) for update in updates if not tf.executing_eagerly()]


def _checked_flat(values: Any, dtype: Any, count: int, name: str) -> np.ndarray:
  values = np.asarray(values)
  if values.shape != (count,):
    raise ValueError(f'Batch step returned {name} of shape {values.shape}; expected ({count},).')
  return values.astype(dtype, copy=False)
