"""The keys the wind-column network adds to a run's `network` section (no TensorFlow).

Registered with the network kind `column` by the balloon's plug-in, so that
`--set network.kind=column` brings these keys, checked before anything is built.
"""

import dataclasses

from agents.config_fields import ConfigError, param
from agents.env.balloon.constants import BALLOON_COLUMN_INDEX
from agents.env.balloon.observation.lookahead import check_lookahead


def check_stride(config, reader):
  """`network.column_stride` of `config`, refused (naming `reader`, what reads the column)
  unless it divides the balloon's own level's index, so that level is read."""
  stride = config.network_options.column_stride
  if BALLOON_COLUMN_INDEX % stride:
    raise ConfigError(f"Config key 'network.column_stride' = {stride} must divide "
                      f"{BALLOON_COLUMN_INDEX}, so that {reader} reads the balloon's own "
                      'level.')
  return stride


# Keys of PPO's `network` section the column network does not read: it draws its weights
# as it always has, which is what their declared defaults do.
UNREAD_KEYS = ('initializer', 'init_output_factor')


def check_unread_keys(network):
  """Refuses a `network` section (a dataclass) that sets a key the column network would
  ignore to anything but its declared default."""
  for key in UNREAD_KEYS:
    default = network.__dataclass_fields__[key].default
    if getattr(network, key) != default:
      raise ConfigError(f"Config key 'network.{key}' = {getattr(network, key)!r} is not read "
                        "by the column network (network.kind 'column'), which draws its own "
                        f'weights; leave it at {default!r}.')


@dataclasses.dataclass(frozen=True)
class ColumnNetworkConfig:
  """The wind-column policy's own keys of the `network` section."""
  column_layers: tuple[int, ...] = param((32, 32), "hidden sizes of the column policy's "
                                         'level-shared MLP', low=1)
  column_stride: int = param(1, 'the column policy reads every k-th level of the wind column '
                             f'(k divides {BALLOON_COLUMN_INDEX})', low=1)
  column_value: bool = param(False, 'the value function reads the column as the policy does '
                             '(a level-shared encoder, pooled), not as a flat vector')
  value_stride: int = param(1, 'the flat value function reads the ambient features and every '
                            f'k-th level of the column (k divides {BALLOON_COLUMN_INDEX}); 1 '
                            'reads the whole observation', low=1, legacy=1)

  @staticmethod
  def check_run(config):
    """Refuses a `column_stride` that would skip the balloon's own level, or levels
    without lookahead features."""
    stride = check_stride(config, 'the column policy')
    check_unread_keys(config.network)
    value_stride = config.network_options.value_stride
    if BALLOON_COLUMN_INDEX % value_stride:
      raise ConfigError(f"Config key 'network.value_stride' = {value_stride} must divide "
                        f"{BALLOON_COLUMN_INDEX}, so that the value function reads the "
                        "balloon's own level.")
    option = config.environment.kwargs.get('lookahead')
    try:
      lookahead = check_lookahead(option)
    except (TypeError, ValueError) as error:
      raise ConfigError(f"Config key 'environment.kwargs.lookahead': {error}") from None
    if lookahead is not None and stride % lookahead.stride:
      raise ConfigError(f"Config key 'network.column_stride' = {stride} must be a multiple of "
                        f"'environment.kwargs.lookahead.stride' = {lookahead.stride}, so that "
                        'every level the column policy reads has lookahead features.')
    if lookahead is not None and value_stride > 1 and value_stride % lookahead.stride:
      raise ConfigError(f"Config key 'network.value_stride' = {value_stride} must be a multiple "
                        f"of 'environment.kwargs.lookahead.stride' = {lookahead.stride}.")


@dataclasses.dataclass(frozen=True)
class ColumnQuantileConfig:
  """The keys QR-DQN's column quantile network adds to the `network` section (its context
  MLP is `network.hidden_layers`)."""
  column_layers: tuple[int, ...] = param((32,), "hidden sizes of the level-shared MLP that "
                                         "gives every read level its quantiles", low=1)
  column_stride: int = param(4, 'the network reads every k-th level of the wind column '
                             f'(k divides {BALLOON_COLUMN_INDEX})', low=1)

  @staticmethod
  def check_run(config):
    """Refuses a `column_stride` that would skip the balloon's own level."""
    check_stride(config, 'the network')
