"""Throughput of the balloon environment: single env and slabs; prints JSON lines.

    python -m bench.balloon_throughput [--slabs 1,8,64,256] [--steps 10] [--warmup 120]
        [--processes 2] [--process_slabs 256,1024] [--process_steps 30]

For the single `gymnasium.make` environment and for vector slabs of each size it reports
balloon steps per second (wall clock and CPU time of this process) and milliseconds per
slab step (`--split` adds how a slab step's time splits between the simulator's parts,
from a cProfile run of the same steps; the step itself carries no timing code). Before
timing, `--warmup` steps fill the GP's 6-hour
window (120 steps), so the GP runs at its steady-state size.

The whole machine: for each size in `--process_slabs`, a `BatchEnv` over `--processes`
`ExternalProcess` workers, each hosting one `BalloonVectorEnv` slab of that size (one BLAS
thread per worker), stepped in parallel; it reports balloon steps per second of the whole
batch after the same warm-up, by wall clock and by the slowest worker's CPU time (what the
batch does with a core per worker; on a shared machine the wall clock also counts other
processes' use of the cores). `--processes 0` skips these rows.

`--lookahead` adds the slab rows of slabs with the observation option `lookahead` (its
defaults: agents/env/balloon/observation/lookahead.py), beside the plain ones, so their ratio is
measured in one run; `--two_stage` adds rows with its two-stage features too
(`switch_hours: 3`), and `--spread` rows with the spread features on the two-stage ones
(`spread_directions: 8`, the `balloon_spread` config's observation).

`--gp none` swaps the GP for a stand-in that predicts the forecast with zero variance:
a diagnostic of what everything else costs, not a valid environment.

The machine may be shared: the 1-minute load average is printed with each result, and
CPU time (time.process_time) is less sensitive to other processes than wall time.
"""

import argparse
import functools
import json
import os
import time

# One BLAS thread per process: OpenBLAS threads spin-wait and, on a busy machine, make the
# GP's small batched matmuls many times slower; parallelism comes from slab processes.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402

import agents.env  # noqa: E402, F401 - registers the environment
from agents.env.balloon.constants import BALLOON_ENV_ID  # noqa: E402
from agents.env.balloon.env import BalloonVectorEnv  # noqa: E402
from agents.tools.batch_env import BatchEnv  # noqa: E402


class _NoGP:
  """Diagnostic stand-in for WindGP: no measurements, zero error and variance."""

  def __init__(self, num_balloons):
    self.num_balloons = num_balloons

  def reset(self, indices=None):
    del indices

  def observe(self, *args, indices=None):
    del args, indices

  def predict(self, x, y, pressures, t):
    del x, y, t
    zeros = np.zeros(np.shape(pressures))
    return zeros, zeros, zeros

  def observe_and_predict(self, x, y, pressure, t, error_u, error_v, pressures):
    del pressure, error_u, error_v
    return self.predict(x, y, pressures, t)


def _load():
  return round(os.getloadavg()[0], 2)


def bench_single(steps, warmup):
  env = gymnasium.make(BALLOON_ENV_ID)
  env.reset(seed=0)
  rng = np.random.default_rng(0)
  for _ in range(warmup):
    env.step(int(rng.integers(3)))
  wall, cpu = time.perf_counter(), time.process_time()
  for _ in range(steps):
    env.step(int(rng.integers(3)))
  wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
  env.close()
  return {'bench': 'single_env', 'steps_per_s_wall': round(steps / wall, 1),
          'steps_per_s_cpu': round(steps / cpu, 1),
          'ms_per_step_wall': round(wall / steps * 1e3, 3),
          'ms_per_step_cpu': round(cpu / steps * 1e3, 3), 'load_avg_1min': _load()}


# Where a slab step's time goes (--split): the simulator functions that make up each part.
_PARTS = {
    'physics': ('advance_slab', 'advance_one', '__init__ (physics.py)', 'apply'),
    'wind': ('query',),
    'gp': ('observe_and_predict', 'observe', 'predict'),
}


def _split(envs, steps, size, rng):
  """Runs `steps` more steps under cProfile; returns each part's share of the time."""
  import cProfile  # noqa: PLC0415 - only with --split
  import pstats  # noqa: PLC0415
  profile = cProfile.Profile()
  profile.enable()
  for _ in range(steps):
    envs.step(rng.integers(0, 3, size))
  profile.disable()
  stats = pstats.Stats(profile).stats
  total = sum(entry[2] for entry in stats.values())  # total of own (internal) times
  cumulative = {}
  for (filename, _, function), entry in stats.items():
    if '/agents/env/balloon/' not in filename:
      continue
    name = function if function != '__init__' else f'__init__ ({os.path.basename(filename)})'
    cumulative[name] = max(cumulative.get(name, 0.0), entry[3])
  split = {part: sum(cumulative.get(name, 0.0) for name in names)
           for part, names in _PARTS.items()}
  split['other'] = max(total - sum(split.values()), 0.0)
  return {part: round(value / total, 3) for part, value in split.items()}


TWO_STAGE = {'switch_hours': 3.0}  # the lookahead's two-stage features
SPREAD = dict(TWO_STAGE, spread_directions=8)


