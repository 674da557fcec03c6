"""The cost of a PPO training frame under config variants, paired in one process. Prints JSON.

    python -m bench.ppo_variants [--config=pendulum] [--rounds=20]
        [--variant name:key=value,key=value ...]

Every variant builds its own environments, PPO and fused step from the config with its
overrides (`--variant xla_off:algorithm.jit_compile=false`; the variant `config` is the
config as it is). After a warm-up (tracing, compiling and one update each), the rounds
alternate the variants (A, B, A, B, ...): each round runs one whole segment of every
variant, its update included, so a change of machine load hits them alike. Reported:
the median microseconds per environment frame of each variant, and each variant's
median of the round-by-round ratios to the first.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')


def parse_variant(text):
  """'name:key=value,key=value' -> (name, overrides)."""
  from agents import configs
  name, _, sets = text.partition(':')
  overrides = dict(configs.parse_override(item) for item in sets.split(',') if item)
  return name, overrides


def _build(config_name, overrides):
  import tensorflow as tf

  from agents.configs import resolution
  from agents.tools import in_graph_batch_env, simulate
  from agents.training import builders
  config = resolution.resolve(config_name, dict(overrides, **{'environment.processes': False}))
  batch_env = builders.make_batch_env(config)
  env = in_graph_batch_env.InGraphBatchEnv(batch_env, seed=config['seed'])
  algorithm = builders.build_algorithm(config, batch_env.observation_space,
                                       batch_env.action_space,
                                       is_training=tf.Variable(True, trainable=False))
  fused = simulate.FusedStep(env, algorithm)
  steps = config['algorithm']['segment_length']
  start = time.perf_counter()
  fused(reset=True, steps=steps)  # Traces, compiles and runs the first update.
  return batch_env, fused, steps, time.perf_counter() - start


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--config', default='pendulum')
  parser.add_argument('--rounds', type=int, default=20)
  parser.add_argument('--tf_threads', type=int, default=1)
  parser.add_argument('--variant', action='append', default=[],
                      help="name:key=value,...; repeat for each variant (default: the config "
                           'with and without XLA).')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  from agents.training import trainer
  trainer.configure_threads(args.tf_threads)
  texts = args.variant or ['xla:algorithm.jit_compile=true', 'no_xla:algorithm.jit_compile=false']
  variants = [parse_variant(text) for text in texts]
  built = {name: _build(args.config, overrides) for name, overrides in variants}
  times = {name: [] for name in built}
  cpu_times = {name: [] for name in built}
  try:
    for _ in range(args.rounds):
      for name, (_, fused, steps, _) in built.items():
        start, cpu = time.perf_counter(), time.process_time()
        fused(steps=steps)
        frames = steps * len(fused.batch_env)
        times[name].append((time.perf_counter() - start) / frames)
        cpu_times[name].append((time.process_time() - cpu) / frames)
  finally:
    for batch_env, *_ in built.values():
      batch_env.close()
  first = times[variants[0][0]]
  report = {'config': args.config, 'rounds': args.rounds, 'tf_threads': args.tf_threads,
            'load_avg_1min': round(os.getloadavg()[0], 2), 'variants': {}}
  for name, overrides in variants:
    report['variants'][name] = {
        'overrides': overrides,
        'first_call_seconds': round(built[name][3], 2),
        'median_us_per_frame': round(float(np.median(times[name])) * 1e6, 2),
        'ratio_to_first': round(float(np.median(np.array(times[name]) / np.array(first))), 3),
        'median_cpu_us_per_frame': round(float(np.median(cpu_times[name])) * 1e6, 2),
        'cpu_ratio_to_first': round(float(
            np.median(np.array(cpu_times[name]) / np.array(cpu_times[variants[0][0]]))), 3)}
  print(json.dumps(report, indent=1))
  return 0


if __name__ == '__main__':
  sys.exit(main())
