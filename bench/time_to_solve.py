"""Time to solve, as a user sees it: our named configs against SB3 PPO with rl-zoo's
hyperparameters, interleaved seed by seed. Prints JSON.

    python -m bench.time_to_solve [--tasks=cartpole,pendulum] [--seeds=0,1,2]
        [--frameworks=agents,sb3] [--timeout=600] [--set KEY=VALUE ...]

Time to solve is the wall time from the start of the training command (a fresh Python
process: imports, start-up and tracing included) until the mean return of the last 10
finished training episodes first reaches the task's target: 475 on CartPole-v1, -200 on
Pendulum-v1. Both sides train on `EpisodeClock/<id>` (`bench.episode_clock`), the
environment itself with a wrapper that logs each episode's end time and return, so one
clock times both. The run is stopped once solved.

- `agents`: `python -m agents.scripts.train --config=<task>` as a user types it (its
  named config, defaults included: environments, checkpoints, export), on the clocked
  environment id; `--set` passes overrides of our config (a variant to try);
- `sb3`: Stable-Baselines3 PPO with rl-baselines3-zoo's hyperparameters for the task
  (`ZOO`), `make_vec_env` with its Monitor, PyTorch on the CPU with one thread.

Both get the same step budget (`BUDGET`, the larger of the zoo's and our config's); a
run that does not solve within it (or within `--timeout` seconds) counts as unsolved,
and the median treats it as slower than every solved run. The summary gives per task
and framework the median over seeds and the ratio of the medians (agents / sb3).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = {'cartpole': 475.0, 'pendulum': -200.0}
IDS = {'cartpole': 'CartPole-v1', 'pendulum': 'Pendulum-v1'}
BUDGET = {'cartpole': 100_000, 'pendulum': 200_000}
WINDOW = 10

# rl-baselines3-zoo's hyperparams/ppo.yml ("Tuned") for the two tasks; `lin_` schedules
# decay linearly to zero over the zoo's n_timesteps.
ZOO = {
    'cartpole': dict(n_envs=8, n_timesteps=100_000, n_steps=32, batch_size=256,
                     gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
                     learning_rate='lin_0.001', clip_range='lin_0.2'),
    'pendulum': dict(n_envs=4, n_timesteps=100_000, n_steps=1024, gae_lambda=0.95,
                     gamma=0.9, n_epochs=10, ent_coef=0.0, learning_rate=1e-3,
                     clip_range=0.2, use_sde=True, sde_sample_freq=4),
}


def _linear_schedule(start, budget_ratio):
  """The zoo's `lin_<start>`: from `start` to zero over the zoo's budget (SB3 passes the
  progress remaining, 1 -> 0 over ours, which is `budget_ratio` times the zoo's)."""
  return lambda remaining: start * max(0.0, 1.0 - (1.0 - remaining) * budget_ratio)


def _sb3_child(task, seed, steps):
  """Trains SB3 PPO with the zoo's hyperparameters (runs in the child process)."""
  import torch
  from stable_baselines3 import PPO
  from stable_baselines3.common.env_util import make_vec_env

  import bench.episode_clock  # noqa: F401  (registers the clocked ids)
  torch.set_num_threads(1)
  hyperparameters = dict(ZOO[task])
  n_envs = hyperparameters.pop('n_envs')
  zoo_steps = hyperparameters.pop('n_timesteps')
  for key in ('learning_rate', 'clip_range'):
    value = hyperparameters[key]
    if isinstance(value, str) and value.startswith('lin_'):
      hyperparameters[key] = _linear_schedule(float(value[4:]), steps / zoo_steps)
  env = make_vec_env(f'EpisodeClock/{IDS[task]}', n_envs=n_envs, seed=seed)
  model = PPO('MlpPolicy', env, seed=seed, device='cpu', verbose=0, **hyperparameters)
  model.learn(total_timesteps=steps)
  return 0


def _command(framework, task, seed, logdir, overrides=()):
  if framework == 'agents':
    return [sys.executable, '-m', 'agents.scripts.train', f'--config={task}',
            f'--logdir={logdir}', '--quiet', f'--set=seed={seed}',
            f'--set=environment.id=EpisodeClock/{IDS[task]}',
            '--set=environment.imports=[bench.episode_clock]',
            f'--set=loop.steps={BUDGET[task]}'] + [f'--set={text}' for text in overrides]
  return [sys.executable, '-m', 'bench.time_to_solve', f'--child={task}', f'--seeds={seed}']


def _solved_at(path, target):
  """(time of the first episode at which the mean of the last WINDOW reached target, episodes)."""
  try:
    with open(path, encoding='utf-8') as file:
      lines = [line.split() for line in file if line.endswith('\n')]
  except FileNotFoundError:
    return None, 0
  returns = np.array([float(line[1]) for line in lines])
  for end in range(WINDOW, len(returns) + 1):
    if returns[end - WINDOW:end].mean() >= target:
      return float(lines[end - 1][0]), end
  return None, len(returns)


def run_one(framework, task, seed, timeout, overrides=()):
  """Runs one training command until solved, finished or timed out; returns its row
  (`overrides`: KEY=VALUE settings of our config)."""
  workdir = tempfile.mkdtemp(prefix=f'solve-{framework}-{task}-')
  log = os.path.join(workdir, 'episodes.txt')
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL='2', OPENBLAS_NUM_THREADS='1')
  env['EPISODE_CLOCK_LOG'] = log
  load = os.getloadavg()[0]
  start = time.time()
  process = subprocess.Popen(_command(framework, task, seed, workdir, overrides), cwd=ROOT,
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True)
  solved = None
  while True:
    finished = process.poll() is not None
    solved, episodes = _solved_at(log, TARGETS[task])
    if solved is not None or finished or time.time() - start > timeout:
      break
    time.sleep(0.25)
  if process.poll() is None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
      process.wait(30)
    except subprocess.TimeoutExpired:
      os.killpg(process.pid, signal.SIGKILL)
      process.wait()
  error = process.stderr.read().decode(errors='replace')[-2000:]
  if solved is None and process.returncode not in (0, None, -signal.SIGTERM):
    raise RuntimeError(f'{framework} {task} seed {seed} failed ({process.returncode}):\n{error}')
  return {'framework': framework, 'task': task, 'seed': seed,
          'seconds_to_solve': round(solved - start, 2) if solved is not None else None,
          'episodes': episodes, 'wall_seconds': round(time.time() - start, 1),
          'load_before': round(load, 2)}