def bench_slab(size, steps, warmup, gp, split=False, lookahead=None):
  envs = BalloonVectorEnv(size, lookahead=lookahead)
  simulator = envs.simulator
  if gp == 'none':
    simulator._wind.gp = _NoGP(size)  # noqa: SLF001 - diagnostic only
  envs.reset(seed=0)
  rng = np.random.default_rng(0)
  for _ in range(warmup):
    envs.step(rng.integers(0, 3, size))
  wall, cpu = time.perf_counter(), time.process_time()
  for _ in range(steps):
    envs.step(rng.integers(0, 3, size))
  wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
  result = {'bench': 'slab', 'balloons': size, 'gp': gp,
            'lookahead': lookahead if isinstance(lookahead, dict) else bool(lookahead),
            'balloon_steps_per_s_wall': round(size * steps / wall, 1),
            'balloon_steps_per_s_cpu': round(size * steps / cpu, 1),
            'ms_per_slab_step_wall': round(wall / steps * 1e3, 3),
            'ms_per_slab_step_cpu': round(cpu / steps * 1e3, 3), 'load_avg_1min': _load()}
  if split:
    result['split_of_profiled_time'] = _split(envs, steps, size, rng)
  envs.close()
  return result


def _make_slab(size):
  """Worker-side constructor: one BLAS thread, then a slab of `size` balloons."""
  try:
    import threadpoolctl  # noqa: PLC0415 - optional, in the worker only
    threadpoolctl.threadpool_limits(1)
  except ImportError:
    pass  # OPENBLAS_NUM_THREADS=1, set above, is inherited by the workers
  return BalloonVectorEnv(size)


def _cpu_seconds(pid):
  """User + system CPU seconds of process `pid` from /proc (Linux), or None."""
  try:
    with open(f'/proc/{pid}/stat') as stat:
      fields = stat.read().rsplit(')', 1)[1].split()
  except OSError:
    return None
  return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def bench_processes(num_processes, size, steps, warmup):
  """`num_processes` worker processes, one slab of `size` balloons each, as one BatchEnv.

  Reports balloon steps per second of the whole batch by wall clock, and by the workers'
  CPU time (the slowest worker's): what the batch would do with a core per worker, less
  sensitive to other processes on a shared machine.
  """
  batch = BatchEnv.from_slab_constructors(
      [functools.partial(_make_slab, size)] * num_processes)
  try:
    total = len(batch)
    batch.reset(seeds=list(range(total)))
    rng = np.random.default_rng(0)
    for _ in range(warmup):
      batch.step(rng.integers(0, 3, total))
    pids = [worker.pid for worker in batch.workers]
    cpu = [_cpu_seconds(pid) for pid in pids]
    wall = time.perf_counter()
    for _ in range(steps):
      batch.step(rng.integers(0, 3, total))
    wall = time.perf_counter() - wall
    cpu = [None if before is None else _cpu_seconds(pid) - before
           for pid, before in zip(pids, cpu)]
  finally:
    batch.close()
  result = {'bench': 'processes', 'processes': num_processes, 'balloons_per_process': size,
            'balloons': total, 'balloon_steps_per_s_wall': round(total * steps / wall, 1)}
  if None not in cpu and max(cpu) > 0:
    # /proc counts in clock ticks (10 ms): time enough steps for a hundred or more.
    result['balloon_steps_per_s_cpu'] = round(total * steps / max(cpu), 1)
  result.update({'ms_per_batch_step_wall': round(wall / steps * 1e3, 3),
                 'load_avg_1min': _load()})
  return result


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--slabs', default='1,8,64,256')
  parser.add_argument('--steps', type=int, default=10)
  parser.add_argument('--single_steps', type=int, default=50)
  parser.add_argument('--warmup', type=int, default=120)
  parser.add_argument('--gp', default='full', choices=('full', 'none'))
  parser.add_argument('--skip_single', action='store_true')
  parser.add_argument('--lookahead', action='store_true',
                      help='also time slabs with the observation option lookahead')
  parser.add_argument('--two_stage', action='store_true',
                      help='also time slabs with the lookahead\'s two-stage features')
  parser.add_argument('--spread', action='store_true',
                      help='also time two-stage slabs with the spread features')
  parser.add_argument('--split', action='store_true',
                      help='also profile the slab steps and report where the time goes')
  parser.add_argument('--processes', type=int, default=2,
                      help='worker processes of the whole-machine rows (0: skip them)')
  parser.add_argument('--process_slabs', default='256,1024',
                      help='balloons per worker process, one row per size')
  parser.add_argument('--process_steps', type=int, default=30,
                      help='timed steps of the process rows (worker CPU time is read in 10 ms '
                      'ticks)')
  args = parser.parse_args(argv)
  results = []
  if not args.skip_single and args.gp == 'full':
    results.append(bench_single(args.single_steps, args.warmup))
    print(json.dumps(results[-1]), flush=True)
  for size in (int(value) for value in args.slabs.split(',')):
    options = ([None] + [True] * args.lookahead + [TWO_STAGE] * args.two_stage
               + [SPREAD] * args.spread)
    for lookahead in options:
      results.append(bench_slab(size, args.steps, args.warmup, args.gp, args.split, lookahead))
      print(json.dumps(results[-1]), flush=True)
  if args.processes > 0 and args.gp == 'full':
    for size in (int(value) for value in args.process_slabs.split(',')):
      results.append(bench_processes(args.processes, size, args.process_steps, args.warmup))
      print(json.dumps(results[-1]), flush=True)
  print(json.dumps({'cpu_count': os.cpu_count(), 'warmup_steps': args.warmup,
                    'results': results}))


if __name__ == '__main__':
  main()
