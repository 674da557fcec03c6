"""The balloon's registrations in the framework's extension points (`agents.plugins`).

setup.py declares `register` as the balloon's `agents.plugins` entry point, so the core
finds the balloon's networks, configs and search space by name, and everything else it
brings through one `BalloonPlugin` registered under its Gymnasium id, without importing
the balloon: the plug-in's costly fields are imported when read.
"""

from agents import plugins
from agents.env.balloon import constants, registration


def _evaluation(name):
  """A field imported from the balloon's evaluation module (slabs, metrics, baselines)."""
  return plugins.imported(f'agents.env.balloon.evaluation:{name}')


class BalloonPlugin(plugins.EnvironmentPlugin):
  """What the balloon brings: the fields of `agents.plugins.EnvironmentPlugin` it sets, and
  the difficulty strata (`strata`, `stratum_size`, `strata_path`) that
  `agents.evaluation.strata` ranks."""

  # Training and configs: its wind named in every config (today's default, or the
  # procedural wind of a config saved before the wind was named), TWR50 and the failure
  # rates in every training row, its Numba kernels loaded by the workers' forkserver.
  complete_config = plugins.imported('agents.env.balloon.configs:complete_new')
  complete_saved_config = plugins.imported('agents.env.balloon.configs:complete_saved')
  episode_collectors = plugins.imported('agents.env.balloon.training_statistics:default_collectors')
  search_objective = plugins.imported('agents.env.balloon.search:twr50_objective')
  worker_preloads = ('agents.env.balloon.worker_preload',)

  # Evaluation.
  metric = 'twr50'
  metric_label = 'TWR50'
  metric_range = (0.0, 1.0)
  metric_notes = {
      'twr50': 'TWR50 = steps within 50 km / episode length (a balloon that dies early '
               'counts as outside afterwards)',
      'time_within_radius': "BLE's TWR50 = steps within 50 km / steps flown",
  }
  described_metrics = ('twr50', 'time_within_radius')
  counted_flags = {'failures': constants.FAILURES}
  table_columns = (('BLE TWR50', 'time_within_radius', 'mean'), ('failures', 'failures', 'any'))
  table_note = 'TWR50 = steps within 50 km / episode length; BLE TWR50 = / steps flown.'
  training_row = {'ble_twr50': ('time_within_radius', 'mean'), 'failures': ('failures', 'any')}
  distribution = (('twr50', 'TWR50 (/ episode length)'),
                  ('time_within_radius', "BLE's TWR50 (/ steps flown)"))
  episode_length = constants.EPISODE_STEPS
  steps_finished_episodes = True  # a finished balloon stays put when its slab steps
  flight_path_keys = constants.FLIGHT_PATH_KEYS
  strata = _evaluation('STRATA')
  stratum_size = _evaluation('STRATUM_SIZE')
  strata_path = _evaluation('STRATA_PATH')
  named_suites = _evaluation('NAMED_SUITES')
  baselines = _evaluation('BASELINES')
  episode_seed = _evaluation('episode_seed')
  check_options = _evaluation('check_options')
  suite_defaults = _evaluation('suite_defaults')
  suite_option_keys = ('wind',)
  make_slab = _evaluation('make_slab')
  episode_metrics = _evaluation('EpisodeMetrics')
  flight_renderer = _evaluation('flight_renderer')
  # Playback shows BLE's reward (not the shaped training reward), the episode's TWR50
  # over the steps played, and the renderer's flight plot at the episode's end.
  playback_kwargs = {'progress_reward': 0.0}
  # Environment options that shape the observation: suites fly an agent with its own.
  observation_kwargs = ('lookahead',)
  playback_summary = _evaluation('playback_summary')
  final_frame_plot = True


BALLOON_PLUGIN = BalloonPlugin()


def register():
  """Registers the balloon's entries; calling it again changes nothing."""
  registration.register()  # its Gymnasium id, for processes that never import agents.env
  plugins.NETWORKS.register('column', plugins.NetworkEntry(
      'agents.env.balloon.column_network:ColumnPolicy',
      'agents.env.balloon.column_network_config:ColumnNetworkConfig'))
  plugins.QUANTILE_NETWORKS.register('column', plugins.NetworkEntry(
      'agents.env.balloon.column_quantile_network:ColumnQuantileNetwork',
      'agents.env.balloon.column_network_config:ColumnQuantileConfig'))
  plugins.CONFIGS.register('balloon', 'agents.env.balloon.configs:balloon')
  plugins.CONFIGS.register('balloon_spread', 'agents.env.balloon.configs:balloon_spread')
  plugins.CONFIGS.register('balloon_qrdqn', 'agents.env.balloon.configs:balloon_qrdqn')
  plugins.CONFIGS.register('balloon_finetune_perciatelli',
                           'agents.env.balloon.configs:balloon_finetune_perciatelli')
  plugins.SEARCH_SPACES.register('balloon', 'agents.env.balloon.search:BALLOON_SPACE')
  plugins.ENVIRONMENTS.register(constants.BALLOON_ENV_ID, BALLOON_PLUGIN)
