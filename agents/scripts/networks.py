"""BatchPPO's network models by their BatchPPO names: a thin face over PPO's networks.

A BatchPPO config names its network as `network = networks.feed_forward_gaussian`;
these names are the classes of `agents.algorithms.ppo.networks`, and the config's
translation (`agents.configs.batchppo`) turns each into its `network.kind`:

| BatchPPO name | class here | `network.kind` |
|---|---|---|
| `feed_forward_gaussian` | `FeedForwardPolicy` (Box: a diagonal Gaussian) | `feed_forward` |
| `feed_forward_categorical` | `FeedForwardPolicy` (Discrete: a categorical) | `feed_forward` |
| `recurrent_gaussian` | `RecurrentPolicy` (a GRU policy) | `recurrent` |

One class serves both feed-forward names: it picks its head from the action space.
A network of your own is registered as a kind (`agents.plugins.NETWORKS`) and named
by that kind.
"""

from agents.algorithms.ppo.networks import FeedForwardPolicy, RecurrentPolicy

# BatchPPO's names, lower case as in its networks.py.
feed_forward_gaussian = FeedForwardPolicy  # pylint: disable=invalid-name
feed_forward_categorical = FeedForwardPolicy  # pylint: disable=invalid-name
recurrent_gaussian = RecurrentPolicy  # pylint: disable=invalid-name

__all__ = ['FeedForwardPolicy', 'RecurrentPolicy', 'feed_forward_categorical',
           'feed_forward_gaussian', 'recurrent_gaussian']
