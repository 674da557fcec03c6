"""MuJoCo stepping: BatchEnv's placements against Gymnasium's vector environments and EnvPool.

HalfCheetah-v5, 8 environments, uniform random actions (drawn before the clock starts),
each stepper in interleaved rounds so that a shared machine's load falls on all alike:

- `batch_env_default`: `BatchEnv` as `--config=cheetah` builds it with 8 agents (one
  `MujocoVectorEnv` slab in this process; the placement is printed to stderr);
- `batch_env_in_process`: `BatchEnv` with Gymnasium's 8 environments, one by one, in
  this process;
- `batch_env_2x4`: `BatchEnv`, 2 worker processes with a slab of 4 each;
- `batch_env_8`: `BatchEnv`, 8 worker processes;
- `sync`, `async`: Gymnasium's `SyncVectorEnv` and `AsyncVectorEnv` (autoreset);
- `envpool`: EnvPool's synchronous mode with 2 threads, when `envpool` imports;
- `batch_env_envpool`: `BatchEnv` over EnvPool (`environment.backend: envpool`).

Finished episodes (truncated at 1,000 steps) are reset as each stepper wants it. Prints
one JSON object: per stepper its steps/s of every round, the median, and the median's
ratio to `sync` and to `envpool`.

    python -m bench.mujoco_stepping [--rounds 3] [--steps 1000] [--envs 8]

With `--train-steps N`, it measures training instead: `python -m agents.scripts.train
--config=cheetah --set loop.steps=N`, once with `environment.backend: gymnasium` (the
default placement) and once with `envpool`, each in a fresh process, in interleaved
rounds; per backend the wall seconds, the steps per wall second (TensorFlow's start and
the first traces included), the CPU seconds of the run and its workers, and the
steps/s of each logged training row.

    python -m bench.mujoco_stepping --train-steps 60000 [--rounds 1] [--train-set key=value]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import gymnasium
import numpy as np

ENV_ID = 'HalfCheetah-v5'


def _actions(space, count, steps, seed=0):
  rng = np.random.default_rng(seed)
  return rng.uniform(space.low, space.high, (steps, count, *space.shape)).astype(space.dtype)


def _batch_env(count, processes, envs_per_process):
  from agents.tools import batch_env as batch_env_lib
  return _batch_env_of(batch_env_lib.BatchEnv.from_constructors(
      lambda: gymnasium.make(ENV_ID), count, processes=processes,
      envs_per_process=envs_per_process))


def _batch_env_of(batch):
  """A (step, close) pair that resets what finished, as the training loop does."""
  batch.reset()

  def step(actions):
    _, _, terminated, truncated, _ = batch.step(actions)
    done = np.flatnonzero(terminated | truncated)
    if len(done):
      batch.reset(done)

  return step, batch.close


def _default(count, backend='gymnasium'):
  """`BatchEnv` as a config builds it: `environment.processes: auto` (or the backend)."""
  from agents import configs
  from agents.training import builders
  config = configs.resolve('cheetah', {'environment.num_agents': count,
                                       'environment.backend': backend})
  batch = builders.make_batch_env(config)
  if backend == 'gymnasium':
    print(f'default placement: {batch.placement.describe()}', file=sys.stderr)
  return _batch_env_of(batch)


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
      'batch_env_default': lambda: _default(count),
      'batch_env_in_process': lambda: _batch_env(count, False, 1),
      'batch_env_2x4': lambda: _batch_env(count, True, max(1, count // 2)),
      'batch_env_8': lambda: _batch_env(count, True, 1),
      'sync': lambda: _vector(count, gymnasium.vector.SyncVectorEnv),
      'async': lambda: _vector(count, gymnasium.vector.AsyncVectorEnv),
  }
  try:
    import envpool  # noqa: F401  pylint: disable=unused-import
    made['envpool'] = lambda: _envpool(count)
    made['batch_env_envpool'] = lambda: _default(count, 'envpool')
  except ImportError:
    pass
  return made


BACKENDS = ('gymnasium', 'envpool')


def _train_once(backend, steps, extra):
  """Trains `--config=cheetah` for `steps` with `backend` in a fresh process; returns its
  wall seconds, CPU seconds (with its workers) and the steps/s of its training rows."""
  logdir = tempfile.mkdtemp(prefix='mujoco-train-')
  command = [sys.executable, '-m', 'agents.scripts.train', '--config=cheetah',
             f'--logdir={logdir}', '--timestamp=t', '--quiet', '--set', f'loop.steps={steps}',
             '--set', f'environment.backend={backend}']
  for setting in extra:
    command += ['--set', setting]
  before = resource.getrusage(resource.RUSAGE_CHILDREN)
  start = time.perf_counter()
  try:
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.path.join(logdir, 't-cheetah', 'metrics.jsonl'), encoding='utf-8') as file:
      rows = [json.loads(line) for line in file]
  finally:
    shutil.rmtree(logdir, ignore_errors=True)
  cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
  return {'wall_seconds': round(wall, 1), 'steps_per_wall_second': round(steps / wall),
          'cpu_seconds': round(cpu, 1),
          'train_rows_steps_per_second': [round(row['steps_per_second']) for row in rows
                                          if row['phase'] == 'train' and
                                          row.get('steps_per_second')]}


def train_throughput(steps, rounds, extra):
  """{'runs': {backend: [one `_train_once` per round]}, 'median': ..., 'envpool_vs_gymnasium'}."""
  runs = {backend: [] for backend in BACKENDS}
  for _ in range(rounds):
    for backend in BACKENDS:
      runs[backend].append(_train_once(backend, steps, extra))
  medians = {backend: statistics.median(run['steps_per_wall_second'] for run in results)
             for backend, results in runs.items()}
  cpu = {backend: statistics.median(run['cpu_seconds'] for run in results)
         for backend, results in runs.items()}
  return {'config': 'cheetah', 'loop.steps': steps, 'rounds': rounds, 'settings': extra,
          'cpus': os.cpu_count(), 'load_average_1min': os.getloadavg()[0], 'runs': runs,
          'median_steps_per_wall_second': medians,
          'envpool_vs_gymnasium_wall': round(medians['envpool'] / medians['gymnasium'], 3),
          'envpool_vs_gymnasium_cpu_seconds': round(cpu['envpool'] / cpu['gymnasium'], 3)}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
  parser.add_argument('--rounds', type=int, default=3)
  parser.add_argument('--steps', type=int, default=1000, help='Batch steps per round.')
  parser.add_argument('--envs', type=int, default=8)
  parser.add_argument('--train-steps', type=int, default=0,
                      help='Measure training of --config=cheetah for this many steps instead.')
  parser.add_argument('--train-set', action='append', default=[],
                      help='A further --set of both training runs (repeatable).')
  args = parser.parse_args(argv)
  if args.train_steps:
    print(json.dumps(train_throughput(args.train_steps, args.rounds, args.train_set),
                     indent=1))
    return
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
