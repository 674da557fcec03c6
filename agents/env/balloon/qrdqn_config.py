"""The `balloon_qrdqn` run config: QR-DQN (BLE's `quantile` agent) on the stratospheric balloon.

Registered by the balloon's plug-in (`--config=balloon_qrdqn`); `balloon_qrdqn()` returns
a full run config. The
environment section is the PPO `balloon` config's (same id, imports, 256
balloons in two vectorised slabs in worker processes, the same shaped training
reward). The hyperparameters start from BLE's quantile agent
(balloon_learning_environment/agents/configs/quantile.gin): 51 quantiles,
gamma 0.993, 5-step returns, a hard target copy every 100 gradient steps, Adam.
What does not carry over to 256 balloons stepping together is adapted:

- replay ratio: BLE takes a gradient step of 32 every 4 transitions (8 samples
  per transition); here 4 gradient steps of 256 per batch step of 256
  balloons (4 samples per transition); the update still takes 55-64 % of a
  step (2,220 steps/s against 4,910 without it, docs/algorithms_qrdqn.md);
- replay capacity: BLE's 2M transitions of 1099 floats would take 4.4 GB in
  float16; here 64,000 transitions (250 rows per balloon), stored as float16
  (features lie within [-1, 1.25] on random flights, where float16 rounds by
  under 5e-4), 141 MB in memory, 147.5 MB per checkpoint on disk (measured);
- exploration: BLE explores with MarcoPolo (random-walk episodes) and
  epsilon 0; here epsilon-greedy decays from 1 to 0.02 over the first 500k steps;
- network: BLE's 8 x 600 MLP at lr 2e-6 would be too slow for a 1-hour budget
  on 2 cores; a (256, 256) MLP in bfloat16 products at lr 1e-4.
"""

from agents.configs import named, sections
from agents.env.balloon import configs


def balloon_qrdqn():
  """QR-DQN on the balloon: Discrete(3) actions, 1099-float observations, 960-step episodes."""
  return named.merge(sections.defaults_of('qrdqn'), {
      'environment': configs.ENVIRONMENT,
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
      'loop': configs.LOOP,
  })


# Where QR-DQN's initial weights come from when it fine-tunes Perciatelli44.
PERCIATELLI44_WEIGHTS = 'agents.env.balloon.controllers.perciatelli44:layer_weights'


def balloon_finetune_perciatelli():
  """QR-DQN started from BLE's Perciatelli44 (its architecture, quantiles and released
  weights, `agents.env.balloon.controllers.perciatelli44.layer_weights`), trained on.

  It trains on BLE's own reward (no progress shaping, so the targets keep the released
  network's scale) with little exploration (the network already flies); its weights
  must be on this machine (`python -m agents.env.balloon.controllers.perciatelli44 fetch`),
  else building the run fails in one line that says so.
  """
  from agents.env.balloon.controllers import perciatelli44
  config = balloon_qrdqn()
  return named.merge(config, {
      'environment': {'kwargs': dict(config['environment']['kwargs'], progress_reward=0.0)},
      'network': {'kind': 'mlp', 'hidden_layers': list(perciatelli44.HIDDEN_LAYERS),
                  'activation': 'relu', 'matmul_dtype': 'bfloat16',
                  'initial_weights': PERCIATELLI44_WEIGHTS},
      'algorithm': {'num_quantiles': perciatelli44.NUM_QUANTILES, 'reward_scale': 1.0,
                    'learning_rate': 1e-5, 'epsilon_start': 0.02, 'epsilon_end': 0.01,
                    'epsilon_decay_steps': 100_000},
  })
