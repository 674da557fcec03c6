"""The hyperparameters of PPO and of its networks, declared once (no TensorFlow here).

`PPOConfig` is the `algorithm` section of a PPO run and `NetworkConfig` its
`network` section; `agents.configs` validates, saves and overrides them, and
`PPO.from_config` builds from them. Kept apart from `ppo.py` so that reading
and checking a config does not import TensorFlow.
"""

import dataclasses

from agents import plugins
from agents.config_fields import ConfigError, param

POLICY_OBJECTIVES = ('kl_penalty', 'clipped')
ACTIVATIONS = ('tanh', 'relu', 'elu')
MEAN_ACTIVATIONS = ('none', 'tanh')
STD_TRANSFORMS = ('exp', 'softplus')
INITIALIZERS = ('orthogonal', 'glorot')
MATMUL_DTYPES = ('float32', 'bfloat16')


@dataclasses.dataclass(frozen=True)
class PPOConfig:
  """The hyperparameters of PPO: the `algorithm` section of a run config."""
  segment_length: int = param(256, 'steps per agent between updates (memory capacity)', low=1)
  update_epochs: int = param(10, 'passes over the memory per update', low=1)
  num_minibatches: int = param(
      32, 'mini-batches per epoch (recurrent: chunks of agents; must divide the rows)', low=1)
  discount: float = param(0.99, 'gamma', low=0, high=1, low_open=True)
  gae_lambda: float = param(0.95, 'GAE lambda', low=0, high=1)
  learning_rate: float = param(3e-4, 'Adam step size', low=0, low_open=True)
  max_grad_norm: float = param(0.5, 'global gradient-norm clip; 0 disables', low=0)
  policy_objective: str = param('kl_penalty', "BatchPPO's adaptive KL penalty or the clipped "
                                'surrogate', choices=POLICY_OBJECTIVES)
  kl_target: float = param(1e-2, 'target KL per update of the adaptive penalty', low=0,
                           low_open=True)
  kl_init_penalty: float = param(1.0, 'initial KL penalty coefficient', low=0)
  kl_cutoff_factor: float = param(2.0, 'quadratic cutoff above this multiple of kl_target',
                                  low=0, low_open=True)
  kl_cutoff_coef: float = param(1000.0, 'weight of the quadratic KL cutoff', low=0)
  clip_ratio: float = param(0.2, 'epsilon of the clipped surrogate', low=0, high=1,
                            low_open=True)
  value_coef: float = param(0.5, 'weight of the value loss', low=0)
  entropy_coef: float = param(0.0, 'weight of the entropy bonus', low=0)
  normalize_ranges: bool = param(
      False, "BatchPPO's range normalisation: a Box observation space with finite bounds is "
      'mapped to [-1, 1] before anything else reads it, and the policy acts in [-1, 1] '
      'where the action space is a Box with finite bounds, mapped onto them',
      legacy=False)
  normalize_observ: bool = param(True, 'streaming observation normalisation')
  observ_clip: float = param(10.0, 'clip of normalised observations', low=0, low_open=True)
  normalize_reward: bool = param(True, 'scale rewards by the running std of the return')
  reward_clip: float = param(10.0, 'clip of scaled rewards', low=0, low_open=True)
  normalize_advantage: bool = param(True, 'normalise advantages per mini-batch')
  jit_compile: bool = param(True, "compile the update's epochs with XLA (TensorFlow's "
                            'jit_compile); false runs them op by op', legacy=False)

  @staticmethod
  def check_run(config):
    """Refuses a `num_minibatches` that does not divide the rows of an update."""
    check_minibatches(config.environment.num_agents, config.algorithm.segment_length,
                      config.algorithm.num_minibatches, config.network.kind == 'recurrent')


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
  """The network of PPO: the `network` section of a run config.

  `kind` names a network of `plugins.NETWORKS` (the core's `feed_forward` and
  `recurrent`, or one an environment registers); a kind may add keys of its own to the
  section (its `NetworkEntry.config`).
  """
  kinds = plugins.NETWORKS  # Where `kind` is looked up (not a config key).

  kind: str = param('feed_forward', 'a registered network kind: feed_forward, recurrent (a '
                    'GRU policy, as BatchPPO has), or one an environment registers')
  policy_layers: tuple[int, ...] = param((64, 64), 'hidden sizes of the policy', low=1)
  value_layers: tuple[int, ...] = param((64, 64), 'hidden sizes of the value function', low=1)
  gru_units: int = param(64, 'GRU size of the recurrent policy', low=1)
  activation: str = param('tanh', 'activation of the hidden layers', choices=ACTIVATIONS)
  init_std: float = param(1.0, 'initial std of the Gaussian policy', low=0, low_open=True)
  mean_activation: str = param('none', "squashes the Gaussian's mean: tanh keeps it in "
                               "(-1, 1) as BatchPPO's networks did", choices=MEAN_ACTIVATIONS,
                               legacy='none')
  std_transform: str = param('exp', "the Gaussian's state-independent std from its variable: "
                             "exp (a log std) or softplus (BatchPPO's)", choices=STD_TRANSFORMS,
                             legacy='exp')
  initializer: str = param('orthogonal', 'initial weights of the hidden layers and the value '
                           'output: orthogonal (gain sqrt(2); value output 1) or glorot '
                           "(Glorot uniform, BatchPPO's)", choices=INITIALIZERS,
                           legacy='orthogonal')
  init_output_factor: float | None = param(
      None, "BatchPPO's: the policy output layer starts from a truncated normal of std "
      'sqrt(1.3 * factor / fan_in); null: orthogonal of gain 0.01', low=0, low_open=True,
      legacy=None)
  matmul_dtype: str = param('float32', 'dtype of the hidden layers\' matrix products '
                            '(weights, gradients and Adam stay float32)', choices=MATMUL_DTYPES)


plugins.NETWORKS.register(
    'feed_forward', plugins.NetworkEntry('agents.algorithms.ppo.networks:FeedForwardPolicy'))
plugins.NETWORKS.register(
    'recurrent', plugins.NetworkEntry('agents.algorithms.ppo.networks:RecurrentPolicy'))


def check_minibatches(num_agents, segment_length, num_minibatches, recurrent):
  """Raises `ConfigError` unless `num_minibatches` divides the rows of an update.

  The rows are the agents (recurrent policy: whole rows are shuffled) or the
  agent steps of a segment (feed-forward policy).
  """
  rows = num_agents if recurrent else num_agents * segment_length
  if rows % num_minibatches:
    unit = 'num_agents' if recurrent else 'num_agents * segment_length'
    raise ConfigError(f"Config key 'algorithm.num_minibatches' = {num_minibatches} must divide "
                      f'{unit} = {rows}.')
