"""One episode at a time: a trained run's deterministic policy and `play_episode`.

The building blocks of `agents.scripts.visualize` and of the learning benchmark:

    policy = DeterministicPolicy(run_dir)            # newest readable checkpoint of the run
    env = builders.make_env(policy.config)
    for step in play_episode(env, policy, seed=0):   # one Step per environment step
      ...                                            # step.reward, step.info, step.done
    actions = policy(observations)                   # or a batch of up to num_agents rows

Suites of many seeded episodes, batched, are `runner.fly`'s (`agents.evaluation.evaluate`).
"""

import collections

import numpy as np


class Step(collections.namedtuple('Step', 'observ, reward, terminated, truncated, info')):
  """One environment step of `play_episode`."""

  __slots__ = ()

  @property
  def done(self):
    """Whether the episode ended here (terminated or truncated)."""
    return bool(self.terminated or self.truncated)


class DeterministicPolicy:
  """The mode of a trained run's policy, for a batch of up to `num_agents` observations.

  Row i of a batch acts as agent i of the algorithm, whose per-agent state (a recurrent
  network's memory) `begin_episode` clears.
  """

  def __init__(self, run_dir, checkpoint=None):
    """Restores the run's algorithm.

    Args:
      run_dir: run directory with `config.yaml` and `checkpoints/`.
      checkpoint: checkpoint prefix; None takes the latest.

    Raises:
      agents.configs.ConfigError: the run has no config.yaml or no checkpoint.
    """
    import tensorflow as tf

    from agents.training import builders
    self.config, algorithm, observation_space, _ = builders.restore_algorithm(
        run_dir, checkpoint, is_training=False)
    self.num_agents = self.config.environment.num_agents
    self._algorithm = algorithm

    @tf.function(input_signature=[tf.TensorSpec([None, *observation_space.shape], tf.float32)])
    def perform(observations):
      return algorithm.perform(tf.range(tf.shape(observations)[0]), observations)
    self._perform = perform

  def begin_episode(self, indices=(0,)):
    """Starts new episodes for the batch rows `indices`."""
    self._check_batch(max(indices, default=-1) + 1)
    self._algorithm.begin_episode(np.asarray(indices, np.int32))

  def __call__(self, observations):
    """Actions [B, ...] for observations [B, ...], B <= num_agents."""
    self._check_batch(len(observations))
    return self._perform(np.asarray(observations, np.float32)).numpy()

  def _check_batch(self, size):
    if size > self.num_agents:
      raise ValueError(f'DeterministicPolicy acts for at most num_agents = {self.num_agents} '
                       f'observations at once (the run\'s per-agent state), got {size}.')


def play_episode(env, policy, seed, max_steps=None, on_reset=None):
  """Plays one episode; yields a `Step` after each environment step.

  Args:
    env: a Gymnasium environment (one, not a vector).
    policy: a `DeterministicPolicy`, or any callable observations [B, ...] -> actions
      [B, ...] with a `begin_episode(indices)` method; the episode is its row 0.
    seed: seed of the episode's reset.
    max_steps: stop after this many steps even if the episode goes on (None: play it out).
    on_reset: optional function (observ, info) called after the reset, before the
      first step (e.g. to render the first frame).
  """
  policy.begin_episode([0])
  observ, info = env.reset(seed=seed)
  if on_reset is not None:
    on_reset(observ, info)
  length = 0
  while max_steps is None or length < max_steps:
    observ, reward, terminated, truncated, info = env.step(policy(observ[None])[0])
    length += 1
    step = Step(observ, float(reward), terminated, truncated, info)
    yield step
    if step.done:
      return
