"""The balloon's named training configs, registered by its plug-in (`--config=balloon`).

`balloon` is the quick default, `balloon_spread` the best learned setting measured and
`balloon_qrdqn` QR-DQN's. The measurements behind each choice are on the docs' results
page (docs/results.md).
"""

from agents.configs import named, sections
from agents.env.balloon.constants import BALLOON_ENV_ID

# The environment and loop sections of every balloon config.
ENVIRONMENT = {
    'id': BALLOON_ENV_ID,
    'imports': ['agents.env'],
    # Two slabs of 128, one worker per core: a balloon step costs less in a larger slab.
    'num_agents': 256,
    'processes': True,
    # The balloon's own vectorised simulator steps a slab of balloons at once.
    'vector': True,
    # Shaped *training* reward: BLE's reward plus 0.2 per km gained toward the station
    # each step (potential-based); evaluation always flies BLE's reward.
    'kwargs': {'progress_reward': 0.2},
}

LOOP = {
    'steps': 2_000_000,
    'tf_threads': 2,
    'steps_per_call': 60,
    'log_every': 15_360,
    'checkpoint_every': 76_800,
    # Flown after each evaluation phase once loop.eval_every is set.
    'eval_suite': 'tiny_eval',
}


def balloon():
  """Stratospheric balloon: Discrete(3) actions, 1099-float observations, 960-step episodes."""
  return named.merge(sections.defaults_of('ppo', network_kind='column'), {
      'environment': ENVIRONMENT,
      # The wind-column policy (agents/env/balloon/column_network.py): one small MLP
      # shared across levels scores every 4th level, pooled into DOWN / STAY / UP.
      'network': {'policy_layers': [64], 'column_layers': [32], 'column_stride': 4,
                  'value_layers': [128, 128], 'matmul_dtype': 'bfloat16'},
      'algorithm': {
          # 256 balloons x 30-step segments = 7,680 samples per update.
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
      'loop': LOOP,
  })


def balloon_spread():
  """The best learned setting measured: the `balloon` config with lookahead features and a
  value network that reads the column (`network.column_value`).

  Every read level also shows what heading for it would do over the next 3, 6 and 12
  hours, from the forecast and the GP's posterior; at 6 and 12 hours the best plan that
  holds it for 3 hours, then heads for the best of 8 follow-up levels (`switch_hours`);
  and what its path would give in a wind that differs from the estimate by its
  uncertainty, in 8 directions (`spread_directions`). The features are computed in
  agents/env/balloon/observation/lookahead.py; they are not BLE's observation.
  """
  config = balloon()
  lookahead = {'switch_hours': 3.0, 'spread_directions': 8}
  return named.merge(config, {
      'environment': {'kwargs': dict(config['environment']['kwargs'], lookahead=lookahead)},
      'network': {'column_value': True},
  })


def balloon_qrdqn():
  """QR-DQN (BLE's `quantile` agent) on the balloon: Discrete(3) actions, 1099-float
  observations, 960-step episodes.

  The environment and loop sections are the PPO `balloon` config's (256 balloons in two
  vectorised slabs in worker processes, the same shaped training reward). The
  hyperparameters start from BLE's quantile agent (its configs/quantile.gin): 51
  quantiles, gamma 0.993, 5-step returns, a hard target copy every 100 gradient steps,
  Adam. What does not carry over to 256 balloons stepping together is adapted:

  - replay ratio: BLE takes a gradient step of 32 every 4 transitions (8 samples per
    transition); here 4 gradient steps of 256 per batch step of 256 balloons (4 samples
    per transition); the update still takes 55-64 % of a step (2,220 steps/s against
    4,910 without it, docs/algorithms_qrdqn.md);
  - replay capacity: BLE's 2M transitions of 1099 floats would take 4.4 GB in float16;
    here 64,000 transitions (250 rows per balloon), stored as float16 (features lie
    within [-1, 1.25] on random flights, where float16 rounds by under 5e-4), 141 MB in
    memory, 147.5 MB per checkpoint on disk (measured);
  - exploration: BLE explores with MarcoPolo (random-walk episodes) and epsilon 0; here
    epsilon-greedy decays from 1 to 0.02 over the first 500k steps;
  - network: BLE's 8 x 600 MLP at lr 2e-6 would be too slow for a 1-hour budget on 2
    cores; a (256, 256) MLP in bfloat16 products at lr 1e-4.
  """
  return named.merge(sections.defaults_of('qrdqn'), {
      'environment': ENVIRONMENT,
      'network': {'hidden_layers': [256, 256], 'matmul_dtype': 'bfloat16'},
      'algorithm': {
          'num_quantiles': 51,
          'discount': 0.993,
          'n_step': 5,
          'learning_rate': 1e-4,
          'adam_epsilon': 2e-5,
          'batch_size': 256,
          'replay_capacity': 64_000,
          'replay_dtype': 'float16',
          'learning_starts': 25_600,
          'update_every': 1,
          'gradient_steps': 4,
          'target_update_period': 100,
          'epsilon_start': 1.0,
          'epsilon_end': 0.02,
          'epsilon_decay_steps': 500_000,
      },
      'loop': LOOP,
  })
