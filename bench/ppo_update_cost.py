"""The cost of one PPO update, with and without XLA, paired in one process. Prints JSON.

    python -m bench.ppo_update_cost [--config=balloon] [--rounds=10] [--tf_threads=0]

Builds PPO twice from the config (`algorithm.jit_compile` true and false) for the
spaces of one environment of the config, fills both memories with the same random
segment (observations in [0, 1], random actions, rewards and values) and times
`update` alone, the variants alternating round by round. Reported per variant: the
first call (tracing and compiling), and the median wall and CPU milliseconds of an
update; and the median of the round-by-round ratios (op by op / XLA).
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
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
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
  for name, jit in (('xla', True), ('op_by_op', False)):
    variant_config = resolution.resolve(args.config, {'algorithm.jit_compile': jit})
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
  report = {'config': args.config, 'rounds': args.rounds,
            'samples_per_update': int(np.prod(variants['xla']['algorithm'].memory.length.shape)
                                      * variants['xla']['algorithm'].memory.capacity),
            'load_avg_1min': round(os.getloadavg()[0], 2), 'variants': {}}
  for name, variant in variants.items():
    report['variants'][name] = {
        'first_call_seconds': round(variant['first'], 2),
        'median_update_ms': round(float(np.median(variant['wall'])) * 1e3, 1),
        'median_update_cpu_ms': round(float(np.median(variant['cpu'])) * 1e3, 1)}
  ratio = np.array(variants['op_by_op']['wall']) / np.array(variants['xla']['wall'])
  cpu_ratio = np.array(variants['op_by_op']['cpu']) / np.array(variants['xla']['cpu'])
  report['op_by_op_over_xla'] = round(float(np.median(ratio)), 3)
  report['op_by_op_over_xla_cpu'] = round(float(np.median(cpu_ratio)), 3)
  print(json.dumps(report, indent=1))
  return 0


if __name__ == '__main__':
  sys.exit(main())
