"""The in-graph algorithm interface that `simulate` drives.

Every method is traced into the TensorFlow graph of the fused step
(`agents/tools/simulate.py`): it takes and returns tensors, and addresses
environments of the batch by `agent_indices` (an int32 vector), so any subset
of the batch can begin or end an episode. Algorithm state lives in
`tf.Variable`s owned by the `tf.Module`, so checkpoints and SavedModel export
come for free.

Rules that follow from running inside one traced `tf.function`:

- Create every variable in `__init__`, optimiser state included (build a Keras
  optimiser there, or use plain variables as `parts/adam.py` does). The step is
  traced once; a variable created while tracing would be missed by a checkpoint
  restored before the first call, and `FusedStep` raises naming it.
- Branch on tensors with `tf.cond` / `tf.where`, update per-environment state
  with `tf.gather` and `scatter_nd_update`; Python `if` on a tensor does not
  work in the graph.
- Return the op or tensor that finishes the method's work (or a list of them);
  `simulate` orders the next stage after it. Ops that read or write the same
  variables are ordered by TensorFlow anyway.
- Summaries: write `tf.summary` ops directly; `simulate` runs them under the
  loop's writer, global step and should-log condition.
- Train versus eval: the `Loop` sets a bool variable, `loop.is_training`, at the
  start of each phase. Take it as a constructor argument and read it in the
  graph (e.g. `tf.cond(self._is_training, ...)`) to skip learning in eval.

Configuration: a class declares its hyperparameters once, as a frozen
dataclass made with `agents.config_fields.param`, in its `Config` attribute
(and, if it has a network, `NetworkConfig`); a `check_run(config)` static
method of `Config`, if present, checks relations between keys of the resolved run config
(`config.environment.num_agents`, `config.algorithm.<key>`). They become the `algorithm` (and
`network`) section of a run config, with validation, YAML and `--set` derived
from them. `from_config` builds the algorithm from a resolved run config; the
default calls `cls(num_agents, observation_space, action_space, config,
seed=seed, is_training=is_training)` with `config` an instance of `Config`.
Register nothing: `--algorithm=mypackage.module:MyAlgorithm` trains it.

Worked examples: `agents/algorithms/random_algorithm.py` is a complete, tested
algorithm of about 50 lines of code; docs/usage.md's "Bring your own algorithm"
walks through a learning one (`examples/linear_softmax.py`). In short:

    class CountingAgent(InGraphAlgorithm):
      def __init__(self, batch_size, action_space):
        super().__init__(name='counting_agent')
        self._action_space = action_space
        self.episode_length = tf.Variable(tf.zeros([batch_size], tf.int32))
        self.finished_lengths = tf.Variable(0, dtype=tf.int64)

      def begin_episode(self, agent_indices):
        return self.episode_length.scatter_nd_update(
            agent_indices[:, None], tf.zeros_like(agent_indices))

      def perform(self, agent_indices, observ):
        shape = tf.concat([tf.shape(agent_indices), self._action_space.shape], 0)
        return tf.zeros(shape, self._action_space.dtype)

      def experience(self, agent_indices, observ, action, reward, terminated,
                     truncated, next_observ):
        return self.episode_length.scatter_nd_add(
            agent_indices[:, None], tf.ones_like(agent_indices))

      def end_episode(self, agent_indices):
        lengths = tf.gather(self.episode_length, agent_indices)
        return self.finished_lengths.assign_add(tf.reduce_sum(tf.cast(lengths, tf.int64)))
"""

from __future__ import annotations

import abc
import importlib.util
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import gymnasium
import tensorflow as tf

# tf.summary needs the tensorboard package for its ops; without it an algorithm's
# metrics variables still hold every statistic.
_HAS_TENSORBOARD = importlib.util.find_spec('tensorboard') is not None


def write_update_summaries(scope: str, metrics: Mapping[str, Any],
                           default_step: Any) -> None:
  """Writes an update's scalar `metrics` ({name: tensor}) under `scope`, in the graph.

  The step is the loop's summary step when one is set, else `default_step` (e.g. the
  algorithm's update count). Nothing is written without the tensorboard package.
  """
  if not _HAS_TENSORBOARD:
    return
  step = tf.summary.experimental.get_step()
  if step is None:
    step = default_step
  with tf.name_scope(scope):
    for name, value in metrics.items():
      tf.summary.scalar(name, value, step=step)


