"""MuJoCo learning against SB3 PPO with rl-zoo's hyperparameters, side by side. Prints JSON.

    python -m bench.mujoco_learning sb3 --task=cheetah --steps=1000000 --seed=0
    python -m bench.mujoco_learning summary --runs=LOGDIR [--sb3=FILE ...]

Our side is BatchPPO's named configs run by the train command, one run per seed:

    python -m agents.scripts.train --config=cheetah --logdir=LOGDIR --timestamp=s0 --seed=0 \\
        --set loop.steps=1000000 --set loop.eval_every=1000000

(`loop.eval_every` = `loop.steps` moves BatchPPO's evaluation phase, 30 episodes acting
with the policy's mean, to the end of training instead of after every update.)

`sb3` trains Stable-Baselines3's PPO on the same Gymnasium v5 task with the
hyperparameters rl-baselines3-zoo publishes for the task's v3 version
(hyperparams/ppo.yml: `normalize: true`, one environment; Ant-v3 has SB3's defaults),
one torch thread, and prints one JSON line: wall and CPU seconds of `learn`, the mean
return of its last (up to) 100 training episodes, and of 10 episodes of the
deterministic policy with the normalisation statistics frozen (rl-zoo's benchmark).

`summary` reads the runs under LOGDIR (`<timestamp>-<config>/metrics.jsonl`) and the
JSON lines of `sb3`, and prints per task: the evaluation phase's mean return (mean
action) and the last logged training interval's (sampled actions, the episodes that
ended in its 10,240 steps), each as the mean over seeds with a 95% Student-t interval
(`low`, `high`; none for one seed), the seeds' evaluation returns, the training steps and
wall time (start to the last row) of each run, our training return at each SB3 run's
step count (`train_return_at_<steps>`: the last interval logged by then), and the
published PPO returns of CleanRL and rl-zoo (`PUBLISHED`).
"""

import argparse
import datetime
import glob
import json
import math
import os
import sys
import time

import numpy as np

TASKS = {'cheetah': 'HalfCheetah-v5', 'hopper': 'Hopper-v5', 'walker': 'Walker2d-v5',
         'ant': 'Ant-v5'}

# rl-baselines3-zoo, hyperparams/ppo.yml (the -v3 entries), for SB3's PPO.
_ZOO_NETWORK = {'log_std_init': -2, 'ortho_init': False, 'activation_fn': 'relu',
                'net_arch': {'pi': [256, 256], 'vf': [256, 256]}}
ZOO_HYPERPARAMETERS = {
    'cheetah': dict(batch_size=64, n_steps=512, gamma=0.98, learning_rate=2.0633e-05,
                    ent_coef=0.000401762, clip_range=0.1, n_epochs=20, gae_lambda=0.92,
                    max_grad_norm=0.8, vf_coef=0.58096, policy_kwargs=_ZOO_NETWORK),
    'hopper': dict(batch_size=32, n_steps=512, gamma=0.999, learning_rate=9.80828e-05,
                   ent_coef=0.00229519, clip_range=0.2, n_epochs=5, gae_lambda=0.99,
                   max_grad_norm=0.7, vf_coef=0.835671, policy_kwargs=_ZOO_NETWORK),
    'walker': dict(batch_size=32, n_steps=512, gamma=0.99, learning_rate=5.05041e-05,
                   ent_coef=0.000585045, clip_range=0.1, n_epochs=20, gae_lambda=0.95,
                   max_grad_norm=1, vf_coef=0.871923),
    'ant': {},  # Ant-v3: `normalize: true` and SB3's PPO defaults.
}

# Published PPO returns at 1M steps, (mean, spread) as each source states it.
PUBLISHED = {
    'cleanrl': {
        'source': 'CleanRL ppo_continuous_action, MuJoCo v4 (mean ± std over seeds of the '
                  'final episodic return)',
        'url': 'https://docs.cleanrl.dev/rl-algorithms/ppo/#ppo_continuous_actionpy',
        'cheetah': (1442.64, 46.03), 'walker': (2287.95, 571.78), 'hopper': (2382.86, 271.74),
        'ant': None},
    'rl_zoo': {
        'source': 'rl-baselines3-zoo benchmark.md, PPO on v3 tasks (one trained agent, '
                  'mean ± std over evaluation episodes, deterministic policy)',
        'url': 'https://github.com/DLR-RM/rl-baselines3-zoo/blob/master/benchmark.md',
        'cheetah': (5819.099, 663.530), 'hopper': (2410.435, 10.026),
        'walker': (3478.798, 821.708), 'ant': (1327.158, 451.577)},
}


def interval(values):
  """The mean of the values and their 95% Student-t interval (`low`, `high`: None for
  fewer than two values); None for no values."""
  values = [value for value in values if value is not None]
  if not values:
    return None
  mean = float(np.mean(values))
  if len(values) < 2:
    return {'mean': mean, 'low': None, 'high': None}
  from scipy import stats
  half = stats.t.ppf(0.975, len(values) - 1) * np.std(values, ddof=1) / math.sqrt(len(values))
  return {'mean': mean, 'low': float(mean - half), 'high': float(mean + half)}


