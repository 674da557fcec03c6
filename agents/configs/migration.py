"""Reads configs written by earlier versions: the flat format, and nested configs
with keys added or retired since.

Runs written before the nested layout hold a flat `config.yaml` (`env: ...`,
`learning_rate: ...`, `network: feed_forward`, ...). `migrate_flat` turns such
a mapping into the nested layout: the keys that were renamed are listed in
`RENAMES`; every other flat key goes to the one section that declares a key
of that name. The checkpoints of such a run are unchanged, so it resumes, and
export and visualize read it, without any step by hand.

`migrate_nested` brings nested configs of earlier versions up to date: keys added
since (with the value that keeps their old behaviour) and keys retired since (the
wind-column network's keys, which every PPO network section carried before a network
kind declared its own keys).
"""

from agents.config_fields import ConfigError
from agents.configs import sections

# Flat key -> dotted key, for the keys whose name changed.
RENAMES = {
    'algorithm': 'algorithm.name',
    'env': 'environment.id',
    'env_kwargs': 'environment.kwargs',
    'env_imports': 'environment.imports',
    'env_processes': 'environment.processes',
    'vector_env': 'environment.vector',
    'network': 'network.kind',
}


def is_flat(data):
  """Whether a mapping read from YAML is in the old flat format."""
  return 'env' in data or isinstance(data.get('algorithm'), str)


def migrate_flat(data):
  """Returns the nested form of a flat config mapping (only the keys it holds).

  Raises:
    ConfigError: a key of the flat mapping has no place in the nested layout.
  """
  name = data.get('algorithm', 'ppo')
  leaves = {}
  for dotted in sections.specs_of(name, data.get('network')):
    leaves.setdefault(dotted.rsplit('.', 1)[-1], []).append(dotted)
  nested = {}
  for key, value in data.items():
    dotted = RENAMES.get(key) or (leaves[key][0] if len(leaves.get(key, ())) == 1 else None)
    if dotted is None:
      raise ConfigError(f'Flat config key {key!r} has no place in the nested layout; write the '
                        'config in the nested format (see docs/usage.md, "Configs and overrides").')
    if '.' not in dotted:
      nested[dotted] = value
    else:
      section, leaf = dotted.split('.', 1)
      nested.setdefault(section, {})[leaf] = value
  return nested


# Keys a network section held, whatever its kind, before a kind declared its own keys;
# a run of another kind never read them.
RETIRED_NETWORK_KEYS = ('column_layers', 'column_stride', 'column_summary')


def migrate_nested(data):
  """Returns a full nested config mapping of an earlier version in today's layout.

  - `environment.ray_address`, `environment.max_restarts` (added): None and 0, no Ray
    cluster and no restarts, as before they existed;
  - `loop.eval_suite` (added): None, no suite evaluation, as before it existed;
  - `loop.track` (added): [], no experiment tracker, as before trackers existed;
  - `loop.select_suite` (added): None, no selection, as before it existed;
  - the wind-column keys of a network section of another kind (retired): dropped.
  """
  data = dict(data)
  if isinstance(data.get('environment'), dict):
    data['environment'] = dict(data['environment'])
    data['environment'].setdefault('ray_address', None)
    data['environment'].setdefault('max_restarts', 0)
  if isinstance(data.get('loop'), dict):
    data['loop'] = dict(data['loop'])
    data['loop'].setdefault('eval_suite', None)
    data['loop'].setdefault('track', [])
    data['loop'].setdefault('select_suite', None)
  network = data.get('network')
  return drop_retired_network_keys(data, network.get('kind') if isinstance(network, dict)
                                   else None)


def drop_retired_network_keys(data, network_kind):
  """Returns `data` without the retired wind-column keys when `network_kind` (the kind
  the config ends up with, which a partial mapping may leave to its base) is another.
  """
  network = data.get('network')
  if network_kind == 'column' or not isinstance(network, dict):
    return data
  return dict(data, network={key: value for key, value in network.items()
                             if key not in RETIRED_NETWORK_KEYS})
