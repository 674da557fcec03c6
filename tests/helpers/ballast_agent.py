"""The random agent with about a megabyte of state, for tests whose checkpoint must be large.

`--algorithm=tests.helpers.ballast_agent:BallastAgent` (or `algorithm.name`) trains it.
Its checkpoint is larger than anything else a run writes, as a trained network's is, at a
fraction of the cost of tracing a learning algorithm: a test that fails a checkpoint's write
(a full disk) needs the size, not the learning.
"""

import tensorflow as tf

from agents.algorithms import random_algorithm

# Its `algorithm.name` (and `--algorithm`).
ALGORITHM = 'tests.helpers.ballast_agent:BallastAgent'
# float32 values: 1 MiB of checkpoint.
BALLAST_VALUES = 2 ** 18


class BallastAgent(random_algorithm.RandomAlgorithm):
  """`RandomAlgorithm` plus a variable of `BALLAST_VALUES` floats that each finished episode
  changes."""

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.ballast = tf.Variable(tf.zeros([BALLAST_VALUES]), trainable=False, name='ballast')

  def end_episode(self, agent_indices):
    # Written as training goes, as weights are, so each checkpoint holds new values.
    finished = super().end_episode(agent_indices)
    with tf.control_dependencies([finished]):
      return self.ballast.assign_add(tf.ones([BALLAST_VALUES]), read_value=False)
