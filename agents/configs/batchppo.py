"""BatchPPO's flat configs, translated at this one boundary into a run config.

A BatchPPO config is a function returning `locals()`: flat names such as `env`,
`max_length`, `update_every`, `policy_layers` and `kl_target`
(`agents.scripts.configs` holds the pre-defined ones). `translate` turns such a
mapping into the nested run config of `agents.configs`; every other part of the
package only sees the nested form. Unknown keys are refused by name, and so are
values that have no counterpart here (a constructor for `env`, an optimiser other
than Adam). What each key becomes, and where its meaning differs, is in
docs/coming_from_batchppo.md; `KEYS` is the list the test holds that page to.

Choices BatchPPO's code makes without a config key are made here too: its networks
(ReLU hidden layers, Glorot-uniform weights, a tanh on the Gaussian's mean, its std the
softplus of a variable, the policy output layer drawn by `init_output_factor`, 0.1
unless given), no gradient clipping, observations normalised and clipped at 5, rewards
scaled and clipped at 10, BatchPPO's adaptive KL penalty, and Monte-Carlo returns
(`gae_lambda` 1) unless `gae_lambda` is given. A task with its own slab here (the MuJoCo
tasks, `agents.env.mujoco`) steps as that slab (`environment.vector: true`).
"""

import math
import numbers

from agents import plugins
from agents.algorithms import registry
from agents.config_fields import ConfigError
from agents.configs import named, sections

# The keys BatchPPO's training code reads without a default: a config must set them
# (BatchPPO's own configs do, through `locals().update(default())`).
REQUIRED = ('env', 'max_length', 'steps', 'num_agents', 'update_every', 'update_epochs',
            'policy_layers', 'value_layers', 'init_std', 'learning_rate', 'discount',
            'kl_target', 'kl_cutoff_factor', 'kl_cutoff_coef', 'kl_init_penalty')

# Keys BatchPPO reads as None when absent.
OPTIONAL = ('algorithm', 'network', 'optimizer', 'eval_episodes', 'normalize_ranges',
            'gae_lambda', 'entropy_regularization', 'batch_size', 'chunk_length', 'use_gpu',
            'weight_summaries', 'init_output_factor', 'env_processes')

KEYS = REQUIRED + OPTIONAL

# BatchPPO's choices that its configs do not name (its networks and PPO's code).
FIXED = {
    'network': {'activation': 'relu', 'mean_activation': 'tanh', 'std_transform': 'softplus',
                'initializer': 'glorot'},
    'algorithm': {'policy_objective': 'kl_penalty', 'max_grad_norm': 0.0,
                  'normalize_observ': True, 'observ_clip': 5.0, 'normalize_reward': True,
                  'reward_clip': 10.0, 'normalize_advantage': True, 'value_coef': 1.0,
                  'entropy_coef': 0.0},
}

# BatchPPO's `default()` value of `init_output_factor`, which its networks read.
_DEFAULT_OUTPUT_FACTOR = 0.1


def is_flat(config) -> bool:
  """Whether a config function's mapping is BatchPPO's flat kind (no `environment` section)."""
  return isinstance(config, dict) and not any(
      isinstance(config.get(section), dict) for section in ('environment', 'loop'))


