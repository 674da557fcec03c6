"""BLE's `finetune_perciatelli`: QR-DQN started from Perciatelli44's released weights.

    from agents.python_agents import run_helpers
    agent = run_helpers.create_agent('finetune_perciatelli', 3, (1099,), num_envs=64)

A `QuantileAgent` with the hyperparameters of the `balloon_finetune_perciatelli` run
config (Perciatelli44's 7 x 600 ReLU network and 51 quantiles, its weights read from the
released graph into both networks, little exploration, a small learning rate); keyword
arguments replace them. The weights are found as
`agents.env.balloon.controllers.perciatelli44.find_weights` says; without them the
agent is refused with a `ConfigError` whose one line names the fetch command.
"""

from agents.env.balloon import configs as balloon_configs
from agents.python_agents import quantile_agent


def hyperparameters():
  """The `QuantileAgent` hyperparameters of the `balloon_finetune_perciatelli` config."""
  config = balloon_configs.balloon_finetune_perciatelli()
  network = {key: value for key, value in config['network'].items() if key != 'kind'}
  algorithm = {key: value for key, value in config['algorithm'].items() if key != 'name'}
  return {**network, **algorithm}


def create(num_actions, observation_shape, num_envs=1, seed=0, **overrides):
  """The fine-tuning agent for `num_envs` rows; `overrides` replace its hyperparameters.

  Raises:
    ConfigError: the weights are absent (one line naming the fetch command), or a
      hyperparameter is unknown.
  """
  return quantile_agent.QuantileAgent(num_actions, observation_shape, num_envs, seed,
                                      **{**hyperparameters(), **overrides})
