"""A uniformly random agent: the worked example of the in-graph algorithm interface.

Copy this file to start a new algorithm. It shows every part an algorithm
needs, and nothing else:

- all variables created in `__init__` (the random generator's state too, so a
  resumed run continues the same random stream);
- per-environment state updated for a subset of the batch with
  `scatter_nd_update` / `scatter_nd_add` and read with `tf.gather`;
- `tf.summary` written from inside the graph (the Loop decides when they are
  recorded);
- the Loop's `is_training` variable read in the graph (a random agent has
  nothing to learn, so it only counts the episodes each phase finishes).
"""

import gymnasium
import numpy as np
import tensorflow as tf

from agents.algorithms import algorithm


class RandomAlgorithm(algorithm.InGraphAlgorithm):
  """Acts uniformly at random in a bounded Box or a Discrete action space.

  Attributes:
    episode_return: float32 Variable [B], the running return of each episode.
    training_episodes: int64 Variable, episodes finished while training.
    evaluation_episodes: int64 Variable, episodes finished while evaluating.
  """

  def __init__(self, batch_size, action_space, seed=0, is_training=None, name='random_algorithm'):
    """Creates the variables.

    Args:
      batch_size: number of environments B.
      action_space: a bounded `gymnasium.spaces.Box` or a `Discrete` space.
      seed: seed of the in-graph random generator.
      is_training: optional bool Variable (the Loop's); None means always training.
      name: module name.

    Raises:
      TypeError: the action space is neither a bounded Box nor Discrete.
    """
    super().__init__(name=name)
    if isinstance(action_space, gymnasium.spaces.Box):
      if not (np.all(np.isfinite(action_space.low)) and np.all(np.isfinite(action_space.high))):
        raise TypeError(f'RandomAlgorithm needs a bounded Box action space, got {action_space}.')
    elif not isinstance(action_space, gymnasium.spaces.Discrete):
      raise TypeError('RandomAlgorithm supports Box and Discrete action spaces, got '
                      f'{action_space}.')
    self._action_space = action_space
    self._is_training = is_training
    self._generator = tf.random.Generator.from_seed(seed)
    self.episode_return = tf.Variable(tf.zeros([batch_size]), trainable=False,
                                      name='episode_return')
    self.training_episodes = tf.Variable(0, dtype=tf.int64, trainable=False,
                                         name='training_episodes')
    self.evaluation_episodes = tf.Variable(0, dtype=tf.int64, trainable=False,
                                           name='evaluation_episodes')

  @classmethod
  def from_config(cls, config, observation_space, action_space, is_training=None):
    """Builds the agent for a run config; it has no hyperparameters of its own."""
    del observation_space
    return cls(config.environment.num_agents, action_space, seed=config.seed,
               is_training=is_training)

  def begin_episode(self, agent_indices):
    # Per-episode state is reset here, not in end_episode: a new Loop phase
    # resets environments without ending their episodes.
    count = tf.shape(agent_indices)[:1]
    return self.episode_return.scatter_nd_update(agent_indices[:, None], tf.zeros(count))

  def perform(self, agent_indices, observ):
    count = tf.shape(agent_indices)[:1]
    space = self._action_space
    if isinstance(space, gymnasium.spaces.Discrete):
      # The bounds are Python ints, so this branch is chosen once, at trace time.
      return self._generator.uniform(count, int(space.start), int(space.start + space.n),
                                     dtype=tf.int64)
    shape = tf.concat([count, space.shape], 0)
    unit = self._generator.uniform(shape, dtype=tf.float32)
    low, high = space.low.astype(np.float32), space.high.astype(np.float32)
    return low + unit * (high - low)

  def experience(self, agent_indices, observ, action, reward, terminated, truncated,
                 next_observ):
    return self.episode_return.scatter_nd_add(agent_indices[:, None], reward)

  def end_episode(self, agent_indices):
    returns = tf.gather(self.episode_return, agent_indices)
    tf.summary.histogram('episode_return', returns)
    finished = tf.cast(tf.size(agent_indices), tf.int64)
    is_training = self._is_training if self._is_training is not None else True
    return tf.cond(tf.convert_to_tensor(is_training),
                   lambda: self.training_episodes.assign_add(finished),
                   lambda: self.evaluation_episodes.assign_add(finished))
