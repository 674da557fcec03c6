"""Exports a trained policy as a TensorFlow SavedModel that loads without this package.

    python -m agents.scripts.export --logdir=RUN_DIR [--outdir=DIR] [--checkpoint=PATH]

The SavedModel holds only the network and the observation normaliser (not the
training memory) and has these functions, all on batches:

- feed-forward policy: `action(observ [N, *obs_shape]) -> action [N, ...]`,
  the deterministic action (Gaussian mean clipped to the bounds, or the most
  likely discrete action), normalisation included;
- recurrent policy: `action(observ, state) -> {'action', 'state'}` and
  `initial_state(batch_size) -> state`;
- `value(observ [N, *obs_shape]) -> [N]`.

Load it with `tf.saved_model.load(path)` in any TensorFlow program.
"""

import argparse
import os
import sys

import tensorflow as tf


class ExportedPolicy(tf.Module):
  """The deterministic policy of a PPO algorithm, packaged for `tf.saved_model.save`."""

  def __init__(self, algorithm, observation_space):
    super().__init__(name='exported_policy')
    # Only the network and the normaliser become part of the SavedModel; the
    # algorithm is reached through closures so its memory and optimiser stay out.
    self.network = algorithm.network
    self.observ_normalize = algorithm.observ_normalize
    network = self.network
    observ_spec = tf.TensorSpec([None, *observation_space.shape], tf.float32, name='observ')

    def action(observ):
      params, _ = network.policy(algorithm.normalize_observ(observ),
                                 network.initial_state(tf.shape(observ)[0]))
      return algorithm.clip_action(network.distribution(params).mode())

    def recurrent_action(observ, state):
      params, state = network.policy(algorithm.normalize_observ(observ), state)
      return {'action': algorithm.clip_action(network.distribution(params).mode()),
              'state': state}

    def value(observ):
      return network.value(algorithm.normalize_observ(observ))

    if network.recurrent:
      state_spec = tf.TensorSpec([None, network.state_size], tf.float32, name='state')
      self.action = tf.function(recurrent_action, input_signature=(observ_spec, state_spec))
      self.initial_state = tf.function(
          network.initial_state, input_signature=(tf.TensorSpec([], tf.int32,
                                                                name='batch_size'),))
    else:
      self.action = tf.function(action, input_signature=(observ_spec,))
    self.value = tf.function(value, input_signature=(observ_spec,))


def export_policy(algorithm, observation_space, path):
  """Saves the deterministic policy of `algorithm` as a SavedModel at `path`."""
  tf.saved_model.save(ExportedPolicy(algorithm, observation_space), path)
  return path


def restore_algorithm(run_dir, checkpoint=None):
  """Rebuilds the algorithm of a run and restores a checkpoint into it.

  Args:
    run_dir: run directory with `config.yaml` and `checkpoints/`.
    checkpoint: checkpoint prefix; None takes the latest.

  Returns:
    (config, algorithm, observation_space, action_space).

  Raises:
    FileNotFoundError: the run has no checkpoint.
  """
  from agents.scripts import config_schema, train
  config = config_schema.load_yaml(os.path.join(run_dir, 'config.yaml'))
  env = train.make_env(config)
  observation_space, action_space = env.observation_space, env.action_space
  env.close()
  algorithm = train.build_algorithm(config, observation_space, action_space)
  path = checkpoint or tf.train.latest_checkpoint(os.path.join(run_dir, 'checkpoints'))
  if path is None:
    raise FileNotFoundError(f'No checkpoint in {os.path.join(run_dir, "checkpoints")}.')
  # The loop also saved its global step; only the algorithm is needed here.
  tf.train.Checkpoint(algorithm=algorithm).restore(path).expect_partial()
  return config, algorithm, observation_space, action_space


def main(argv=None):
  """Command line: export the latest (or given) checkpoint of a run."""
  parser = argparse.ArgumentParser(prog='agents.scripts.export', description=__doc__.split('\n')[0])
  parser.add_argument('--logdir', required=True, help='Run directory.')
  parser.add_argument('--outdir', default=None, help='Where to write; default RUN_DIR/policy.')
  parser.add_argument('--checkpoint', default=None, help='Checkpoint prefix; default latest.')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  _, algorithm, observation_space, _ = restore_algorithm(args.logdir, args.checkpoint)
  path = export_policy(algorithm, observation_space,
                       args.outdir or os.path.join(args.logdir, 'policy'))
  print(f'Exported the policy to {path}.')
  return 0


if __name__ == '__main__':
  sys.exit(main())
