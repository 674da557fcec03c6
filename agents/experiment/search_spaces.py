"""The hyperparameter search spaces of the named configs (format: `search_space.py`).

`optimize_hyperparams` searches `SEARCH_SPACES[config name]` unless given a
space. Keys are dotted config keys; the ranges stay where the configs are
known to train (e.g. PPO's learning rate within a decade of its default).
This table moves beside the configs (`agents/configs/`) once they are nested.
"""

from agents.experiment.search_space import Categorical, Int, LogUniform, Uniform

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

SEARCH_SPACES = {
    'default': _PPO,
    'pendulum': _PPO,
    'cartpole': _PPO,
    'balloon': {
        'algorithm.learning_rate': LogUniform(5e-5, 1e-3),
        'algorithm.entropy_coef': LogUniform(1e-3, 3e-2),
        'algorithm.update_epochs': Int(2, 8),
        'algorithm.discount': Categorical([0.99, 0.993, 0.996]),
    },
}


def for_config(name):
  """The declared search space of a named config.

  Raises:
    KeyError: no space is declared for that name (the message lists those that are).
  """
  if name not in SEARCH_SPACES:
    raise KeyError(f"No search space is declared for config {name!r}; declared: "
                   f'{sorted(SEARCH_SPACES)}. Pass search_space=... instead.')
  return SEARCH_SPACES[name]


# QR-DQN (agents/algorithms/qrdqn): the replay ratio, the return horizon and the
# target network's lag are what its learning is most sensitive to.
SEARCH_SPACES['cartpole_qrdqn'] = {
    'algorithm.learning_rate': LogUniform(3e-4, 3e-3),
    'algorithm.n_step': Int(1, 5),
    'algorithm.num_quantiles': Categorical([10, 25, 51]),
    'algorithm.gradient_steps': Int(4, 32),
    'algorithm.target_update_period': Categorical([10, 100, 1000]),
    'algorithm.epsilon_decay_steps': Int(4_000, 20_000, log=True),
    'algorithm.double_q': Categorical([False, True]),
}
