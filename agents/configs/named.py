"""Named training configs: each is a function that returns a full run config.

Each config is the defaults declared by the sections and the algorithm, with
nested overrides merged on by `merge`, which refuses keys the base does not
have, so a typo cannot hide. `CONFIGS` (the registry `agents.plugins.CONFIGS`) maps
the names to the functions: these generic ones, and those that environments
register (the balloon's `balloon`, in `agents.env.balloon.configs`).
"""

import copy

from agents import plugins
from agents.config_fields import ConfigError
from agents.configs import sections


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


# Short rollouts for the classic-control tasks: an update every 64 steps of the 8 agents,
# 8 mini-batches of 64, so as many gradient steps per frame as 256-step segments but four
# times as many updates. Pendulum is solved in about half the episodes (median 108 against
# 231 over 5 seeds), CartPole in about a third of the steps (9k against 26k over 3). Too few
# updates for XLA's compile (seconds) to pay back, so they run op by op.
SHORT_SEGMENTS = {'segment_length': 64, 'num_minibatches': 8, 'jit_compile': False}


def pendulum():
  """Pendulum-v1: continuous torque, 200-step episodes; passes -200 at about 20-25k steps."""
  return merge(default(), {
      'environment': {'id': 'Pendulum-v1'},
      'loop': {'steps': 200_000},
      # A shorter horizon than 0.99 keeps the value targets of this dense
      # reward well conditioned; with 0.99 one seed in three got stuck.
      'algorithm': {'discount': 0.95, 'learning_rate': 1e-3, **SHORT_SEGMENTS},
  })


def cartpole():
  """CartPole-v1: two discrete actions, episodes up to 500 steps; passes 475 at about 10k steps."""
  return merge(default(), {
      'environment': {'id': 'CartPole-v1'},
      'loop': {'steps': 100_000},
      'algorithm': {'learning_rate': 1e-3, **SHORT_SEGMENTS},
  })


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


CONFIGS = plugins.CONFIGS
for _config in (default, pendulum, cartpole, cartpole_qrdqn):
  CONFIGS.register(_config.__name__, _config)

# BatchPPO's MuJoCo configs, written its way in the command-line layer; registered by
# path (imported at first use, so the layers below the scripts import nothing of them).
BATCHPPO_CONFIGS = ('reacher', 'cheetah', 'walker', 'hopper', 'ant', 'humanoid')
for _name in BATCHPPO_CONFIGS:
  CONFIGS.register(_name, f'agents.scripts.configs:{_name}')
