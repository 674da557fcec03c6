"""The balloon's named training configs, registered by its plug-in (`--config=balloon`).

`balloon` is the quick default, `balloon_spread` the best learned setting measured and
`balloon_qrdqn` QR-DQN's. The measurements behind each choice are on the docs' results
page (docs/results.md).
"""

from agents.configs import named, sections
from agents.env.balloon.constants import BALLOON_ENV_ID, DEFAULT_WIND, LEGACY_WIND

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
    # BLE's generative wind (the default, named so the run records it).
    'kwargs': {'progress_reward': 0.2, 'wind': 'generative'},
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
      # The value MLP reads the ambient features and every 4th level too (`value_stride`),
      # in float32 products: compiled by XLA (below), the update costs less so.
      'network': {'policy_layers': [64], 'column_layers': [32], 'column_stride': 4,
                  'value_layers': [128, 128], 'value_stride': 4, 'matmul_dtype': 'float32'},
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
          # The update compiled by XLA in one function: the column's small ops fuse.
          'jit_compile': True,
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
      # As its fits were measured: bfloat16 products, the update op by op.
      'network': {'column_value': True, 'value_stride': 1, 'matmul_dtype': 'bfloat16'},
      'algorithm': {'jit_compile': False},
  })


def balloon_qrdqn():
  """QR-DQN (BLE's `quantile` agent) on the balloon: Discrete(3) actions, 1099-float
  observations, 960-step episodes.

  The environment section is the PPO `balloon` config's (same
  id, imports, vectorised slabs in worker processes, the same shaped training reward) but
  with 64 balloons. The hyperparameters start from BLE's quantile agent
  (balloon_learning_environment/agents/configs/quantile.gin): 51 quantiles, gamma 0.993,
  5-step returns, a hard target copy every 100 gradient steps, Adam. What does not carry
  over to balloons stepping together is adapted, each measured in docs/algorithms_qrdqn.md
  ("Balloon: the levers"):

  - network: the wind-column quantile network (`network.kind: column`,
    agents/env/balloon/column_quantile_network.py): one small MLP shared by every 4th
    level gives each level's quantiles, read by the action that reaches it. In 410k-step
    fits it flew `small_eval` at 0.232 against the flat (256, 256) MLP's 0.164
    (+0.068 [+0.021, +0.117] paired). BLE's 8 x 600 MLP at lr 2e-6 would be too slow for
    a 1-hour budget on 2 cores;
  - balloons and replay: 64 balloons and 100,000 transitions (1,562 rows per balloon, more
    than one 960-step episode each, float16: 220 MB in memory and per checkpoint); with
    256 balloons and 64,000 transitions each ring held a quarter of an episode. Alone this
    lever measured 0.164 against 0.152 at 410k steps (within noise);
  - replay ratio: one gradient step of 256 per batch step of 64 balloons, 4 samples per
    transition (BLE takes one of 32 every 4 transitions, 8 per transition);
  - exploration: BLE explores with MarcoPolo (random-walk episodes) and epsilon 0; here
    epsilon-greedy decays from 1 to 0.02 over the first 500k steps;
  - rewards unscaled (`reward_scale: 1`; 1 - gamma measured worse, see the docs).

  Three fits of its 4,300,800 steps (about 38 minutes each on 2 cores) flew `small_eval`
  at 0.330, 0.324 and 0.330 (mean 0.328), above the station seeker (0.313) and
  Perciatelli44 (0.316); the best is shipped as `models/balloon_qrdqn`.
  """
  return named.merge(sections.defaults_of('qrdqn', network_kind='column'), {
      'environment': dict(ENVIRONMENT, num_agents=64),
      'network': {'kind': 'column', 'hidden_layers': [64], 'column_layers': [32],
                  'column_stride': 4, 'matmul_dtype': 'bfloat16'},
      'algorithm': {
          'num_quantiles': 51,
          'discount': 0.993,
          'n_step': 5,
          'learning_rate': 1e-4,
          'adam_epsilon': 2e-5,
          'batch_size': 256,
          'replay_capacity': 100_000,
          'replay_dtype': 'float16',
          'learning_starts': 25_600,
          'update_every': 1,
          'gradient_steps': 1,
          'target_update_period': 100,
          'epsilon_start': 1.0,
          'epsilon_end': 0.02,
          'epsilon_decay_steps': 500_000,
      },
      # The budget its three fits were measured at; a checkpoint (220 MB, the replay memory
      # with it) every 307,200 steps.
      'loop': dict(LOOP, steps=4_300_800, checkpoint_every=307_200),
  })


def _with_wind(environment, wind):
  kwargs = dict(environment.get('kwargs') or {})
  if 'wind' in kwargs:
    return environment
  return dict(environment, kwargs=dict(kwargs, wind=wind))


def complete_saved(environment):
  """A saved config's `environment` section with its wind named: one saved before the
  wind was named (no `kwargs.wind`) flew in the procedural wind, then the default
  (its plug-in's `complete_saved_config`)."""
  return _with_wind(environment, LEGACY_WIND)


def complete_new(environment):
  """A config's `environment` section with the default wind named where it names none
  (its plug-in's `complete_config`), so its run records the wind it flies."""
  return _with_wind(environment, DEFAULT_WIND)


# Where QR-DQN's initial weights come from when it fine-tunes Perciatelli44.
PERCIATELLI44_WEIGHTS = 'agents.env.balloon.controllers.perciatelli44:layer_weights'


def balloon_finetune_perciatelli():
  """QR-DQN started from BLE's Perciatelli44 (its architecture, quantiles and released
  weights, `agents.env.balloon.controllers.perciatelli44.layer_weights`), trained on.

  It trains on the `balloon` config's shaped reward (BLE's reward plus 0.2 per km gained
  toward the station each step) with little exploration (the network already flies).
  Two fine-tunes of its 2M steps (17-20 minutes each on 2 cores) flew `small_eval` at
  0.357 and 0.367, +0.046 [+0.015, +0.080] over the released weights (0.316), paired;
  on BLE's reward alone the same run read +0.005. Its weights must be on this machine
  (`python -m agents.env.balloon.ble_models fetch`), else building the
  run fails in one line that says so.
  """
  from agents.env.balloon.controllers import perciatelli44
  config = sections.with_network_kind(balloon_qrdqn(), 'mlp')
  return named.merge(config, {
      'network': {'kind': 'mlp', 'hidden_layers': list(perciatelli44.HIDDEN_LAYERS),
                  'activation': 'relu', 'matmul_dtype': 'bfloat16',
                  'initial_weights': PERCIATELLI44_WEIGHTS},
      # Batches of 64 (one sample per transition): a gradient step of the 7 x 600 network
      # on 256 windows took 0.37 s on the loaded 2-core machine, on 64 0.033 s.
      'algorithm': {'num_quantiles': perciatelli44.NUM_QUANTILES, 'reward_scale': 1.0,
                    'batch_size': 64,
                    'learning_rate': 1e-5, 'epsilon_start': 0.02, 'epsilon_end': 0.01,
                    'epsilon_decay_steps': 100_000},
      'loop': {'steps': LOOP['steps'], 'checkpoint_every': LOOP['checkpoint_every']},
  })
