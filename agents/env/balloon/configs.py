"""The balloon's named training configs, registered by its plug-in (`--config=balloon`).

The measurements behind each choice are on the docs' results page (docs/results.md,
"Balloon learning" and "Balloon training speed").
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


def balloon_lookahead():
  """The `balloon` config with the observation option `lookahead`: every read level also
  shows what heading for it would do over the next 3, 6 and 12 hours, from the forecast
  and the GP's posterior (agents/env/balloon/observation/lookahead.py; not BLE's observation)."""
  return _with_lookahead(True)


def balloon_two_stage():
  """The `balloon_lookahead` config with two-stage features: every read level also shows
  the best plan that holds it for 3 hours, then heads for the best of 8 follow-up
  levels, at 6 and 12 hours (agents/env/balloon/observation/lookahead.py, `switch_hours`)."""
  return _with_lookahead({'switch_hours': 3.0})


def balloon_spread():
  """The best learned setting measured: the `balloon_two_stage` config with a value
  network that reads the column (`network.column_value`) and spread features: what each
  level's path would give in a wind that differs from the estimate by its uncertainty,
  in 8 directions (agents/env/balloon/observation/lookahead.py, `spread_directions`)."""
  config = _with_lookahead({'switch_hours': 3.0, 'spread_directions': 8})
  return named.merge(config, {'network': {'column_value': True}})


def _with_lookahead(option):
  """The `balloon` config with `environment.kwargs.lookahead` set to `option`."""
  config = balloon()
  return named.merge(config, {'environment': {
      'kwargs': dict(config['environment']['kwargs'], lookahead=option)}})
