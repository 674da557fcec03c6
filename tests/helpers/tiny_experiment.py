"""Tiny Pendulum experiments shared by the experiment tests (a few seconds per fit)."""

# 2 agents, 32-step episodes, 8-unit networks: a 256-step fit logs four
# mean scores and trains in about a second once TensorFlow is up.
TINY_OVERRIDES = {
    'environment.num_agents': 2, 'environment.max_episode_steps': 32,
    'algorithm.segment_length': 16, 'algorithm.num_minibatches': 2,
    'algorithm.update_epochs': 2, 'loop.steps_per_call': 16, 'loop.log_every': 64,
    'loop.checkpoint_every': 64, 'network.policy_layers': [8], 'network.value_layers': [8],
}
TINY_BUDGET = 256
