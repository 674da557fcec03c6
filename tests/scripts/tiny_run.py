"""A tiny CartPole training run shared by the script tests (built once per process)."""

import functools
import tempfile

from agents.scripts import configs

TINY_OVERRIDES = {
    'num_agents': 2, 'segment_length': 16, 'num_minibatches': 2, 'update_epochs': 2,
    'steps': 128, 'steps_per_call': 16, 'log_every': 64, 'checkpoint_every': 64,
    'policy_layers': [8], 'value_layers': [8],
}


def tiny_config(name='cartpole', **overrides):
  """The named config shrunk to a run of a few seconds."""
  return configs.resolve(name, dict(TINY_OVERRIDES, **overrides))


@functools.cache
def tiny_run():
  """Trains the tiny CartPole config once; returns (run_dir, result)."""
  from agents.scripts import train
  run_dir = tempfile.mkdtemp(prefix='tiny-run-')
  result = train.train(tiny_config(), run_dir, quiet=True)
  return run_dir, result
