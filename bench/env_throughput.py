"""Environment steps per second: BatchEnv over ExternalProcess vs Gymnasium's vector envs.

Runs, side by side in one process and on the same environment:

  sync         gymnasium.vector.SyncVectorEnv, N environments in this process
  async        gymnasium.vector.AsyncVectorEnv, N processes (shared memory on)
  batch_env    BatchEnv.from_constructors, N processes
  batch_env_kK BatchEnv, N / K processes hosting a slab of K environments each
  default      the framework's default path: `builders.make_batch_env` with
               `environment.processes: auto`, which probes the environment and
               steps it in this process or in one worker per core

for CartPole-v1 (crossing processes dominates) and for a synthetic heavy
environment (about half a millisecond of numpy work per step and an 84x84x4
uint8 image observation); optionally for the balloon environment, whose slab
row uses its native `BalloonVectorEnv`. All use the same start method (forkserver). Gym's
vector envs reset finished environments automatically; the BatchEnv loop
resets them explicitly, so every row pays for its resets (for BatchEnv, one more
short message to and from each worker concerned, the observations coming back
through shared memory).

The methods are measured in interleaved rounds; each row reports the median
and the best round. Besides wall-clock throughput, each row reports the CPU
time the parent and its workers spent per environment step (from
/proc/<pid>/stat on Linux), which stays meaningful when other jobs share the
machine and make wall-clock numbers noisy.

    python bench/env_throughput.py [--num-envs 8] [--slab 4] [--steps 1000]
        [--heavy-steps 150] [--rounds 5] [--envs cartpole,heavy]
        [--methods sync,async,batch_env,batch_env_k]

`--methods async,batch_env` measures only the one-environment-per-process pair
(`async` is always measured, as the reference).

Prints one JSON object.

    python bench/env_throughput.py --sweep [--sweep-costs 10,30,100,300,1000,2000]
        [--num-envs 8] [--rounds 3] [--sweep-seconds 0.3]

sweeps instead a synthetic environment that spends a set CPU time per step (a Python
loop whose length is calibrated once, so a loaded machine does not shorten the work), with
`sync` (SyncVectorEnv), `in_process` (BatchEnv in this process) and `processes`
(BatchEnv, one worker per core), and prints one JSON line per cost: where processes
start to pay is the crossover that `environment.processes: auto` uses
(agents/tools/placement.py).
"""

import argparse
import functools
import json
import os
import platform
import statistics
import sys
import time

# BLAS threads in every worker would fight over the cores; the heavy environment uses
# elementwise numpy work anyway.
os.environ.setdefault('OMP_NUM_THREADS', '1')
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from agents.tools.batch_env import BatchEnv  # noqa: E402

CONTEXT = 'forkserver'


class HeavyEnv(gymnasium.Env):
  """Synthetic environment with a fixed amount of numpy work and an image observation."""

  def __init__(self, work_size=30_000, episode_length=500):
    self.observation_space = gymnasium.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    self._work = np.linspace(0.0, 1.0, work_size)
    self._episode_length = episode_length
    self._steps = 0
    self._frame = np.zeros((84, 84, 4), np.uint8)

  def reset(self, *, seed=None, options=None):
    super().reset(seed=seed)
    self._steps = 0
    self._frame[...] = self.np_random.integers(0, 255, self._frame.shape, np.uint8)
    return self._frame.copy(), {}

  def step(self, action):
    self._steps += 1
    # Stand-in for a physics update: a few passes of transcendental math over an array.
    value = float(np.sum(np.sin(self._work * float(action[0]) + self._steps) ** 2))
    self._frame = np.roll(self._frame, 1, axis=0)
    self._frame[0] = int(value) % 255
    truncated = self._steps >= self._episode_length
    return self._frame.copy(), value / len(self._work), False, truncated, {}


