"""Named training configs: each is a function that returns a full run config.

Each config is the defaults declared by the sections and the algorithm, with
nested overrides merged on by `merge`, which refuses keys the base does not
have, so a typo cannot hide. `CONFIGS` maps the names to the functions.
"""

import copy

from agents.config_fields import ConfigError
from agents.configs import sections
from agents.env.balloon.constants import BALLOON_ENV_ID


def merge(base, overrides, path=''):
  """Returns a new config: `base` with the nested `overrides` applied.

  Sections (mappings at the top) merge key by key; any other value, a
  mapping such as `environment.kwargs` included, is replaced whole.

  Raises:
    ConfigError: an override key is not a key of `base`, named with its path.
  """
  merged = copy.deepcopy(base)
  for key, value in overrides.items():
    dotted = f'{path}{key}'
    if key not in base:
      raise ConfigError(f'Config key {dotted!r} is not a key of the base config '
                        f'(known here: {sorted(base)}).')
    if not path and key in sections.SECTIONS:
      if not isinstance(value, dict):
        raise ConfigError(f'Config section {dotted!r} must be a mapping, got {value!r}.')
      merged[key] = merge(base[key], value, f'{dotted}.')
    else:
      merged[key] = copy.deepcopy(value)
  return merged


def default():
  """PPO defaults shared by every config (CleanRL-like sizes, BatchPPO's KL penalty)."""
  return sections.defaults_of('ppo')


def pendulum():
  """Pendulum-v1: continuous torque, 200-step episodes; passes -200 at about 70-80k steps."""
  return merge(default(), {
      'environment': {'id': 'Pendulum-v1'},
      'loop': {'steps': 200_000},
      # A shorter horizon than 0.99 keeps the value targets of this dense
      # reward well conditioned; with 0.99 one seed in three got stuck.
      'algorithm': {'discount': 0.95, 'learning_rate': 1e-3},
  })


def cartpole():
  """CartPole-v1: two discrete actions, episodes up to 500 steps."""
  return merge(default(), {
      'environment': {'id': 'CartPole-v1'},
      'loop': {'steps': 100_000},
      'algorithm': {'learning_rate': 3e-4},
  })


def balloon():
  """Stratospheric balloon: Discrete(3) actions, 1099-float observations, 960-step episodes."""
  return merge(default(), {
      'environment': {
          'id': BALLOON_ENV_ID,
          'imports': ['agents.env'],
          # Two slabs of 128 (one worker per core): a balloon step costs less in a
          # larger slab. With 30-step segments an update still learns from 7,680
          # samples; over three seeds, small_eval TWR50 after 0.47M and 0.94M steps
          # matched that of 128 balloons with 60-step segments (README, "Balloon
          # training speed").
          'num_agents': 256,
          'processes': True,
          # The balloon's own vectorised simulator steps a slab of balloons at once.
          'vector': True,
          # Shaped *training* reward: BLE's reward plus 0.2 per km gained toward the
          # station each step (potential-based; evaluation flies BLE's reward). It
          # reached small_eval TWR50 0.17 in 0.47M steps, where BLE's reward alone
          # needed 1.4M steps for 0.145 (README, "Balloon learning").
          'kwargs': {'progress_reward': 0.2},
      },
      # The column policy judges every wind level with one small MLP shared across
      # levels and pools the scores into UP / STAY / DOWN by the levels each move
      # reaches (agents/algorithms/ppo/column_network.py). On seed 0 it reached
      # small_eval TWR50 0.29 in 0.47M steps, where the flat (256, 256) MLP
      # plateaued near 0.19 (README, "Balloon learning"). Reading every 4th level
      # (200 Pa apart, the balloon's own included) learnt alike at a quarter of the
      # column's cost; so did one column layer of 32 (not 32-32) and a (128, 128)
      # value function (not 256-256), over three seeds, at 1.25x the steps/s.
      # bfloat16 products and two TensorFlow threads speed the update (README,
      # "Balloon training speed").
      'network': {'kind': 'column', 'policy_layers': [64], 'column_layers': [32],
                  'column_stride': 4, 'value_layers': [128, 128],
                  'matmul_dtype': 'bfloat16'},
      'algorithm': {
          'segment_length': 30,
          'update_epochs': 5,
          'num_minibatches': 16,
          'discount': 0.993,
          'learning_rate': 3e-4,
          'entropy_coef': 0.01,
          # The column policy reads the raw features (all in [0, 1] but the pressure
          # ratio): per-index normalisation would scale every level differently.
          'normalize_observ': False,
      },
      'loop': {
          'steps': 2_000_000,
          'tf_threads': 2,
          'steps_per_call': 60,
          'log_every': 15_360,
          'checkpoint_every': 76_800,
          # Flown after each evaluation phase once loop.eval_every is set.
          'eval_suite': 'tiny_eval',
      },
  })


CONFIGS = {
    'default': default,
    'pendulum': pendulum,
    'cartpole': cartpole,
    'balloon': balloon,
}


def cartpole_qrdqn():
  """CartPole-v1 with QR-DQN: off-policy, 8 environments, half a gradient step per transition."""
  return merge(sections.defaults_of('qrdqn'), {
      'environment': {'id': 'CartPole-v1'},
      'network': {'hidden_layers': [256, 256]},
      'algorithm': {
          'num_quantiles': 25,
          'n_step': 3,
          'learning_rate': 2.3e-3,
          'batch_size': 64,
          'replay_capacity': 100_000,
          'learning_starts': 1_000,
          # 16 gradient steps every 4 batch steps of 8 environments: half a
          # gradient step per transition (rl-zoo's QR-DQN ratio on CartPole).
          'update_every': 4,
          'gradient_steps': 16,
          'target_update_period': 10,
          'epsilon_decay_steps': 8_000,
          'epsilon_end': 0.04,
      },
      'loop': {'steps': 60_000, 'steps_per_call': 64, 'log_every': 4_096,
               'checkpoint_every': 20_480, 'eval_every': 5_120, 'eval_steps': 8_000},
  })


CONFIGS['cartpole_qrdqn'] = cartpole_qrdqn
