"""The cost of one PPO update, with and without XLA, paired in one process. Prints JSON.

    python -m bench.ppo_update_cost [--config=balloon] [--rounds=10] [--tf_threads=0]
        [--variant name:key=value,key=value ...]

Builds PPO once per variant from the config with its overrides (by default
`algorithm.jit_compile` true and false: `xla` and `op_by_op`) for the spaces of one
environment of the config, fills every memory with the same random segment
(observations in [0, 1], random actions, rewards and values) and times `update` alone,
the variants alternating round by round. Reported per variant: the first call (tracing
and compiling), the median wall and CPU milliseconds of an update, and the medians of
the round-by-round ratios of the last variant's wall and CPU time to this one's (with
the defaults, op by op / XLA).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')


def _fill(algorithm, rng):
  """Fills the memory with one random segment (the same for every variant's `rng` seed)."""
  import tensorflow as tf
  memory = algorithm.memory
  for key, buffer in memory.buffers.items():
    shape = buffer.shape.as_list()
    if buffer.dtype == tf.bool:
      value = rng.random(shape) < (0.01 if key in ('terminated', 'truncated', 'reset') else 0.5)
    elif buffer.dtype.is_integer:
      value = rng.integers(0, 2, shape)
    else:
      value = rng.random(shape)
    buffer.assign(tf.constant(value, buffer.dtype))
  memory.length.assign(tf.fill(memory.length.shape, memory.capacity))


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--config', default='balloon')
  parser.add_argument('--rounds', type=int, default=10)
  parser.add_argument('--tf_threads', type=int, default=0,
                      help="TensorFlow's threads; 0 takes the config's loop.tf_threads.")
  parser.add_argument('--variant', action='append', default=[],
                      help='name:key=value,...; repeat for each variant (default: xla and '
                      'op_by_op, algorithm.jit_compile true and false).')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  from bench.ppo_variants import parse_variant
  texts = args.variant or ['xla:algorithm.jit_compile=true', 'op_by_op:algorithm.jit_compile=false']
  plans = [parse_variant(text) for text in texts]
  import gymnasium
  import tensorflow as tf

  from agents.configs import resolution
  from agents.training import builders, trainer
  config = resolution.resolve(args.config, {})
  trainer.configure_threads(args.tf_threads or config['loop']['tf_threads'])
  # As in the fused step (simulate._without_arithmetic_optimization): Grappler's AddOpsRewrite
  # breaks the op-by-op update's nested loops.
  tf.config.optimizer.set_experimental_options({'arithmetic_optimization': False})
  for module in config['environment']['imports']:
    __import__(module)
  env = gymnasium.make(config['environment']['id'], **config['environment']['kwargs'])
  spaces = (gymnasium.spaces.flatten_space(env.observation_space), env.action_space)
  env.close()
  variants = {}
  for name, overrides in plans:
    variant_config = resolution.resolve(args.config, overrides)
    algorithm = builders.build_algorithm(variant_config, *spaces)
    _fill(algorithm, np.random.default_rng(0))
    start = time.perf_counter()
    algorithm.update()
    variants[name] = {'algorithm': algorithm, 'first': time.perf_counter() - start,
                      'wall': [], 'cpu': []}
  for _ in range(args.rounds):
    for variant in variants.values():
      _fill(variant['algorithm'], np.random.default_rng(0))
      start, cpu = time.perf_counter(), time.process_time()
      variant['algorithm'].update()
      variant['wall'].append(time.perf_counter() - start)
      variant['cpu'].append(time.process_time() - cpu)
  memory = next(iter(variants.values()))['algorithm'].memory
  report = {'config': args.config, 'rounds': args.rounds,
            'samples_per_update': int(np.prod(memory.length.shape) * memory.capacity),
            'load_avg_1min': round(os.getloadavg()[0], 2), 'variants': {}}
  last = variants[plans[-1][0]]
  for name, variant in variants.items():
    report['variants'][name] = {
        'overrides': dict(plans)[name],
        'first_call_seconds': round(variant['first'], 2),
        'median_update_ms': round(float(np.median(variant['wall'])) * 1e3, 1),
        'median_update_cpu_ms': round(float(np.median(variant['cpu'])) * 1e3, 1),
        # Paired round by round: how many times this variant's update the last one's takes.
        'last_over_this': round(float(np.median(np.array(last['wall'])
                                                / np.array(variant['wall']))), 3),
        'last_over_this_cpu': round(float(np.median(np.array(last['cpu'])
                                                    / np.array(variant['cpu']))), 3)}
  print(json.dumps(report, indent=1))
  return 0


if __name__ == '__main__':
  sys.exit(main())