def translate(flat: dict, name: str = 'config') -> dict:
  """The run config (nested, not yet validated) of a BatchPPO-style flat config.

  Args:
    flat: the mapping a BatchPPO config function returns (its `locals()`).
    name: what to call it in messages (the config's name).

  Returns:
    A nested run config; `agents.configs.resolution` applies overrides and validates.

  Raises:
    ConfigError: an unknown or missing key, or a value without a counterpart here,
      named with `name`.
  """
  unknown = sorted(set(flat) - set(KEYS))
  if unknown:
    raise ConfigError(f'BatchPPO config {name!r}: unknown keys {unknown}; the known ones are '
                      f'{sorted(KEYS)} (docs/coming_from_batchppo.md).')
  missing = [key for key in REQUIRED if flat.get(key) is None]
  if missing:
    raise ConfigError(f'BatchPPO config {name!r} must set {missing} (start from '
                      "agents.scripts.configs.default(): 'locals().update(default())').")
  get = flat.get
  algorithm_name = _algorithm_name(get('algorithm'), name)
  _check_optimizer(get('optimizer'), name)
  max_length = _integer(name, 'max_length', get('max_length'))
  num_agents = _integer(name, 'num_agents', get('num_agents'))
  update_every = _integer(name, 'update_every', get('update_every'))
  # BatchPPO updates once `update_every` episodes have finished; here every agent steps
  # `segment_length` times between updates: the same number of steps when episodes
  # run to max_length.
  segment_length = math.ceil(update_every * max_length / num_agents)
  config = sections.defaults_of(algorithm_name)
  eval_episodes = get('eval_episodes') or 0
  overrides = {
      'environment': {'id': _env_id(get('env'), name), 'max_episode_steps': max_length,
                      'num_agents': num_agents},
      'network': {'kind': _network_kind(get('network'), name),
                  'policy_layers': tuple(get('policy_layers')),
                  'value_layers': tuple(get('value_layers')), 'init_std': get('init_std'),
                  'init_output_factor': (_DEFAULT_OUTPUT_FACTOR if get('init_output_factor')
                                         is None else get('init_output_factor')),
                  **FIXED['network']},
      'algorithm': {
          'segment_length': segment_length, 'update_epochs': get('update_epochs'),
          'num_minibatches': _minibatches(flat, segment_length * num_agents, max_length),
          'learning_rate': get('learning_rate'), 'discount': get('discount'),
          'gae_lambda': 1.0 if get('gae_lambda') is None else get('gae_lambda'),
          'kl_target': get('kl_target'), 'kl_cutoff_factor': get('kl_cutoff_factor'),
          'kl_cutoff_coef': get('kl_cutoff_coef'), 'kl_init_penalty': get('kl_init_penalty'),
          'normalize_ranges': bool(get('normalize_ranges')),
          **FIXED['algorithm'],
          'entropy_coef': get('entropy_regularization') or 0.0},
      # BatchPPO alternates a training phase of update_every episodes with an evaluation
      # phase of eval_episodes episodes; its `steps` counts the training steps only.
      'loop': {'steps': _integer(name, 'steps', get('steps')),
               'eval_every': update_every * max_length if eval_episodes else 0},
  }
  if overrides['environment']['id'] in plugins.VECTOR_ENVIRONMENTS:
    # The task's own slab (the MuJoCo tasks'): the same steps, without Gymnasium's
    # per-environment Python.
    overrides['environment']['vector'] = True
  if get('env_processes') is not None:  # BatchPPO's train flag, as a key of the config.
    overrides['environment']['processes'] = get('env_processes')
  if eval_episodes:
    overrides['loop']['eval_steps'] = _integer(name, 'eval_episodes', eval_episodes) * max_length
  if overrides['network']['kind'] != config['network'].get('kind'):
    config = sections.with_network_kind(config, overrides['network']['kind'])
  return named.merge(config, overrides)


def _integer(name, key, value):
  """Whole numbers (BatchPPO writes `steps = 1e7`) as ints; anything else refused."""
  if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != int(value):
    raise ConfigError(f'BatchPPO config {name!r}: {key!r} must be a whole number, got '
                      f'{value!r}.')
  return int(value)


def _env_id(env, name):
  if not isinstance(env, str):
    raise ConfigError(f"BatchPPO config {name!r}: 'env' must be a Gymnasium id; a constructor "
                      f'({env!r}) is not supported here: register it with gymnasium.register '
                      'and name its id.')
  return env


def _class_path(value):
  return f'{value.__module__}:{value.__qualname__}'


def _algorithm_name(value, name):
  """'ppo' for BatchPPO's `algorithms.PPO` (or the name); only PPO reads these keys."""
  if value is None or value == 'ppo':
    return 'ppo'
  if isinstance(value, type) and _class_path(value) == registry.ALGORITHMS['ppo'].algorithm:
    return 'ppo'
  raise ConfigError(f"BatchPPO config {name!r}: 'algorithm' must be PPO "
                    f"(agents.algorithms.PPO or 'ppo'), whose keys these are; got {value!r}. "
                    'Other algorithms take a run config (YAML or a named config).')


def _check_optimizer(value, name):
  label = getattr(value, '__name__', value)
  if value is not None and not (isinstance(label, str) and 'adam' in label.lower()):
    raise ConfigError(f"BatchPPO config {name!r}: 'optimizer' must be Adam (PPO's optimiser "
                      f'here), got {value!r}.')


def _network_kind(value, name):
  """The `network.kind` of a kind's name or of a registered network class."""
  if value is None:
    return 'feed_forward'
  registry.declarations('ppo')  # Registers PPO's network kinds.
  kinds = {kind: plugins.NETWORKS.get(kind).network for kind in plugins.NETWORKS.names()}
  if isinstance(value, str) and value in kinds:
    return value
  if isinstance(value, type):
    for kind, path in kinds.items():
      if path == _class_path(value):
        return kind
  raise ConfigError(f"BatchPPO config {name!r}: 'network' must be one of "
                    'agents.scripts.networks (feed_forward_gaussian, feed_forward_categorical, '
                    f'recurrent_gaussian) or a network kind {sorted(kinds)}; got {value!r}.')


def _minibatches(flat, rows, max_length):
  """Mini-batches per epoch: BatchPPO's batches of `batch_size` sequences (or chunks of
  `chunk_length` steps) of the `update_every` episodes; one when `batch_size` is unset."""
  batch_size = flat.get('batch_size')
  if not batch_size:
    return 1
  chunk_length = flat.get('chunk_length')
  per_episode = math.ceil(max_length / chunk_length) if chunk_length else 1
  count = max(1, flat['update_every'] * per_episode // batch_size)
  while rows % count:  # The nearest count that divides the rows of an update.
    count -= 1
  return count