def run_sb3(task, steps, seed):
  """Trains SB3's PPO with rl-zoo's hyperparameters; the JSON-ready result."""
  import stable_baselines3
  import torch
  from stable_baselines3.common.env_util import make_vec_env
  from stable_baselines3.common.evaluation import evaluate_policy
  from stable_baselines3.common.vec_env import VecNormalize
  torch.set_num_threads(1)
  hyperparameters = json.loads(json.dumps(ZOO_HYPERPARAMETERS[task]))
  policy_kwargs = hyperparameters.get('policy_kwargs')
  if policy_kwargs:
    policy_kwargs['activation_fn'] = {'relu': torch.nn.ReLU}[policy_kwargs['activation_fn']]
  env = VecNormalize(make_vec_env(TASKS[task], n_envs=1, seed=seed),
                     gamma=hyperparameters.get('gamma', 0.99))
  model = stable_baselines3.PPO('MlpPolicy', env, seed=seed, device='cpu', verbose=0,
                                **hyperparameters)
  start, cpu = time.time(), time.process_time()
  model.learn(total_timesteps=steps)
  wall, cpu = time.time() - start, time.process_time() - cpu
  train_returns = [info['r'] for info in model.ep_info_buffer]
  env.training, env.norm_reward = False, False
  eval_mean, eval_std = evaluate_policy(model, env, n_eval_episodes=10, deterministic=True)
  return {'framework': f'stable-baselines3 {stable_baselines3.__version__}', 'task': task,
          'env': TASKS[task], 'seed': seed, 'steps': int(model.num_timesteps),
          'wall_seconds': round(wall, 1), 'cpu_seconds': round(cpu, 1),
          'train_return': float(np.mean(train_returns)) if train_returns else None,
          'eval_return': float(eval_mean), 'eval_std': float(eval_std)}


def read_run(run_dir):
  """One of our runs: its config, seed, final returns and wall time, from its files."""
  from agents import configs
  config = configs.load_yaml(os.path.join(run_dir, 'config.yaml'))
  with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
    rows = [json.loads(line) for line in file]
  scored = [row for row in rows if row.get('mean_score') is not None]
  train = [row for row in scored if row['phase'] == 'train']
  evals = [row for row in scored if row['phase'] == 'eval']
  with open(os.path.join(run_dir, 'run.yaml'), encoding='utf-8') as file:
    import yaml
    started = yaml.safe_load(file)['sessions'][0]['started']
  start = datetime.datetime.fromisoformat(str(started)).timestamp()
  timed = [row['wall_time'] for row in rows if row.get('wall_time')]
  return {'env': config['environment']['id'], 'seed': config['seed'],
          'train_steps': config['loop']['steps'],
          'train_curve': [(row['step'], row['mean_score']) for row in train],
          'train_return': train[-1]['mean_score'] if train else None,
          'eval_return': evals[-1]['mean_score'] if evals else None,
          'wall_seconds': round(timed[-1] - start, 1) if timed else None}


def _last_before(curve, step):
  """The last logged training return at or before `step` of a run's (step, return) rows."""
  scores = [score for at, score in curve if at <= step]
  return scores[-1] if scores else None


def summary(runs_dir, sb3_files):
  """Per task: our runs' intervals, SB3's runs and the published returns."""
  by_env = {env: task for task, env in TASKS.items()}
  ours = {}
  for metrics in sorted(glob.glob(os.path.join(runs_dir, '*', 'metrics.jsonl'))):
    run = read_run(os.path.dirname(metrics))
    if run['env'] in by_env:
      ours.setdefault(by_env[run['env']], []).append(run)
  sb3 = {}
  for path in sb3_files:
    with open(path, encoding='utf-8') as file:
      for line in file:
        if line.startswith('{'):
          result = json.loads(line)
          sb3.setdefault(result['task'], []).append(result)
  report = {}
  for task in TASKS:
    runs = ours.get(task, [])
    entry = {'env': TASKS[task], 'agents': {
        'seeds': [run['seed'] for run in runs], 'train_steps': [run['train_steps'] for run in runs],
        'eval_returns': [run['eval_return'] for run in runs],
        'eval_return': interval([run['eval_return'] for run in runs]),
        'train_return': interval([run['train_return'] for run in runs]),
        'wall_seconds': [run['wall_seconds'] for run in runs]}}
    entry['sb3_rl_zoo'] = sb3.get(task, [])
    for result in entry['sb3_rl_zoo']:
      # Ours at SB3's step count: the last logged training interval by then, over seeds.
      entry['agents'][f"train_return_at_{result['steps']}"] = interval(
          [_last_before(run['train_curve'], result['steps']) for run in runs])
    entry['published'] = {name: table[task] for name, table in PUBLISHED.items()}
    report[task] = entry
  report['published_sources'] = {name: {'source': table['source'], 'url': table['url']}
                                 for name, table in PUBLISHED.items()}
  return report


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  commands = parser.add_subparsers(dest='command', required=True)
  sb3 = commands.add_parser('sb3', help="SB3 PPO with rl-zoo's hyperparameters, one run.")
  sb3.add_argument('--task', choices=sorted(TASKS), required=True)
  sb3.add_argument('--steps', type=int, default=1_000_000)
  sb3.add_argument('--seed', type=int, default=0)
  report = commands.add_parser('summary', help='Our runs and SB3 results, per task.')
  report.add_argument('--runs', required=True, help='The --logdir of our training runs.')
  report.add_argument('--sb3', action='append', default=[],
                      help='A file of JSON lines printed by the sb3 command.')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  if args.command == 'sb3':
    print(json.dumps(run_sb3(args.task, args.steps, args.seed)), flush=True)
  else:
    print(json.dumps(summary(args.runs, args.sb3), indent=1))


if __name__ == '__main__':
  main()
