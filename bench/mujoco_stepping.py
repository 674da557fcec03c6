"""MuJoCo stepping: BatchEnv's placements against Gymnasium's vector environments and EnvPool.

HalfCheetah-v5, 8 environments, uniform random actions (drawn before the clock starts),
each stepper in interleaved rounds so that a shared machine's load falls on all alike:

- `batch_env_in_process`: `BatchEnv` with the 8 environments in this process;
- `batch_env_2x4`: `BatchEnv`, 2 worker processes with a slab of 4 each;
- `batch_env_8`: `BatchEnv`, 8 worker processes;
- `sync`, `async`: Gymnasium's `SyncVectorEnv` and `AsyncVectorEnv` (autoreset);
- `envpool`: EnvPool's synchronous mode with 2 threads, when `envpool` imports.

Finished episodes (truncated at 1,000 steps) are reset as each stepper wants it. Prints
one JSON object: per stepper its steps/s of every round, the median, and the median's
ratio to `sync` and to `envpool`.

    python bench/mujoco_stepping.py [--rounds 3] [--steps 1000] [--envs 8]
"""

import argparse
import json
import os
import statistics
import time

import gymnasium
import numpy as np

ENV_ID = 'HalfCheetah-v5'


def _actions(space, count, steps, seed=0):
  rng = np.random.default_rng(seed)
  return rng.uniform(space.low, space.high, (steps, count, *space.shape)).astype(space.dtype)


def _batch_env(count, processes, envs_per_process):
  from agents.tools import batch_env as batch_env_lib
  batch = batch_env_lib.BatchEnv.from_constructors(
      lambda: gymnasium.make(ENV_ID), count, processes=processes,
      envs_per_process=envs_per_process)
  batch.reset()

  def step(actions):
    _, _, terminated, truncated, _ = batch.step(actions)
    done = np.flatnonzero(terminated | truncated)
    if len(done):
      batch.reset(done)

  return step, batch.close


def _vector(count, cls):
  env = cls([lambda: gymnasium.make(ENV_ID) for _ in range(count)])
  env.reset(seed=0)
  return (lambda actions: env.step(actions)), env.close


def _envpool(count):
  import envpool
  env = envpool.make_gymnasium(ENV_ID, num_envs=count, batch_size=count, num_threads=2,
                               seed=0)
  env.reset()
  return (lambda actions: env.step(actions)), env.close


def steppers(count):
  """{name: factory returning (step(actions), close)}."""
  made = {
      'batch_env_in_process': lambda: _batch_env(count, False, 1),
      'batch_env_2x4': lambda: _batch_env(count, True, max(1, count // 2)),
      'batch_env_8': lambda: _batch_env(count, True, 1),
      'sync': lambda: _vector(count, gymnasium.vector.SyncVectorEnv),
      'async': lambda: _vector(count, gymnasium.vector.AsyncVectorEnv),
  }
  try:
    import envpool  # noqa: F401  pylint: disable=unused-import
    made['envpool'] = lambda: _envpool(count)
  except ImportError:
    pass
  return made


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
  parser.add_argument('--rounds', type=int, default=3)
  parser.add_argument('--steps', type=int, default=1000, help='Batch steps per round.')
  parser.add_argument('--envs', type=int, default=8)
  args = parser.parse_args(argv)
  probe = gymnasium.make(ENV_ID)
  actions = _actions(probe.action_space, args.envs, args.steps)
  probe.close()
  made = steppers(args.envs)
  opened = {name: factory() for name, factory in made.items()}
  rates = {name: [] for name in made}
  try:
    for step, _ in opened.values():  # Warm-up: caches, first resets.
      for actions_now in actions[:50]:
        step(actions_now)
    for _ in range(args.rounds):
      for name, (step, _) in opened.items():
        start = time.perf_counter()
        for actions_now in actions:
          step(actions_now)
        rates[name].append(args.steps * args.envs / (time.perf_counter() - start))
  finally:
    for _, close in opened.values():
      close()
  medians = {name: statistics.median(values) for name, values in rates.items()}
  report = {'env': ENV_ID, 'num_envs': args.envs, 'rounds': args.rounds,
            'batch_steps_per_round': args.steps, 'cpus': os.cpu_count(),
            'load_average_1min': os.getloadavg()[0], 'steppers': {}}
  for name, values in rates.items():
    row = {'steps_per_second': [round(value) for value in values],
           'median': round(medians[name]),
           'vs_sync': round(medians[name] / medians['sync'], 3)}
    if 'envpool' in medians:
      row['vs_envpool'] = round(medians[name] / medians['envpool'], 3)
    report['steppers'][name] = row
  print(json.dumps(report, indent=1))


if __name__ == '__main__':
  main()
