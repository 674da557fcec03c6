"""Exposes one Gymnasium environment as TensorFlow state and graph operations.

The single-environment counterpart of `InGraphBatchEnv`, for scripts that run
one environment inside a `tf.function` (rendering, debugging a policy) without
building a batch. Variables hold the current observation, last action, reward
and flags with no batch dimension; `simulate(action)` and `reset()` call into
Python through `tf.numpy_function`. Infos follow the same rule as the batch
version: keys named in `info_specs` are exposed as variables (zero when the
environment did not report them), others are dropped with a warning that names
each key once.
"""


import numpy as np
import tensorflow as tf

from agents.tools import space_spec as space_spec_lib


class InGraphEnv:
  """One environment stepped and reset from inside a TensorFlow graph.

  Attributes:
    observ: Variable [*observation_shape], the current observation.
    action: Variable [*action_shape], the last action taken.
    reward: float32 scalar Variable, the last reward.
    terminated: bool scalar Variable, the last step reached a terminal state.
    truncated: bool scalar Variable, the last step cut the episode short.
    done: bool scalar Variable, terminated or truncated; starts True.
    infos: dict from info key to Variable, see the module docstring.
  """

  def __init__(self, env, info_specs=None, seed=None):
    """Creates the variables from the environment's spaces.

    Args:
      env: a `gymnasium.Env` (5-tuple `step`, no automatic reset).
      info_specs: optional mapping from info key to a `tf.TensorSpec` (or a
        `(shape, dtype)` pair); those keys are exposed as variables.
      seed: optional int used for the first reset only.

    Raises:
      TypeError: a space or an info spec has no fixed array form.
    """
    self._env = env
    self.observation_space = env.observation_space
    self.action_space = env.action_space
    self._observ_spec = space_spec_lib.space_spec(self.observation_space, 'observation space')
    self._action_spec = space_spec_lib.space_spec(self.action_space, 'action space')
    self._info_specs = {key: space_spec_lib.info_spec(key, spec)
                        for key, spec in sorted((info_specs or {}).items())}
    self._seed = seed
    self._dropped_info_keys = set()
    with tf.name_scope('environment'):
      self.observ = tf.Variable(tf.zeros(self._observ_spec.shape, self._observ_spec.dtype),
                                trainable=False, name='observ')
      self.action = tf.Variable(tf.zeros(self._action_spec.shape, self._action_spec.dtype),
                                trainable=False, name='action')
      self.reward = tf.Variable(0.0, trainable=False, name='reward')
      self.terminated = tf.Variable(False, trainable=False, name='terminated')
      self.truncated = tf.Variable(False, trainable=False, name='truncated')
      self.done = tf.Variable(True, trainable=False, name='done')
      self.infos = {key: tf.Variable(tf.zeros(spec.shape, spec.dtype), trainable=False, name=key)
                    for key, spec in self._info_specs.items()}

  def __getattr__(self, name):
    """Forwards unknown attributes to the wrapped environment."""
    if name.startswith('_'):
      raise AttributeError(name)
    return getattr(self._env, name)

  @property
  def env(self):
    """The wrapped Python environment."""
    return self._env

  def simulate(self, action):
    """Steps the environment and assigns the results. Graph-compatible.

    Args:
      action: tensor [*action_shape] of the action space's dtype kind.

    Returns:
      Tuple (observ, reward, terminated, truncated) of the new values.

    Raises:
      ValueError: the action's static shape does not match the action space.
      TypeError: the action's dtype cannot be cast to the action space's kind.
    """
    with tf.name_scope('environment/simulate'):
      action = tf.convert_to_tensor(action)
      if not action.shape.is_compatible_with(self._action_spec.shape):
        raise ValueError(f'Action of shape {action.shape} does not fit the action space '
                         f'{self.action_space}.')
      expected = self._action_spec.dtype
      if action.dtype != expected:
        if not ((action.dtype.is_integer and expected.is_integer)
                or (action.dtype.is_floating and expected.is_floating)):
          raise TypeError(f'Action of dtype {action.dtype.name} cannot be used for the action '
                          f'space {self.action_space} of dtype {expected.name}.')
        action = tf.cast(action, expected)
      output_dtypes = [self._observ_spec.dtype, tf.float32, tf.bool, tf.bool]
      output_dtypes += [spec.dtype for spec in self._info_specs.values()]
      outputs = tf.numpy_function(self._step_python, [action], output_dtypes, stateful=True,
                                  name='env_step')
      outputs = tf.nest.flatten(outputs)  # Eagerly, a single output is not a list.
      observ, reward, terminated, truncated = outputs[:4]
      observ.set_shape(self._observ_spec.shape)
      for tensor in (reward, terminated, truncated):
        tensor.set_shape([])
      self.observ.assign(observ)
      self.action.assign(action)
      self.reward.assign(reward)
      self.terminated.assign(terminated)
      self.truncated.assign(truncated)
      self.done.assign(tf.logical_or(terminated, truncated))
      self._assign_infos(outputs[4:])
      return observ, reward, terminated, truncated

  def reset(self):
    """Resets the environment and assigns its first observation. Graph-compatible.

    Returns:
      Tensor [*observation_shape], the new observation.
    """
    with tf.name_scope('environment/reset'):
      output_dtypes = [self._observ_spec.dtype]
      output_dtypes += [spec.dtype for spec in self._info_specs.values()]
      outputs = tf.numpy_function(self._reset_python, [], output_dtypes, stateful=True,
                                  name='env_reset')
      outputs = tf.nest.flatten(outputs)  # Eagerly, a single output is not a list.
      observ = outputs[0]
      observ.set_shape(self._observ_spec.shape)
      self.observ.assign(observ)
      self.reward.assign(0.0)
      self.terminated.assign(False)
      self.truncated.assign(False)
      self.done.assign(False)
      self._assign_infos(outputs[1:])
      return observ

  def close(self):
    """Closes the wrapped environment."""
    self._env.close()

  def _step_python(self, action):
    observ, reward, terminated, truncated, info = self._env.step(action)
    return [self._checked_observ(observ), np.float32(reward), np.bool_(terminated),
            np.bool_(truncated)] + self._info_arrays(info)

  def _reset_python(self):
    seed, self._seed = self._seed, None
    observ, info = self._env.reset(seed=seed)
    return [self._checked_observ(observ)] + self._info_arrays(info)

  def _checked_observ(self, observ):
    observ = np.asarray(observ)
    expected = tuple(self._observ_spec.shape.as_list())
    if observ.shape != expected:
      raise ValueError(f'Environment returned an observation of shape {observ.shape}; the '
                       f'observation space {self.observation_space} needs {expected}.')
    return observ.astype(self._observ_spec.dtype.as_numpy_dtype, copy=False)

  def _info_arrays(self, info):
    space_spec_lib.warn_unexposed_infos(info, self._info_specs, self._dropped_info_keys)
    arrays = []
    for key, spec in self._info_specs.items():
      shape = tuple(spec.shape.as_list())
      dtype = spec.dtype.as_numpy_dtype
      value = np.asarray(info.get(key, np.zeros(shape, dtype)))
      if value.shape != shape:
        raise ValueError(f'Info {key!r} has shape {value.shape}; its spec needs {shape}.')
      arrays.append(value.astype(dtype, copy=False))
    return arrays

  def _assign_infos(self, arrays):
    for key, value in zip(self._info_specs, arrays):
      value.set_shape(self._info_specs[key].shape)
      self.infos[key].assign(value)
