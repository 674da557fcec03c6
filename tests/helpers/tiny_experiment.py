"""Tiny experiment fits shared by the tests, by three algorithms, each for what a test checks.

- `TINY_OVERRIDES`: PPO on Pendulum, for what PPO itself brings (its hyperparameters, its
  update rows);
- `RANDOM_OVERRIDES`: the random agent on Pendulum, for an experiment's bookkeeping;
- `LINEAR_OVERRIDES`: a linear softmax policy on CartPole, which learns, acts greedily when
  evaluated and declares hyperparameters to search.

A tiny PPO fit costs about 2.3 s of CPU once TensorFlow is up (tracing its update most of
it); the other two about 0.5 s.
"""

# 2 agents, 32-step episodes, 8-unit networks: a 256-step fit logs four mean scores.
TINY_OVERRIDES = {
    'environment.num_agents': 2, 'environment.max_episode_steps': 32,
    'algorithm.segment_length': 16, 'algorithm.num_minibatches': 2,
    'algorithm.update_epochs': 2, 'loop.steps_per_call': 16, 'loop.log_every': 64,
    'loop.checkpoint_every': 64, 'network.policy_layers': [8], 'network.value_layers': [8],
}
TINY_BUDGET = 256


def without_ppo_keys(overrides):
  """`overrides` without its `algorithm.` and `network.` keys (PPO's), for another
  algorithm."""
  return {key: value for key, value in overrides.items()
          if not key.startswith(('algorithm.', 'network.'))}


# The same fits by the random agent (`agents.algorithms.random_algorithm`).
RANDOM_OVERRIDES = dict(without_ppo_keys(TINY_OVERRIDES), **{'algorithm.name': 'random'})

# The worked example of a user's algorithm (examples/linear_softmax.py): a linear softmax
# policy that learns by a one-step policy gradient and acts greedily when evaluated, for
# Discrete actions; its hyperparameters are `algorithm.learning_rate` and
# `algorithm.baseline_decay`. Imported from the repository's root, as `examples.dqn_agent`.
LINEAR_SOFTMAX = 'examples.linear_softmax:LinearSoftmax'
# Tiny CartPole fits of it: 2 agents, a row and a checkpoint every 64 steps.
LINEAR_OVERRIDES = {
    'algorithm.name': LINEAR_SOFTMAX, 'environment.num_agents': 2, 'loop.steps_per_call': 16,
    'loop.log_every': 64, 'loop.checkpoint_every': 64,
}