class SpinEnv(gymnasium.Env):
  """Synthetic environment that spends about a set CPU time per step in a Python loop.

  `iterations` comes from `spin_iterations`, calibrated once in the parent: spinning on
  the thread's CPU clock instead would serialise the workers (on this VM, reading that
  clock in a loop runs one process at a time).
  """

  def __init__(self, iterations=1000, episode_length=200):
    self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    self.action_space = gymnasium.spaces.Discrete(2)
    self._iterations = int(iterations)
    self._episode_length = episode_length
    self._steps = 0

  def reset(self, *, seed=None, options=None):
    super().reset(seed=seed)
    self._steps = 0
    return np.zeros(4, np.float32), {}

  def step(self, action):
    self._steps += 1
    total = 0
    for index in range(self._iterations):
      total += index
    observ = np.full(4, self._steps / self._episode_length, np.float32)
    return observ, 1.0, False, self._steps >= self._episode_length, {}


def spin_iterations(cost_us, calibration=2_000_000):
  """Loop iterations of `SpinEnv.step` that take about `cost_us` of CPU time here."""
  total, start = 0, time.thread_time()
  for index in range(calibration):
    total += index
  return max(1, round(cost_us * 1e-6 * calibration / (time.thread_time() - start)))


def make_cartpole():
  return gymnasium.make('CartPole-v1')


def make_heavy():
  return HeavyEnv()


def make_balloon():
  import agents.env  # noqa: F401 - registers the balloon environment.
  return gymnasium.make('BalloonLearningEnvironment-v0')


def make_balloon_slab(num_envs):
  import agents.env  # noqa: F401 - registers the balloon environment.
  return gymnasium.make_vec('BalloonLearningEnvironment-v0', num_envs=num_envs)


# name -> (environment id, constructor, native slab constructor taking K or None).
ENVIRONMENTS = {'cartpole': ('CartPole-v1', make_cartpole, None),
                'heavy': ('Heavy-84x84x4-v0', make_heavy, None),
                'balloon': ('BalloonLearningEnvironment-v0', make_balloon, make_balloon_slab)}


def process_cpu_seconds(pids):
  """User plus system CPU seconds of the given processes so far (Linux), else None."""
  total = 0
  try:
    for pid in pids:
      with open(f'/proc/{pid}/stat') as stat:
        fields = stat.read().rsplit(')', 1)[1].split()
      total += int(fields[11]) + int(fields[12])
  except OSError:
    return None
  return total / os.sysconf('SC_CLK_TCK')


class GymRunner:
  """Steps a Gymnasium vector env (autoreset on) with precomputed actions."""

  def __init__(self, env):
    self.env = env
    self.env.reset(seed=0)
    self.pids = [process.pid for process in getattr(env, 'processes', [])]

  def run(self, actions):
    start = time.perf_counter()
    for action in actions:
      self.env.step(action)
    return time.perf_counter() - start

  def close(self):
    self.env.close()


class BatchRunner:
  """Steps a BatchEnv with precomputed actions, resetting finished environments."""

  def __init__(self, batch):
    self.env = batch
    self.env.reset(seeds=list(range(len(batch))))
    self.pids = [worker.pid for worker in batch.workers]

  def run(self, actions):
    start = time.perf_counter()
    for action in actions:
      _, _, terminated, truncated, _ = self.env.step(action)
      done = terminated | truncated
      if done.any():
        self.env.reset(np.flatnonzero(done))
    return time.perf_counter() - start

  def close(self):
    self.env.close()


METHODS = ('sync', 'async', 'batch_env', 'batch_env_k', 'default')


def default_batch(env_id, constructor, num_envs):
  """The batch `builders.make_batch_env` builds by default (`processes: auto`)."""
  from agents.config_fields import defaults
  from agents.configs.sections import EnvironmentConfig
  from agents.training import builders
  if env_id not in gymnasium.registry:
    gymnasium.register(env_id, entry_point=constructor)
  environment = dict(defaults(EnvironmentConfig), id=env_id, num_agents=num_envs)
  return builders.make_batch_env({'environment': environment})


