"""Plays the deterministic policy of a trained run, one environment at a time.

The building block of `visualize` and of the learning benchmark:

  policy = DeterministicPolicy(run_dir)            # latest checkpoint of the run
  env = train.make_env(policy.config)
  for step in play_episode(env, policy, seed=0):   # one Step per environment step
    ...                                            # step.reward, step.info, step.done
"""

import collections

Step = collections.namedtuple('Step', 'observ, reward, terminated, truncated, info')
Step.done = property(lambda step: bool(step.terminated or step.truncated))
Step.__doc__ = 'One environment step of `play_episode`; `done` is terminated or truncated.'


class DeterministicPolicy:
  """The mode of a trained run's policy, as a function of one observation."""

  def __init__(self, run_dir, checkpoint=None):
    """Restores the run's algorithm.

    Args:
      run_dir: run directory with `config.yaml` and `checkpoints/`.
      checkpoint: checkpoint prefix; None takes the latest.

    Raises:
      FileNotFoundError: the run has no checkpoint.
    """
    import tensorflow as tf

    from agents.scripts import export
    self.config, self._algorithm, _, _ = export.restore_algorithm(run_dir, checkpoint)
    self._algorithm.training.assign(False)
    self._index = tf.constant([0], tf.int32)
    self._perform = tf.function(lambda observ: self._algorithm.perform(self._index, observ))
    self._tf = tf

  def begin_episode(self):
    """Clears the policy's per-episode state (a recurrent network's memory)."""
    self._algorithm.begin_episode(self._index)

  def __call__(self, observ):
    """The action for one observation (without a batch axis)."""
    return self._perform(self._tf.convert_to_tensor(observ[None], self._tf.float32)).numpy()[0]


def play_episode(env, policy, seed, max_steps=None, on_reset=None):
  """Plays one episode; yields a `Step` after each environment step.

  Args:
    env: a Gymnasium environment (one, not a vector).
    policy: a `DeterministicPolicy`, or any callable observation -> action with a
      `begin_episode()` method.
    seed: seed of the episode's reset.
    max_steps: stop after this many steps even if the episode goes on (None: play it out).
    on_reset: optional function (observ, info) called after the reset, before the
      first step (e.g. to render the first frame).
  """
  policy.begin_episode()
  observ, info = env.reset(seed=seed)
  if on_reset is not None:
    on_reset(observ, info)
  length = 0
  while max_steps is None or length < max_steps:
    observ, reward, terminated, truncated, info = env.step(policy(observ))
    length += 1
    step = Step(observ, float(reward), terminated, truncated, info)
    yield step
    if step.done:
      return
