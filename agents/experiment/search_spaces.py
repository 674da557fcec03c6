"""The hyperparameter search spaces of the named configs (format: `search_distributions.py`).

`optimize_hyperparams` searches `SEARCH_SPACES[config name]` unless given a
space. Keys are dotted config keys; the ranges stay where the configs are
known to train (e.g. PPO's learning rate within a decade of its default).
`SEARCH_SPACES` is the registry `agents.plugins.SEARCH_SPACES`: the generic
configs' spaces are declared here, an environment's configs' by the environment
(the balloon's in `agents.env.balloon.search`).
"""

from agents import plugins
from agents.experiment.search_distributions import Categorical, Int, LogUniform, Uniform

_PPO = {
    'algorithm.learning_rate': LogUniform(1e-4, 3e-3),
    'algorithm.update_epochs': Int(3, 15),
    'algorithm.discount': Categorical([0.9, 0.95, 0.98, 0.99]),
    'algorithm.gae_lambda': Uniform(0.8, 1.0),
    'algorithm.policy_objective': Categorical(['kl_penalty', 'clipped']),
    'algorithm.kl_target': LogUniform(3e-3, 3e-2,
                                      when={'algorithm.policy_objective': 'kl_penalty'}),
    'algorithm.clip_ratio': Uniform(0.1, 0.3, when={'algorithm.policy_objective': 'clipped'}),
}

# QR-DQN (agents/algorithms/qrdqn): the replay ratio, the return horizon and the
# target network's lag are what its learning is most sensitive to.
_QRDQN = {
    'algorithm.learning_rate': LogUniform(3e-4, 3e-3),
    'algorithm.n_step': Int(1, 5),
    'algorithm.num_quantiles': Categorical([10, 25, 51]),
    'algorithm.gradient_steps': Int(4, 32),
    'algorithm.target_update_period': Categorical([10, 100, 1000]),
    'algorithm.epsilon_decay_steps': Int(4_000, 20_000, log=True),
    'algorithm.double_q': Categorical([False, True]),
}


SEARCH_SPACES = plugins.SEARCH_SPACES
for _name in ('default', 'pendulum', 'cartpole'):
  SEARCH_SPACES.register(_name, _PPO)
SEARCH_SPACES.register('cartpole_qrdqn', _QRDQN)


def for_config(name):
  """The declared search space of a named config (here, or registered by an environment).

  Raises:
    KeyError: no space is declared for that name (the message lists those that are).
  """
  if name not in SEARCH_SPACES:
    raise KeyError(f"No search space is declared for config {name!r}; declared: "
                   f'{SEARCH_SPACES.names()}. Pass search_space=... instead.')
  return SEARCH_SPACES.get(name)
