"""Where a PPO training step's time goes, from TensorFlow's profiler. Prints JSON.

    python -m bench.ppo_step_profile [--config=pendulum]

Builds the config as training does (environments, in-graph batch, PPO, the fused step),
times a step while training (acting and recording) and while evaluating (acting only),
then records one segment of steps with `tf.profiler.experimental` and sums the trace's
events by name: the executor's work (`ExecutorState::Process`), the environment's
`numpy_function` call and the ops the profiler times on their own (the networks'
fused matmuls), per step. The trace is parsed from its XSpace protobuf directly, so no
profiler plug-in is needed.
"""

import argparse
import collections
import glob
import json
import os
import sys
import tempfile
import time

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')


def _best_step_us(fused, steps, repeats=3):
  """Fastest of `repeats` calls of `steps` steps (each followed by the update step)."""
  best = float('inf')
  for _ in range(repeats):
    start = time.perf_counter()
    fused(steps=steps)
    best = min(best, (time.perf_counter() - start) / steps)
    fused(steps=1)
  return best * 1e6


def _trace_totals(logdir):
  """(line name, event name) -> (total microseconds, count) over the newest trace."""
  from tensorflow.tsl.profiler.protobuf import xplane_pb2
  path = sorted(glob.glob(os.path.join(logdir, '**', '*.xplane.pb'), recursive=True))[-1]
  space = xplane_pb2.XSpace()
  with open(path, 'rb') as file:
    space.ParseFromString(file.read())
  totals = collections.defaultdict(lambda: [0.0, 0])
  for plane in space.planes:
    for line in plane.lines:
      for event in line.events:
        key = (line.name, plane.event_metadata[event.metadata_id].name)
        totals[key][0] += event.duration_ps / 1e6
        totals[key][1] += 1
  return totals


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--config', default='pendulum')
  parser.add_argument('--top', type=int, default=12)
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  import tensorflow as tf

  from agents.configs import resolution
  from agents.tools import in_graph_batch_env, simulate
  from agents.training import builders, trainer
  config = resolution.resolve(args.config, {})
  trainer.configure_threads(config['loop']['tf_threads'])
  batch_env = builders.make_batch_env(config)
  try:
    env = in_graph_batch_env.InGraphBatchEnv(batch_env, seed=0)
    is_training = tf.Variable(True)
    algorithm = builders.build_algorithm(config, batch_env.observation_space,
                                         batch_env.action_space, is_training=is_training)
    fused = simulate.FusedStep(env, algorithm)
    steps = config['algorithm']['segment_length'] - 1
    fused(reset=True, steps=steps + 1)  # Traces, fills the memory once and updates.
    training_us = _best_step_us(fused, steps)
    is_training.assign(False)
    start = time.perf_counter()
    fused(steps=steps)
    acting_us = (time.perf_counter() - start) / steps * 1e6
    is_training.assign(True)
    fused(reset=True, steps=steps + 1)
    logdir = tempfile.mkdtemp(prefix='ppo-profile-')
    tf.profiler.experimental.start(logdir)
    fused(steps=steps)
    tf.profiler.experimental.stop()
    totals = _trace_totals(logdir)
  finally:
    batch_env.close()
  compute = sorted(((name, value) for (line, name), value in totals.items()
                    if line != 'python'), key=lambda item: -item[1][0])
  print(json.dumps({
      'config': args.config, 'environments': len(batch_env), 'profiled_steps': steps,
      'training_step_us': round(training_us, 1), 'acting_step_us': round(acting_us, 1),
      'trace_per_step': [{'event': name[-120:], 'us': round(us / steps, 1),
                          'events': round(count / steps, 1)}
                         for name, (us, count) in compute[:args.top]],
      'load_avg_1min': round(os.getloadavg()[0], 2)}, indent=1))
  return 0


if __name__ == '__main__':
  sys.exit(main())