def _median(times):
  """Median with unsolved runs (None) ranked slower than every solved one; None if it is one."""
  ranked = sorted(times, key=lambda value: (value is None, value or 0.0))
  middle = len(ranked) // 2
  if len(ranked) % 2:
    return ranked[middle]
  low, high = ranked[middle - 1], ranked[middle]
  return None if low is None or high is None else (low + high) / 2


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--tasks', default='cartpole,pendulum')
  parser.add_argument('--seeds', default='0,1,2')
  parser.add_argument('--frameworks', default='agents,sb3')
  parser.add_argument('--timeout', type=float, default=600.0,
                      help='Seconds after which a run counts as unsolved.')
  parser.add_argument('--set', dest='overrides', action='append', default=[],
                      metavar='KEY=VALUE', help='An override of our config, e.g. '
                      'algorithm.segment_length=128 (ours only).')
  parser.add_argument('--child', help=argparse.SUPPRESS)
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  seeds = [int(text) for text in args.seeds.split(',')]
  if args.child:
    return _sb3_child(args.child, seeds[0], BUDGET[args.child])
  tasks = args.tasks.split(',')
  frameworks = args.frameworks.split(',')
  for name in tasks:
    if name not in TARGETS:
      parser.error(f'Unknown task {name!r}; expected one of {sorted(TARGETS)}.')
  runs = []
  for task in tasks:
    for seed in seeds:
      # Interleaved: a change of machine load hits both frameworks alike.
      for framework in frameworks:
        runs.append(run_one(framework, task, seed, args.timeout, args.overrides))
        print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
  summary = {}
  for task in tasks:
    summary[task] = {'target': TARGETS[task], 'budget_steps': BUDGET[task]}
    for framework in frameworks:
      times = [run['seconds_to_solve'] for run in runs
               if run['task'] == task and run['framework'] == framework]
      summary[task][framework] = {'median_seconds': _median(times), 'seconds': times,
                                  'solved': sum(value is not None for value in times)}
    if set(frameworks) >= {'agents', 'sb3'}:
      ours, theirs = summary[task]['agents']['median_seconds'], summary[task]['sb3'][
          'median_seconds']
      summary[task]['ratio'] = round(ours / theirs, 3) if ours and theirs else None
  print(json.dumps({'seeds': seeds, 'overrides': args.overrides, 'cpus': os.cpu_count(),
                    'window': WINDOW, 'summary': summary, 'runs': runs}, indent=2))
  return 0


if __name__ == '__main__':
  sys.exit(main())
