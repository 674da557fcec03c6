"""The in-graph algorithm interface that `simulate` drives.

Every method is traced into the TensorFlow graph: it takes and returns tensors,
and addresses environments of the batch by `agent_indices` (an int32 vector),
so any subset of the batch can begin or end an episode. Algorithm state lives
in `tf.Variable`s owned by the `tf.Module`, so checkpoints and SavedModel
export come for free.
"""

import abc

import tensorflow as tf


class InGraphAlgorithm(tf.Module, abc.ABC):
  """Base class of algorithms that run inside the fused `simulate` step.

  `simulate` calls, per environment step:

  1. `begin_episode(indices)` for the environments it has just reset;
  2. `perform(indices, observ)` for all environments, to choose actions;
  3. `experience(...)` with the transition every environment just made;
  4. `end_episode(indices)` for the environments whose episode just ended
     (terminated or truncated); an algorithm may run its update here.

  Each method may return a string tensor of serialized summaries or write
  `tf.summary` ops directly; `simulate` wraps the calls in the loop's step and
  recording condition.
  """

  @abc.abstractmethod
  def begin_episode(self, agent_indices):
    """Resets per-episode state of the given environments.

    Args:
      agent_indices: int32 tensor [N] of batch positions that start an episode.

    Returns:
      An op or tensor; its value is ignored.
    """

  @abc.abstractmethod
  def perform(self, agent_indices, observ):
    """Chooses actions.

    Args:
      agent_indices: int32 tensor [N] of batch positions.
      observ: tensor [N, ...] of their current observations.

    Returns:
      Tensor [N, ...] of actions matching the environment's action space.
    """

  @abc.abstractmethod
  def experience(self, agent_indices, observ, action, reward, terminated, truncated,
                 next_observ):
    """Records one transition for every given environment.

    Args:
      agent_indices: int32 tensor [N].
      observ: tensor [N, ...], the observation the action was chosen on.
      action: tensor [N, ...], the action taken.
      reward: float32 tensor [N].
      terminated: bool tensor [N]: the episode reached a terminal state.
      truncated: bool tensor [N]: the episode was cut short (time limit); the
        state is not terminal, so its value should be bootstrapped.
      next_observ: tensor [N, ...], the observation after the step (for an
        ended episode, the final observation, before any reset).

    Returns:
      An op or tensor; its value is ignored.
    """

  @abc.abstractmethod
  def end_episode(self, agent_indices):
    """Closes the episodes of the given environments; may run an update.

    Args:
      agent_indices: int32 tensor [N] of batch positions whose episode ended.

    Returns:
      An op or tensor; its value is ignored.
    """