class InGraphAlgorithm(tf.Module, abc.ABC):
  """Base class of algorithms that run inside the fused `simulate` step.

  `simulate` calls, per environment step of the whole batch:

  1. `begin_episode(indices)` for the environments it has just reset (all of
     them on the first step and at the start of every Loop phase);
  2. `perform(all_indices, observ)` for all environments, to choose actions;
  3. `experience(all_indices, ...)` with the transition every environment just
     made, terminated and truncated kept apart;
  4. `end_episode(indices)` for the environments whose episode just ended
     (terminated or truncated); an algorithm may run its update here.

  `begin_episode` and `end_episode` are only called with non-empty indices. An
  episode cut short by a forced reset (a new Loop phase) gets `begin_episode`
  again without an `end_episode`, so per-episode state must be reset in
  `begin_episode`. See the module docstring for the rules of tracing.

  Attributes:
    Config: frozen dataclass of the hyperparameters (`agents.config_fields.param`
      fields); None means none.
    NetworkConfig: frozen dataclass of the network section, or None.
    num_updates: an int64 Variable counting the updates, or None (no updates to log).
    metrics: {name: scalar Variable} of the last update (PPO's losses, QR-DQN's); training
      logs them with `num_updates` in a row of their own (`phase: update`) after each
      update.
  """

  Config: ClassVar[type | None] = None
  NetworkConfig: ClassVar[type | None] = None
  num_updates: tf.Variable | None = None
  metrics: Mapping[str, tf.Variable] = MappingProxyType({})

  @classmethod
  def from_config(cls, config: Any, observation_space: gymnasium.Space,
                  action_space: gymnasium.Space,
                  is_training: tf.Variable | None = None) -> InGraphAlgorithm:
    """Builds the algorithm from a resolved run config.

    Args:
      config: the resolved run config (`agents.configs.RunConfig`: `seed`, and the
        typed sections `environment`, `network`, `algorithm`, `loop`).
      observation_space: one environment's observation space.
      action_space: one environment's action space.
      is_training: the Loop's bool Variable, or None.

    Returns:
      `cls(num_agents, observation_space, action_space, hyperparameters,
      seed=..., is_training=...)`, where `hyperparameters` is a `cls.Config`
      (or None without one); override for more (PPO builds its network).
    """
    # pylint: disable-next=too-many-function-args,unexpected-keyword-arg
    return cls(config.environment.num_agents, observation_space, action_space,
               config.algorithm, seed=config.seed, is_training=is_training)

  def export_policy(self, observation_space: gymnasium.Space) -> tf.Module:
    """Returns a `tf.Module` for `tf.saved_model.save` with `action(observ [N, ...])`.

    The default wraps `perform` for agents 0..N-1 (N at most the batch size),
    so the SavedModel holds all of the algorithm's variables; override it to
    export less (PPO exports its network and normaliser only).
    """
    return _PerformPolicy(self, observation_space)

  @abc.abstractmethod
  def begin_episode(self, agent_indices: tf.Tensor) -> Any:
    """Resets per-episode state of the given environments.

    Args:
      agent_indices: int32 tensor [N] of batch positions that start an episode.

    Returns:
      An op or tensor (or None) that finishes the work; its value is ignored.
    """

  @abc.abstractmethod
  def perform(self, agent_indices: tf.Tensor, observ: tf.Tensor) -> tf.Tensor:
    """Chooses actions.

    Args:
      agent_indices: int32 tensor [N] of batch positions.
      observ: tensor [N, ...] of their current observations.

    Returns:
      Tensor [N, *action_shape] of actions; its dtype must be of the action
      space's kind (integer or float; it is cast to the exact dtype).
    """

  @abc.abstractmethod
  def experience(self, agent_indices: tf.Tensor, observ: tf.Tensor, action: tf.Tensor,
                 reward: tf.Tensor, terminated: tf.Tensor, truncated: tf.Tensor,
                 next_observ: tf.Tensor) -> Any:
    """Records one transition for every given environment.

    Args:
      agent_indices: int32 tensor [N].
      observ: tensor [N, ...], the observation the action was chosen on.
      action: tensor [N, ...], the action taken (cast to the action space dtype).
      reward: float32 tensor [N].
      terminated: bool tensor [N]: the episode reached a terminal state.
      truncated: bool tensor [N]: the episode was cut short (time limit); the
        state is not terminal, so its value should be bootstrapped.
      next_observ: tensor [N, ...], the observation after the step (for an
        ended episode, the final observation, before any reset).

    Returns:
      An op or tensor (or None) that finishes the work; its value is ignored.
    """

  @abc.abstractmethod
  def end_episode(self, agent_indices: tf.Tensor) -> Any:
    """Closes the episodes of the given environments; may run an update.

    Args:
      agent_indices: int32 tensor [N] of batch positions whose episode ended.

    Returns:
      An op or tensor (or None) that finishes the work; its value is ignored.
    """


class _PerformPolicy(tf.Module):
  """`action(observ)` of any algorithm: its `perform` for the first N agents."""

  def __init__(self, algorithm: InGraphAlgorithm, observation_space: gymnasium.Space) -> None:
    super().__init__(name='exported_policy')
    self.algorithm = algorithm
    spec = tf.TensorSpec([None, *observation_space.shape],  # type: ignore[misc]  # a Box's
                         observation_space.dtype,
                         name='observ')
    self.action = tf.function(
        lambda observ: algorithm.perform(tf.range(tf.shape(observ)[0]), observ),
        input_signature=(spec,))
