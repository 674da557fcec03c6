"""BatchPPO's pre-defined configurations, written as BatchPPO writes them.

Each function returns `locals()`: BatchPPO's flat keys, translated into a run config
at one boundary (`agents.configs.batchppo`). Run one by its name or its path:

    python -m agents.scripts.train --config=cheetah --logdir=/tmp/logdir
    python -m agents.scripts.train --config=agents.scripts.configs:pendulum --logdir=...

The values are BatchPPO's (its agents/scripts/configs.py) on today's tasks: Gymnasium's
MuJoCo v5 environments where BatchPPO had gym's v2 ones, and Pendulum-v1 for
Pendulum-v0. The MuJoCo configs step their environments in the training process
(`env_processes = False`: BatchPPO's `--env_processes` flag as a key, which the flag
still overrides): a MuJoCo step takes tens of microseconds, and worker processes
stepped 30 of them slower than the training process did (docs/benchmarks.md). The
name `pendulum` itself runs this package's tuned Pendulum config
(`agents.configs.named`); BatchPPO's is `agents.scripts.configs:pendulum`. Write your
own the same way, in your own module, and pass `--config=mymodule:mytask`:

    from agents.scripts import configs

    def mytask():
      locals().update(configs.default())
      env = 'Hopper-v5'
      max_length = 1000
      steps = 2e6
      return locals()
"""

# pylint: disable=possibly-unused-variable,unused-variable
# A config is its function's local variables, returned by `locals()`.

from agents import algorithms
from agents.scripts import networks


def default():
  """BatchPPO's defaults for PPO."""
  # General
  algorithm = algorithms.PPO
  num_agents = 30
  eval_episodes = 30
  use_gpu = False
  # Environment
  normalize_ranges = True
  # Network
  network = networks.feed_forward_gaussian
  weight_summaries = dict(all=r'.*', policy=r'.*/policy/.*', value=r'.*/value/.*')
  policy_layers = 200, 100
  value_layers = 200, 100
  init_output_factor = 0.1
  init_std = 0.35
  # Optimization
  update_every = 30
  update_epochs = 25
  optimizer = 'adam'
  learning_rate = 1e-4
  # Losses
  discount = 0.995
  kl_target = 1e-2
  kl_cutoff_factor = 2
  kl_cutoff_coef = 1000
  kl_init_penalty = 1
  return locals()


def pendulum():
  """The pendulum classic control task."""
  locals().update(default())
  # Environment
  env = 'Pendulum-v1'
  max_length = 200
  steps = 1e6  # 1M
  # Optimization
  batch_size = 20
  chunk_length = 50
  return locals()


def cartpole():
  """The cart pole classic control task."""
  locals().update(default())
  # Environment
  env = 'CartPole-v1'
  max_length = 500
  steps = 2e5  # 200k
  normalize_ranges = False
  # Network
  network = networks.feed_forward_categorical
  return locals()


def reacher():
  """MuJoCo's reacher task."""
  locals().update(default())
  # Environment
  env = 'Reacher-v5'
  env_processes = False  # In this process: see the module docstring.
  max_length = 1000
  steps = 5e6  # 5M
  discount = 0.985
  update_every = 60
  return locals()


def cheetah():
  """MuJoCo's half cheetah task."""
  locals().update(default())
  # Environment
  env = 'HalfCheetah-v5'
  env_processes = False  # In this process: see the module docstring.
  max_length = 1000
  steps = 1e7  # 10M
  discount = 0.99
  return locals()


def walker():
  """MuJoCo's walker task."""
  locals().update(default())
  # Environment
  env = 'Walker2d-v5'
  env_processes = False  # In this process: see the module docstring.
  max_length = 1000
  steps = 1e7  # 10M
  return locals()


def hopper():
  """MuJoCo's hopper task."""
  locals().update(default())
  # Environment
  env = 'Hopper-v5'
  env_processes = False  # In this process: see the module docstring.
  max_length = 1000
  steps = 1e7  # 10M
  update_every = 60
  return locals()


def ant():
  """MuJoCo's ant task."""
  locals().update(default())
  # Environment
  env = 'Ant-v5'
  env_processes = False  # In this process: see the module docstring.
  max_length = 1000
  steps = 2e7  # 20M
  return locals()


def humanoid():
  """MuJoCo's humanoid task."""
  locals().update(default())
  # Environment
  env = 'Humanoid-v5'
  env_processes = False  # In this process: see the module docstring.
  max_length = 1000
  steps = 5e7  # 50M
  update_every = 60
  return locals()
