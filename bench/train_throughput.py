"""Training throughput: BatchPPO (this package) vs Stable-Baselines3 PPO, in one run. Prints JSON.

    python -m bench.train_throughput [--config=pendulum] [--steps=100000] [--num_agents=8]
        [--frameworks=agents,sb3] [--torch_threads=0] [--set key=value ...]

Both train on the same environment with the same number of environments (in
this process: a `BatchEnv` for us, SB3's `DummyVecEnv`), the same network
sizes (two tanh layers of 64 for policy and value, separate), the same rollout
length per update (`segment_length` = SB3's `n_steps`), the same epochs and
mini-batch size, learning rate, gamma, GAE lambda, gradient clip, and
observation and reward normalisation (SB3's `VecNormalize`). SB3 runs PyTorch
on the CPU.

Reported per framework:

- `frames_per_second`: environment frames of full training (updates
  included) divided by the wall time of the training call. Neither side
  saves anything along the way: SB3's `learn` writes nothing, so ours runs
  without the policy export and with a single checkpoint at the end. Ours
  still includes building the environments and tracing the graph;
- `steady_frames_per_second` (ours): from the logged intervals after the
  first, i.e. without start-up and tracing;
- `cpu_seconds`: CPU time of this process during the training call (both sides
  run one thread and their environments in this process); `cpu_speedup` compares
  frames per CPU second, which a machine busy with other work distorts less than
  the wall time;
- `final_score`: mean training return of the last logged interval (ours) or
  of SB3's last 100 episodes.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import numpy as np


def run_agents(config):
  # Imported before the clock starts, as torch is for SB3: imports are not training.
  import tensorflow  # noqa: F401

  from agents.tools import in_graph_batch_env  # noqa: F401
  from agents.training import trainer
  run_dir = tempfile.mkdtemp(prefix='throughput-')
  start, cpu = time.time(), time.process_time()
  # SB3's `learn` saves nothing; neither does this run, beyond the Loop's final checkpoint.
  result = trainer.train(config, run_dir, quiet=True, export_policy=False)
  wall, cpu = time.time() - start, time.process_time() - cpu
  with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
    rows = [json.loads(line) for line in file]
  train_rows = [row for row in rows if row['phase'] == 'train']
  steady = [row for row in train_rows[1:] if row['steps_per_second']]
  steady_fps = None
  if steady:
    steps = train_rows[-1]['step'] - train_rows[0]['step']
    seconds = train_rows[-1]['wall_time'] - train_rows[0]['wall_time']
    steady_fps = steps / seconds if seconds > 0 else None
  scores = [row['mean_score'] for row in train_rows if row['mean_score'] is not None]
  return {'framework': 'agents (BatchPPO, TensorFlow)', 'steps': result['step'],
          'wall_seconds': round(wall, 2), 'frames_per_second': round(result['step'] / wall, 1),
          'cpu_seconds': round(cpu, 2),
          'steady_frames_per_second': round(steady_fps, 1) if steady_fps else None,
          'final_score': scores[-1] if scores else None,
          'policy_objective': config['algorithm']['policy_objective']}


def run_sb3(config, torch_threads):
  import gymnasium
  import stable_baselines3
  import torch
  from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor, VecNormalize
  if torch_threads:
    torch.set_num_threads(torch_threads)
  torch.manual_seed(config['seed'])
  env = DummyVecEnv([lambda: gymnasium.make(config['id'])
                     for _ in range(config['num_agents'])])
  env.seed(config['seed'])
  env = VecNormalize(VecMonitor(env), norm_obs=config['normalize_observ'],
                     norm_reward=config['normalize_reward'], clip_obs=config['observ_clip'],
                     clip_reward=config['reward_clip'], gamma=config['discount'])
  batch = config['num_agents'] * config['segment_length'] // config['num_minibatches']
  model = stable_baselines3.PPO(
      'MlpPolicy', env, n_steps=config['segment_length'], batch_size=batch,
      n_epochs=config['update_epochs'], learning_rate=config['learning_rate'],
      gamma=config['discount'], gae_lambda=config['gae_lambda'],
      clip_range=config['clip_ratio'], ent_coef=config['entropy_coef'],
      vf_coef=config['value_coef'], max_grad_norm=config['max_grad_norm'],
      policy_kwargs=dict(net_arch=dict(pi=list(config['policy_layers']),
                                       vf=list(config['value_layers'])),
                         activation_fn=torch.nn.Tanh),
      device='cpu', seed=config['seed'], verbose=0)
  start, cpu = time.time(), time.process_time()
  model.learn(total_timesteps=config['steps'])
  wall, cpu = time.time() - start, time.process_time() - cpu
  steps = int(model.num_timesteps)
  scores = [info['r'] for info in model.ep_info_buffer]
  env.close()
  return {'framework': f'stable-baselines3 {stable_baselines3.__version__} '
                       f'(PyTorch {torch.__version__}, CPU)',
          'steps': steps, 'wall_seconds': round(wall, 2), 'cpu_seconds': round(cpu, 2),
          'frames_per_second': round(steps / wall, 1),
          'final_score': float(np.mean(scores)) if scores else None,
          'torch_threads': torch.get_num_threads()}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--config', default='pendulum')
  parser.add_argument('--steps', type=int, default=100_000)
  parser.add_argument('--num_agents', type=int, default=8)
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--frameworks', default='agents,sb3')
  parser.add_argument('--torch_threads', type=int, default=0,
                      help='torch.set_num_threads; 0 keeps the default.')
  parser.add_argument('--set', dest='overrides', action='append', default=[])
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  from agents import configs
  overrides = dict(configs.parse_override(text) for text in args.overrides)
  overrides.update({'loop.steps': args.steps, 'environment.num_agents': args.num_agents,
                    'seed': args.seed, 'environment.processes': False,
                    'loop.checkpoint_every': args.steps})
  config = configs.resolve(args.config, overrides)
  # SB3's side and the report read the keys by their leaf names (all distinct for PPO).
  leaves = {key.rsplit('.', 1)[-1]: value for key, value in configs.flatten(config).items()}
  results = {}
  for framework in args.frameworks.split(','):
    if framework == 'agents':
      results[framework] = run_agents(config)
    elif framework == 'sb3':
      results[framework] = run_sb3(leaves, args.torch_threads)
    else:
      parser.error(f'Unknown framework {framework!r}; expected agents or sb3.')
    print(json.dumps(results[framework]), file=sys.stderr, flush=True)
  report = {
      'env': leaves['id'], 'steps': leaves['steps'], 'num_envs': leaves['num_agents'],
      'rollout_per_env': leaves['segment_length'], 'epochs': leaves['update_epochs'],
      'minibatch_size': leaves['num_agents'] * leaves['segment_length']
      // leaves['num_minibatches'],
      'network': {'policy': leaves['policy_layers'], 'value': leaves['value_layers'],
                  'activation': leaves['activation']},
      'machine': {'cpus': os.cpu_count(), 'python': platform.python_version()},
      'results': results}
  if 'agents' in results and 'sb3' in results:
    report['speedup'] = round(results['agents']['frames_per_second']
                              / results['sb3']['frames_per_second'], 2)
    # Frames per CPU second: what a machine shared with other work does not distort as much.
    report['cpu_speedup'] = round(
        (results['agents']['steps'] / results['agents']['cpu_seconds'])
        / (results['sb3']['steps'] / results['sb3']['cpu_seconds']), 2)
  print(json.dumps(report, indent=2))
  return 0


if __name__ == '__main__':
  sys.exit(main())