def make_runners(constructor, num_envs, slab, slab_constructor=None, methods=METHODS,
                 env_id=None):
  runners = {}
  if 'default' in methods:
    runners['default'] = BatchRunner(default_batch(env_id, constructor, num_envs))
  if 'sync' in methods:
    runners['sync'] = GymRunner(gymnasium.vector.SyncVectorEnv([constructor] * num_envs))
  runners['async'] = GymRunner(gymnasium.vector.AsyncVectorEnv(
      [constructor] * num_envs, shared_memory=True, context=CONTEXT))
  if 'batch_env' in methods:
    runners['batch_env'] = BatchRunner(BatchEnv.from_constructors(
        constructor, num_envs, context=CONTEXT))
  if 'batch_env_k' in methods and slab > 1:
    if slab_constructor is not None:
      sizes = [min(slab, num_envs - start) for start in range(0, num_envs, slab)]
      batch = BatchEnv.from_slab_constructors(
          [functools.partial(slab_constructor, size) for size in sizes], context=CONTEXT)
    else:
      batch = BatchEnv.from_constructors(
          constructor, num_envs, envs_per_process=slab, context=CONTEXT)
    runners[f'batch_env_k{slab}'] = BatchRunner(batch)
  return runners


def measure(name, num_envs, slab, steps, rounds, methods=METHODS):
  env_id, constructor, slab_constructor = ENVIRONMENTS[name]
  runners = make_runners(constructor, num_envs, slab, slab_constructor, methods, env_id)
  space = runners['async'].env.action_space
  space.seed(0)
  actions = [space.sample() for _ in range(steps)]
  warmup = actions[:max(10, steps // 20)]
  timings = {key: [] for key in runners}
  cpu_seconds = {key: 0.0 for key in runners}
  try:
    for runner in runners.values():
      runner.run(warmup)
    for _ in range(rounds):
      for key, runner in runners.items():
        workers_before = process_cpu_seconds(runner.pids)
        parent_before = time.process_time()
        timings[key].append(runner.run(actions))
        workers_after = process_cpu_seconds(runner.pids)
        cpu_seconds[key] += time.process_time() - parent_before
        if workers_before is not None and workers_after is not None:
          cpu_seconds[key] += workers_after - workers_before
  finally:
    for runner in runners.values():
      runner.close()
  processes = {'sync': 0, 'async': num_envs, 'batch_env': num_envs,
               f'batch_env_k{slab}': -(-num_envs // slab)}
  if 'default' in runners:
    placement = runners['default'].env.placement
    processes['default'] = placement.workers if placement.processes else 0
  rows = {}
  for key, values in timings.items():
    rows[key] = {
        'steps_per_second': round(steps * num_envs / statistics.median(values)),
        'best_steps_per_second': round(steps * num_envs / min(values)),
        'cpu_us_per_step': round(cpu_seconds[key] / (rounds * steps * num_envs) * 1e6, 1),
        'processes': processes[key],
    }
  if 'default' in runners:
    rows['default']['placement'] = runners['default'].env.placement.describe()
  reference = rows['async']
  for row in rows.values():
    if 'sync' in rows:
      row['vs_sync'] = round(row['steps_per_second'] / rows['sync']['steps_per_second'], 2)
    row['vs_async'] = round(row['steps_per_second'] / reference['steps_per_second'], 2)
    row['best_vs_async'] = round(
        row['best_steps_per_second'] / reference['best_steps_per_second'], 2)
    row['cpu_vs_async'] = round(reference['cpu_us_per_step'] / row['cpu_us_per_step'], 2)
  return {'env': env_id, 'num_envs': num_envs, 'batch_steps': steps, 'rows': rows}


def sweep(costs_us, num_envs, rounds, seconds):
  """Prints one JSON line per step cost: sync, in-process and process BatchEnv rows."""
  workers = max(1, min(num_envs, os.cpu_count() or 1))
  per_worker = -(-num_envs // workers)
  iterations_per_us = spin_iterations(1000.0) / 1000.0
  for cost in costs_us:
    constructor = functools.partial(SpinEnv, round(cost * iterations_per_us))
    runners = {
        'sync': GymRunner(gymnasium.vector.SyncVectorEnv([constructor] * num_envs)),
        'in_process': BatchRunner(BatchEnv.from_constructors(
            constructor, num_envs, processes=False)),
        'processes': BatchRunner(BatchEnv.from_constructors(
            constructor, num_envs, envs_per_process=per_worker, context=CONTEXT)),
    }
    # Enough batch steps for about `seconds` a round in this process.
    steps = max(20, int(seconds / (num_envs * (cost + 5) * 1e-6)))
    actions = [np.zeros(num_envs, np.int64)] * steps
    timings = {key: [] for key in runners}
    cpu_seconds = {key: 0.0 for key in runners}
    try:
      for runner in runners.values():
        runner.run(actions[:10])
      for _ in range(rounds):
        for key, runner in runners.items():
          workers_before, parent_before = process_cpu_seconds(runner.pids), time.process_time()
          timings[key].append(runner.run(actions))
          cpu_seconds[key] += (time.process_time() - parent_before
                               + (process_cpu_seconds(runner.pids) or 0.0)
                               - (workers_before or 0.0))
    finally:
      for runner in runners.values():
        runner.close()
    rates = {key: round(steps * num_envs / statistics.median(values))
             for key, values in timings.items()}
    # CPU time per batch step, which a loaded machine distorts less than wall time; the
    # in-process row, over the environments, is what a step really cost.
    cpu_us = {key: round(seconds / (rounds * steps) * 1e6, 1)
              for key, seconds in cpu_seconds.items()}
    print(json.dumps({
        'benchmark': 'env_throughput_sweep', 'step_cost_us': cost, 'num_envs': num_envs,
        'workers': workers, 'batch_steps': steps, 'steps_per_second': rates,
        'processes_vs_in_process': round(rates['processes'] / rates['in_process'], 2),
        'in_process_vs_sync': round(rates['in_process'] / rates['sync'], 2),
        'measured_step_us': round(cpu_us['in_process'] / num_envs, 1),
        'cpu_us_per_batch_step': cpu_us,
        'load_average_1min': round(os.getloadavg()[0], 2)}), flush=True)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--num-envs', type=int, default=8, help='Environments per batch.')
  parser.add_argument('--slab', type=int, default=4, help='Environments per process (K).')
  parser.add_argument('--steps', type=int, default=1000, help='Batch steps per round, CartPole.')
  parser.add_argument('--heavy-steps', type=int, default=150,
                      help='Batch steps per round, heavy environment.')
  parser.add_argument('--balloon-steps', type=int, default=20,
                      help='Batch steps per round, balloon environment.')
  parser.add_argument('--rounds', type=int, default=5, help='Interleaved rounds per method.')
  parser.add_argument('--envs', default='cartpole,heavy',
                      help='Comma-separated: cartpole, heavy, balloon (slow, optional).')
  parser.add_argument('--methods', default=','.join(METHODS),
                      help='Comma-separated rows to measure: ' + ', '.join(METHODS)
                      + ' (async, the reference, always runs).')
  parser.add_argument('--sweep', action='store_true',
                      help='Sweep a synthetic environment over step costs instead (JSON lines).')
  parser.add_argument('--sweep-costs', default='10,30,100,300,1000,2000',
                      help='Comma-separated CPU microseconds per step, for --sweep.')
  parser.add_argument('--sweep-seconds', type=float, default=0.3,
                      help='About this long per round and method, for --sweep.')
  args = parser.parse_args(argv)
  if args.sweep:
    sweep([float(cost) for cost in args.sweep_costs.split(',')], args.num_envs, args.rounds,
          args.sweep_seconds)
    return
  methods = args.methods.split(',')
  unknown = sorted(set(methods) - set(METHODS))
  if unknown:
    parser.error(f'unknown methods {unknown}; choose from {list(METHODS)}')
  results = []
  for name in args.envs.split(','):
    steps = {'heavy': args.heavy_steps, 'balloon': args.balloon_steps}.get(name, args.steps)
    results.append(measure(name, args.num_envs, args.slab, steps, args.rounds, methods))
  report = {
      'benchmark': 'env_throughput',
      'context': CONTEXT,
      'cpu_count': os.cpu_count(),
      'load_average_1min': round(os.getloadavg()[0], 2),
      'python': platform.python_version(),
      'gymnasium': gymnasium.__version__,
      'results': results,
  }
  print(json.dumps(report, indent=1))


if __name__ == '__main__':
  main()
