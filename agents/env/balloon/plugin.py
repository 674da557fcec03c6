"""The balloon's registrations in the framework's extension points (`agents.plugins`).

setup.py declares `register` as the balloon's `agents.plugins` entry point, so the core
finds the balloon's network, configs, collectors, evaluation, search and worker preload
without importing it.
"""

from agents import plugins
from agents.env.balloon import constants, registration


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
  plugins.SAVED_CONFIGS.register(constants.BALLOON_ENV_ID,
                                 'agents.env.balloon.configs:complete_saved')
  plugins.CONFIG_DEFAULTS.register(constants.BALLOON_ENV_ID,
                                   'agents.env.balloon.configs:complete_new')
  plugins.COLLECTORS.register(constants.BALLOON_ENV_ID,
                              'agents.env.balloon.collectors:default_collectors')
  plugins.SEARCH_SPACES.register('balloon', 'agents.env.balloon.search:BALLOON_SPACE')
  plugins.SEARCH_OBJECTIVES.register(constants.BALLOON_ENV_ID,
                                     'agents.env.balloon.search:twr50_objective')
  plugins.WORKER_PRELOADS.register(constants.BALLOON_ENV_ID,
                                   ('agents.env.balloon.worker_preload',))
  plugins.EVALUATION.register(constants.BALLOON_ENV_ID,
                              'agents.env.balloon.evaluation:BALLOON_EVALUATION')
