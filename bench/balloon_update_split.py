"""How a `balloon` training iteration splits between stepping and the update. Prints JSON.

    python -m bench.balloon_update_split [--repeats=6] [--set KEY=VALUE ...]

Builds the `balloon` config (with `--set` overrides) as training does: workers in
processes, the in-graph batch (without episode collectors), the algorithm and the
fused step. Its memory holds `segment_length` steps per balloon, so with S =
segment_length the update runs inside the S-th step. Each repeat times one fused call
of S - 1 steps (stepping: the environment, the policy, the value of both observations,
the memory) and then one call of one step that ends in the update; the median over
repeats is reported.
`policy_ms` and `value_ms` time the policy on one batch of observations and the
value function on two (a step's observation and the next), alone (mean of 200 calls).
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import numpy as np  # noqa: E402


def _mean_ms(function, *args, repeats=200):
  function(*args)
  start = time.perf_counter()
  for _ in range(repeats):
    function(*args)
  return (time.perf_counter() - start) / repeats * 1000


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--repeats', type=int, default=6)
  parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                      help='Override of the balloon config, e.g. network.column_layers=[32].')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  import tensorflow as tf

  from agents.configs import resolution
  from agents.tools import in_graph_batch_env, simulate
  from agents.training import builders, trainer
  overrides = dict(resolution.parse_override(text) for text in args.set)
  config = resolution.resolve('balloon', overrides)
  trainer.configure_threads(config['loop']['tf_threads'])
  tf.random.set_seed(0)
  batch_env = builders.make_batch_env(config)
  try:
    env = in_graph_batch_env.InGraphBatchEnv(batch_env, seed=0)
    algorithm = builders.build_algorithm(config, batch_env.observation_space,
                                         batch_env.action_space, is_training=tf.Variable(True))
    fused = simulate.FusedStep(env, algorithm)
    segment = config['algorithm']['segment_length']
    fused(reset=True, steps=segment)  # Traces, fills the memory once and updates.
    stepping, update = [], []
    for _ in range(args.repeats):
      start = time.perf_counter()
      fused(steps=segment - 1)
      middle = time.perf_counter()
      fused(steps=1)
      stepping.append(middle - start)
      update.append(time.perf_counter() - middle)
    network = algorithm.network
    batch = len(batch_env)
    observ = tf.random.uniform([batch, int(np.prod(batch_env.observation_space.shape))])
    state = tf.zeros([batch, network.state_size])
    policy = tf.function(lambda o, s: network.policy(o, s))
    value = tf.function(network.value)
    stepping_s = float(np.median(stepping)) * segment / (segment - 1)
    update_s = float(np.median(update))
    print(json.dumps({
        'overrides': overrides, 'balloons': batch, 'segment_length': segment,
        'stepping_s_per_segment': round(stepping_s, 3),
        'step_ms': round(1000 * stepping_s / segment, 2),
        'update_s': round(update_s, 3),
        'steps_per_second': round(batch * segment / (stepping_s + update_s), 1),
        'policy_ms': round(_mean_ms(policy, observ, state), 3),
        'value_ms': round(_mean_ms(value, tf.concat([observ, observ], 0)), 3),
        'load_avg_1min': round(os.getloadavg()[0], 2)}))
  finally:
    batch_env.close()
  return 0


if __name__ == '__main__':
  sys.exit(main())
