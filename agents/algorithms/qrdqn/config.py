"""The hyperparameters of QR-DQN and of its network, declared once (no TensorFlow here).

`QRDQNConfig` is the `algorithm` section of a QR-DQN run and `NetworkConfig`
its `network` section; `agents.configs` validates, saves and overrides them,
and `QRDQN.from_config` builds from them. Counts of steps are environment
steps summed over the batch (as the loop's global step counts them), except
`update_every` (fused batch steps) and `target_update_period` (gradient steps).
"""

import dataclasses

from agents import plugins
from agents.config_fields import ConfigError, param

ACTIVATIONS = ('tanh', 'relu', 'elu')
MATMUL_DTYPES = ('float32', 'bfloat16')
REPLAY_DTYPES = ('float32', 'float16')


@dataclasses.dataclass(frozen=True)
class QRDQNConfig:
  """The hyperparameters of QR-DQN: the `algorithm` section of a run config."""
  num_quantiles: int = param(51, 'quantiles of each action\'s return distribution', low=1)
  huber_kappa: float = param(1.0, 'kappa of the quantile Huber loss', low=0, low_open=True)
  discount: float = param(0.99, 'gamma', low=0, high=1, low_open=True)
  n_step: int = param(3, 'steps of the n-step return (cut at episode ends)', low=1)
  learning_rate: float = param(5e-4, 'Adam step size', low=0, low_open=True)
  adam_epsilon: float = param(3.125e-4, "Adam's epsilon (Dopamine's QR-DQN: 0.01 / 32)", low=0,
                              low_open=True)
  max_grad_norm: float = param(10.0, 'global gradient-norm clip; 0 disables', low=0)
  batch_size: int = param(64, 'transitions sampled per gradient step', low=1)
  replay_capacity: int = param(100_000, 'transitions the replay memory holds, over all '
                               'environments (each keeps capacity / num_agents rows)', low=1)
  replay_dtype: str = param('float32', 'dtype the replay memory stores observations in',
                            choices=REPLAY_DTYPES)
  learning_starts: int = param(1_000, 'environment steps recorded before the first update',
                               low=0)
  update_every: int = param(1, 'batch steps (one step of every environment) between updates',
                            low=1)
  gradient_steps: int = param(1, 'gradient steps per update', low=1)
  reward_scale: float = param(1.0, 'factor of the rewards in the targets (e.g. 1 - discount '
                              'keeps returns near the scale of one reward)', low=0,
                              low_open=True)
  target_update_period: int = param(100, 'gradient steps between target-network updates',
                                    low=1)
  target_update_tau: float = param(1.0, 'weight of the online network in a target update: '
                                   '1 copies, below 1 is Polyak averaging', low=0, high=1,
                                   low_open=True)
  double_q: bool = param(False, 'choose the bootstrap action with the online network '
                         '(double Q-learning)')
  epsilon_start: float = param(1.0, 'exploration rate at the first training step', low=0,
                               high=1)
  epsilon_end: float = param(0.05, 'exploration rate after the decay', low=0, high=1)
  epsilon_decay_steps: int = param(10_000, 'training environment steps of the linear decay '
                                   'from epsilon_start to epsilon_end', low=1)

  @staticmethod
  def check_run(config):
    """Refuses a replay memory smaller than a sampled batch, or too short per environment for
    an n-step window."""
    check_replay(config.environment.num_agents, config.algorithm)


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
  """The quantile network of QR-DQN: the `network` section of a run config.

  `kind` names a network of `plugins.QUANTILE_NETWORKS` (the core's `mlp`, or one an
  environment registers, such as the balloon's `column`); a kind may add keys of its own
  to the section (its `NetworkEntry.config`).
  """
  kinds = plugins.QUANTILE_NETWORKS  # Where `kind` is looked up (not a config key).

  kind: str = param('mlp', 'a registered quantile network kind: mlp (the flat MLP), or one '
                    'an environment registers (the balloon: column)')
  hidden_layers: tuple[int, ...] = param((64, 64), 'hidden sizes of the MLP body', low=1)
  activation: str = param('relu', 'activation of the hidden layers', choices=ACTIVATIONS)
  matmul_dtype: str = param('float32', 'dtype of the hidden layers\' matrix products '
                            '(weights, gradients and Adam stay float32)', choices=MATMUL_DTYPES)
  initial_weights: str = param('', "'package.module:function' of no argument returning the "
                               "initial [(kernel, bias), ...] of an mlp's layers, the output "
                               "layer last (both networks start from them); '' for random")


plugins.QUANTILE_NETWORKS.register(
    'mlp', plugins.NetworkEntry('agents.algorithms.qrdqn.qrdqn:QuantileNetwork'))


def rows_per_env(num_agents, replay_capacity):
  """Rows of each environment's ring of the replay memory."""
  return replay_capacity // num_agents


def check_replay(num_agents, hyperparameters):
  """Raises `ConfigError` unless the replay memory can hold a batch and an n-step window.

  Args:
    num_agents: environments of the batch.
    hyperparameters: the `algorithm` section (a `QRDQNConfig`).
  """
  capacity = hyperparameters.replay_capacity
  if capacity < hyperparameters.batch_size:
    raise ConfigError(f"Config key 'algorithm.replay_capacity' = {capacity} is below "
                      f'algorithm.batch_size = {hyperparameters.batch_size}.')
  # A window reads n_step + 1 rows; an episode end adds one row for the final observation.
  needed = hyperparameters.n_step + 2
  if rows_per_env(num_agents, capacity) < needed:
    raise ConfigError(f"Config key 'algorithm.replay_capacity' = {capacity} gives "
                      f'{rows_per_env(num_agents, capacity)} rows per environment for '
                      f'{num_agents} environments; n_step = {hyperparameters["n_step"]} needs '
                      f'at least {needed} (capacity >= {needed * num_agents}).')
