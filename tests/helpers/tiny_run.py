"""A tiny CartPole training run shared by the script tests (built once per process)."""

import functools
import tempfile

from agents import configs
from tests.helpers import tiny_experiment

TINY_OVERRIDES = {
    'environment.num_agents': 2, 'algorithm.segment_length': 16,
    'algorithm.num_minibatches': 2, 'algorithm.update_epochs': 2, 'loop.steps': 128,
    'loop.steps_per_call': 16, 'loop.log_every': 64, 'loop.checkpoint_every': 64,
    'network.policy_layers': [8], 'network.value_layers': [8],
}


# QR-DQN's CartPole config shrunk the same way: a replay of 512, updates from step 32.
TINY_QRDQN_OVERRIDES = {
    'environment.num_agents': 2, 'algorithm.replay_capacity': 512,
    'algorithm.learning_starts': 32, 'algorithm.batch_size': 16,
    'algorithm.gradient_steps': 2, 'network.hidden_layers': [16], 'loop.steps': 128,
    'loop.steps_per_call': 16, 'loop.log_every': 64, 'loop.checkpoint_every': 64,
    'loop.eval_every': 0,
}


def tiny_qrdqn_config(**overrides):
  """`cartpole_qrdqn` shrunk to a run of about a second; overrides by unique key name.
  Half a tiny PPO run's CPU: tests of what does not depend on the algorithm but needs
  its update rows (the trackers) train it."""
  return configs.resolve('cartpole_qrdqn', dict(TINY_QRDQN_OVERRIDES, **overrides))


def tiny_config(name='cartpole', wind=None, **overrides):
  """The named config shrunk to a run of a few seconds; overrides by unique key name. With
  another algorithm than PPO (`algorithm.name`), PPO's keys of the shrinking are left out.
  `wind` names the balloon's wind (`with_wind`)."""
  base = TINY_OVERRIDES
  if overrides.get('algorithm.name', 'ppo') != 'ppo':
    base = tiny_experiment.without_ppo_keys(base)
  config = configs.resolve(name, dict(base, **overrides))
  return config if wind is None else with_wind(config, wind)


def with_wind(config, wind):
  """A balloon config with its wind named (the environment's `kwargs.wind`): tests name
  'procedural', which needs no weights, where they do not test BLE's generative wind."""
  environment = dict(config['environment'],
                     kwargs=dict(config['environment'].get('kwargs') or {}, wind=wind))
  return dict(config, environment=environment)


@functools.cache
def tiny_run():
  """Trains the tiny CartPole config once; returns (run_dir, result)."""
  from agents.training import trainer
  run_dir = tempfile.mkdtemp(prefix='tiny-run-')
  result = trainer.train(tiny_config(), run_dir, quiet=True)
  return run_dir, result


# The command-line flags of a CartPole run that never finishes by itself and writes a
# row every 64 steps (`python -m agents.scripts.train --logdir=DIR ` + these), for the
# tests that signal or race a running `train`. Its algorithm is the random agent: what
# these tests check is the run's, not the algorithm's, and it starts in a fraction of
# PPO's time.
ENDLESS_RUN = [
    '--config=cartpole', '--timestamp=t', '--quiet', '--num_agents=2',
    '--algorithm=random',
    '--set', 'loop.steps=10000000', '--set', 'loop.steps_per_call=16',
    '--set', 'loop.log_every=64', '--set', 'loop.checkpoint_every=1000000',
]


def policy_copy():
  """A fresh copy of the tiny run's exported policy/ (SavedModel, policy.yaml, card)."""
  import os
  import shutil
  path = os.path.join(tempfile.mkdtemp(prefix='tiny-policy-'), 'policy')
  shutil.copytree(os.path.join(tiny_run()[0], 'policy'), path)
  return path


def ctrl_c_at_row(row_number):
  """A patch of the training progress reporter that raises SIGINT (a user's Ctrl-C) as it
  reports its `row_number`-th row; use it as a context manager. Its `steps` attribute lists
  the steps of the rows reported under it."""
  import signal
  from unittest import mock

  from agents import tensorflow_start
  from agents.training import trainer
  original = trainer._ProgressReporter.__call__  # pylint: disable=protected-access
  steps = []

  def interrupting_call(reporter, row):
    steps.append(row['step'])
    if len(steps) == row_number:
      # The handler's notice (raise_signal runs the handler), written to descriptor 2.
      with tensorflow_start.captured_stderr_descriptor():
        signal.raise_signal(signal.SIGINT)
    return original(reporter, row)

  patch = mock.patch.object(trainer._ProgressReporter, '__call__', interrupting_call)
  patch.steps = steps
  return patch
