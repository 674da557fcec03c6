"""The `balloon_qrdqn` run config: QR-DQN (BLE's `quantile` agent) on the stratospheric balloon.

Registered by the balloon's plug-in (`--config=balloon_qrdqn`); `balloon_qrdqn()` returns
a full run config, and `balloon_finetune_perciatelli()` the config that starts QR-DQN
from BLE's Perciatelli44. The environment section is the PPO `balloon` config's (same
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

One fit of it (seed 0) flew `small_eval` at 0.275 after 1.23M steps and 0.316 after
2.8M, level with the station seeker (0.313) and Perciatelli44 (0.316).
"""

from agents.configs import named, sections
from agents.env.balloon import configs


def balloon_qrdqn():
  """QR-DQN on the balloon: Discrete(3) actions, 1099-float observations, 960-step episodes."""
  return named.merge(sections.defaults_of('qrdqn', network_kind='column'), {
      'environment': dict(configs.ENVIRONMENT, num_agents=64),
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
  config = sections.with_network_kind(balloon_qrdqn(), 'mlp')
  return named.merge(config, {
      'environment': {'kwargs': dict(config['environment']['kwargs'], progress_reward=0.0)},
      'network': {'kind': 'mlp', 'hidden_layers': list(perciatelli44.HIDDEN_LAYERS),
                  'activation': 'relu', 'matmul_dtype': 'bfloat16',
                  'initial_weights': PERCIATELLI44_WEIGHTS},
      # Batches of 64 (one sample per transition): a gradient step of the 7 x 600 network
      # on 256 windows took 0.37 s on the loaded 2-core machine, on 64 0.033 s.
      'algorithm': {'num_quantiles': perciatelli44.NUM_QUANTILES, 'reward_scale': 1.0,
                    'batch_size': 64,
                    'learning_rate': 1e-5, 'epsilon_start': 0.02, 'epsilon_end': 0.01,
                    'epsilon_decay_steps': 100_000},
  })
