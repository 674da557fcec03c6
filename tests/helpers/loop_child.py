"""A training run for `loop_test` to kill and resume.

    python -m tests.helpers.loop_child LOGDIR MAX_STEP

It trains `MockLearner` on two mock environments with a train phase that
checkpoints every 10 environment steps and a short eval phase. Building the
run lives here so that the killed child and the resuming test build exactly
the same objects.
"""

import sys

from agents.tools import batch_env as batch_env_lib
from agents.tools import in_graph_batch_env, mock_algorithm, mock_environment
from agents.tools import loop as loop_lib


def build(logdir):
  """Builds the loop and its algorithm.

  Args:
    logdir: the run directory.

  Returns:
    Tuple (loop, algorithm).
  """
  envs = [mock_environment.MockEnvironment([3]), mock_environment.MockEnvironment([5, 2])]
  batch = in_graph_batch_env.InGraphBatchEnv(
      batch_env_lib.BatchEnv(envs), info_specs=mock_environment.INFO_SPECS)
  loop = loop_lib.Loop(logdir)
  learner = mock_algorithm.MockLearner(batch)
  loop.add_phase('train', batch, learner, steps=20, is_training=True, steps_per_call=2,
                 log_every=10, checkpoint_every=10)
  loop.add_phase('eval', batch, learner, steps=10, is_training=False, steps_per_call=5)
  return loop, learner


def main(argv):
  loop, _ = build(argv[1])
  loop.run(int(argv[2]))


if __name__ == '__main__':
  main(sys.argv)
