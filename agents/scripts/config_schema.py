"""The keys a training config may hold, their types, and validation and YAML I/O.

A config is a plain mapping. `validate` checks the resolved mapping against
`SCHEMA`: an unknown key or a value of the wrong type raises `ConfigError`
naming the key (and, for a typo, the closest known key). Configs are written
to and read from YAML with ruamel.yaml's safe loader only.
"""

import difflib
import io

from ruamel.yaml import YAML

# key -> (accepted Python types, None allowed, description).
SCHEMA = {
    'algorithm': ((str,), False, "the algorithm; only 'ppo'"),
    'env': ((str,), False, 'Gymnasium environment id'),
    'env_kwargs': ((dict,), False, 'keyword arguments of gymnasium.make'),
    'env_imports': ((list,), False, 'modules imported before gymnasium.make (registration)'),
    'max_episode_steps': ((int,), True, 'time limit; None keeps the registered one'),
    'num_agents': ((int,), False, 'number of parallel environments'),
    'env_processes': ((bool,), False, 'step environments in worker processes'),
    'vector_env': ((bool,), False, "build slabs with gymnasium.make_vec (the env's own "
                   'vectorised implementation, autoreset disabled)'),
    'envs_per_process': ((int,), False, 'environments per worker process; 0 spreads them '
                         'over the CPU cores'),
    'steps': ((int,), False, 'environment steps of training, summed over agents'),
    'seed': ((int,), False, 'seed of weights, sampling and environments'),
    'network': ((str,), False, "'feed_forward' or 'recurrent'"),
    'policy_layers': ((list,), False, 'hidden sizes of the policy'),
    'value_layers': ((list,), False, 'hidden sizes of the value function'),
    'gru_units': ((int,), False, 'GRU size of the recurrent policy'),
    'activation': ((str,), False, "'tanh', 'relu' or 'elu'"),
    'init_std': ((float,), False, 'initial std of the Gaussian policy'),
    'segment_length': ((int,), False, 'steps per agent between updates'),
    'update_epochs': ((int,), False, 'epochs per update'),
    'num_minibatches': ((int,), False, 'mini-batches (or chunks) per epoch'),
    'discount': ((float,), False, 'gamma'),
    'gae_lambda': ((float,), False, 'GAE lambda'),
    'learning_rate': ((float,), False, 'Adam step size'),
    'max_grad_norm': ((float,), False, 'global gradient-norm clip; 0 disables'),
    'policy_objective': ((str,), False, "'kl_penalty' (BatchPPO) or 'clipped'"),
    'kl_target': ((float,), False, 'target KL of the adaptive penalty'),
    'kl_init_penalty': ((float,), False, 'initial KL penalty coefficient'),
    'kl_cutoff_factor': ((float,), False, 'quadratic cutoff above this multiple of kl_target'),
    'kl_cutoff_coef': ((float,), False, 'weight of the quadratic KL cutoff'),
    'clip_ratio': ((float,), False, 'epsilon of the clipped surrogate'),
    'value_coef': ((float,), False, 'weight of the value loss'),
    'entropy_coef': ((float,), False, 'weight of the entropy bonus'),
    'normalize_observ': ((bool,), False, 'streaming observation normalisation'),
    'observ_clip': ((float,), False, 'clip of normalised observations'),
    'normalize_reward': ((bool,), False, 'scale rewards by the std of the return'),
    'reward_clip': ((float,), False, 'clip of scaled rewards'),
    'normalize_advantage': ((bool,), False, 'normalise advantages per mini-batch'),
    'tf_threads': ((int,), False, "TensorFlow's intra- and inter-op threads; 0 keeps its "
                   'default (all cores)'),
    'steps_per_call': ((int,), False, 'batch steps per tf.function call'),
    'log_every': ((int,), False, 'environment steps between logged rows'),
    'checkpoint_every': ((int,), False, 'environment steps between checkpoints'),
    'eval_every': ((int,), False, 'training steps between evaluation phases; 0 disables'),
    'eval_steps': ((int,), False, 'environment steps of one evaluation phase'),
}


class ConfigError(ValueError):
  """A config key is unknown, missing or has a value of the wrong type."""


def _type_ok(value, types, nullable):
  if value is None:
    return nullable
  if isinstance(value, bool):
    return bool in types
  if float in types and isinstance(value, int):
    return True
  return isinstance(value, types)


def check_key(key, value):
  """Raises `ConfigError` unless `key` is known and `value` has its type."""
  if key not in SCHEMA:
    close = difflib.get_close_matches(key, SCHEMA, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ''
    raise ConfigError(f"Unknown config key '{key}'.{hint}")
  types, nullable, description = SCHEMA[key]
  if not _type_ok(value, types, nullable):
    expected = ' or '.join(t.__name__ for t in types) + (' or None' if nullable else '')
    raise ConfigError(f"Config key '{key}' ({description}) must be {expected}, "
                      f'got {type(value).__name__} {value!r}.')


def validate(config):
  """Checks every key and type of a resolved config; returns it as a plain dict.

  Args:
    config: mapping from keys of `SCHEMA` to values.

  Returns:
    A new dict with float-typed keys converted to float.

  Raises:
    ConfigError: naming the first unknown, missing or mistyped key.
  """
  for key, value in config.items():
    check_key(key, value)
  missing = sorted(set(SCHEMA) - set(config))
  if missing:
    raise ConfigError(f"Config is missing the key '{missing[0]}' ({SCHEMA[missing[0]][2]}).")
  resolved = {}
  for key, value in config.items():
    if SCHEMA[key][0] == (float,) and value is not None:
      value = float(value)
    resolved[key] = value
  return resolved


def parse_override(text):
  """Parses one `key=value` override; the value is read as YAML (safe loader).

  Args:
    text: e.g. 'learning_rate=1e-3' or 'policy_layers=[64, 64]'.

  Returns:
    (key, value) with the key checked against the schema.

  Raises:
    ConfigError: no '=', or the key is unknown, or the value has the wrong type.
  """
  if '=' not in text:
    raise ConfigError(f"Override '{text}' must look like key=value.")
  key, raw = text.split('=', 1)
  key = key.strip()
  value = YAML(typ='safe', pure=True).load(raw) if raw.strip() else None
  if isinstance(value, str) and _looks_like_float(value):
    value = float(value)  # YAML 1.2 reads '1e-3' as a string; treat it as the number.
  if key in SCHEMA and SCHEMA[key][0] == (float,) and isinstance(value, int) \
      and not isinstance(value, bool):
    value = float(value)
  check_key(key, value)
  return key, value


def _looks_like_float(text):
  try:
    float(text)
  except ValueError:
    return False
  return True


def dump_yaml(config):
  """Returns the config as a YAML string."""
  stream = io.StringIO()
  yaml = YAML(typ='safe', pure=True)
  yaml.default_flow_style = False
  yaml.dump(dict(config), stream)
  return stream.getvalue()


def save_yaml(config, path):
  """Writes the config to `path` as YAML."""
  with open(path, 'w', encoding='utf-8') as file:
    file.write(dump_yaml(config))


def load_yaml(path):
  """Reads a config written by `save_yaml` (safe loader) and validates it."""
  with open(path, encoding='utf-8') as file:
    config = YAML(typ='safe', pure=True).load(file)
  if not isinstance(config, dict):
    raise ConfigError(f'{path} does not hold a mapping.')
  return validate(config)
