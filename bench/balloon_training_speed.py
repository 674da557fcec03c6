"""Balloon training throughput of config variants, side by side in one interleaved run. Prints JSON.

    python -m bench.balloon_training_speed [--steps=46080] [--seeds=0,1]
        [--variants=baseline,threads2,bf16_threads2]
        [--checkout=NAME=PATH ...] [--set=KEY=VALUE ...] [--reference=NAME]

Every variant trains the `balloon` config (workers in processes, as in a real
run) for `--steps` environment steps in a fresh subprocess: TensorFlow's
thread pools are process-wide, so each variant gets its own process and the
whole run is measured (environment steps, in-graph policy, updates), not the
update alone. One round per seed interleaves the variants (A, B, C, A, B,
C, ...) so that a change of machine load hits all of them alike; every
variant trains the same seeds, so long runs also compare learning.

Variants (`VARIANTS`) are overrides of this checkout's `balloon` config:
`baseline` sets back the config the balloon-learning work started from (the
flat MLP policy, one TensorFlow thread, float32 products, BLE's reward alone, 32
agents), `wide_bf16_threads2` the flat MLP config before the column policy,
`column_two_layers` the column policy as first configured, and `new` the config as
it stands. `--checkout=NAME=PATH` adds a variant NAME that trains the `balloon` config
of another checkout of the repository (a git worktree of an earlier commit, say) with
that checkout's code, so that two commits pair in one run; `--set=KEY=VALUE` overrides
a config key in every variant (`--set=environment.kwargs.wind=procedural`), and
`--reference` names the variant the ratios are taken to (`baseline` by default).

Reported per variant and round: `steady_steps_per_second`, the steps between
the first and the last logged row divided by their wall time (start-up and
tracing excluded), `cpu_seconds` (user + system time of the run and its
workers, start-up included: on a busy machine the work done, which threads do
not reduce), `final_train_score` (mean training return of the last
three logged rows that have one: balloon episodes end together, every 960
steps), the run's total wall time, the last update's metrics
(entropy, KL) and the machine's load average before the run. The summary
gives the median over rounds and its ratio to `baseline`.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Overrides of the `balloon` config; 'baseline' is the config the balloon-learning
# work started from: the flat MLP policy (256, 256) on normalised observations, one
# TensorFlow thread, float32 products, BLE's reward alone, 32 agents with 240-step
# segments.
_BASELINE = {'network.kind': 'feed_forward', 'network.policy_layers': [256, 256],
             'network.value_layers': [256, 256], 'algorithm.normalize_observ': True,
             'loop.tf_threads': 1, 'network.matmul_dtype': 'float32',
             'environment.kwargs': {}, 'environment.num_agents': 32,
             'algorithm.segment_length': 240}
_COLUMN_TWO_LAYERS = {'network.column_layers': [32, 32], 'network.value_layers': [256, 256],
                      'environment.num_agents': 128, 'algorithm.segment_length': 60}
VARIANTS = {
    'baseline': _BASELINE,
    'threads2': dict(_BASELINE, **{'loop.tf_threads': 2}),
    'bf16': dict(_BASELINE, **{'network.matmul_dtype': 'bfloat16'}),
    'bf16_threads2': dict(_BASELINE, **{'loop.tf_threads': 2,
                                        'network.matmul_dtype': 'bfloat16'}),
    # The same 7,680 samples per update from 128 balloons in two slabs of 64 (a
    # balloon step costs less in a larger slab) with 60-step segments.
    'wide_bf16_threads2': dict(_BASELINE, **{
        'loop.tf_threads': 2, 'network.matmul_dtype': 'bfloat16',
        'environment.num_agents': 128, 'algorithm.segment_length': 60}),
    # The column policy as first configured: two column layers (32, 32), a (256, 256)
    # value function, 128 balloons in slabs of 64 with 60-step segments; the same reading
    # every level (stride 1); then one column layer, and a (128, 128) value function.
    # `new` adds 256 balloons in slabs of 128 with 30-step segments (7,680 samples per
    # update, as in every variant).
    'column_two_layers': _COLUMN_TWO_LAYERS,
    'column_stride1': dict(_COLUMN_TWO_LAYERS, **{'network.column_stride': 1}),
    'column_one_layer': dict(_COLUMN_TWO_LAYERS, **{'network.column_layers': [32]}),
    'column_one_layer_value128': dict(_COLUMN_TWO_LAYERS, **{
        'network.column_layers': [32], 'network.value_layers': [128, 128]}),
    'new': {},
    # The config with the observation option `lookahead` (observation/lookahead.py):
    # its defaults (horizons 3, 6 and 12 h, 30-minute rollout steps), and with 1-hour steps.
    'lookahead': {'environment.kwargs': {'progress_reward': 0.2, 'lookahead': True}},
    'lookahead_hourly': {'environment.kwargs': {'progress_reward': 0.2,
                                                'lookahead': {'step_s': 3600.0}}},
}


def _command(overrides, steps, logdir, seed):
  # One row per 15,360 steps: a call of the `balloon` config (256 balloons x 60 steps) is
  # not cut short by a row.
  sets = dict(overrides, **{'loop.steps': steps, 'loop.log_every': 15_360,
                            'loop.checkpoint_every': steps, 'seed': seed})
  command = [sys.executable, '-m', 'agents.scripts.train', '--config=balloon',
             f'--logdir={logdir}', '--timestamp=bench', '--quiet']
  for key, value in sets.items():
    command.append(f'--set={key}={value}')
  return command


def run_variant(name, steps, seed, repo=ROOT, overrides=None):
  """Trains one variant in a subprocess (with the code of checkout `repo`); returns its row."""
  overrides = VARIANTS[name] if overrides is None else overrides
  logdir = tempfile.mkdtemp(prefix=f'balloon-speed-{name}-')
  env = dict(os.environ, PYTHONPATH=repo, OPENBLAS_NUM_THREADS='1', TF_CPP_MIN_LOG_LEVEL='2')
  load = os.getloadavg()[0]
  cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
  start = time.time()
  process = subprocess.run(_command(overrides, steps, logdir, seed), cwd=repo, env=env,
                           capture_output=True, text=True, check=False)
  wall = time.time() - start
  cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
  # CPU time of the run and its workers (start-up included): the work done, which a busy
  # machine inflates less than the wall time.
  cpu = ((cpu_after.ru_utime + cpu_after.ru_stime)
         - (cpu_before.ru_utime + cpu_before.ru_stime))
  if process.returncode:
    raise RuntimeError(f'Variant {name!r} failed ({process.returncode}):\n{process.stderr[-3000:]}')
  with open(os.path.join(logdir, 'bench-balloon', 'metrics.jsonl'), encoding='utf-8') as file:
    rows = [json.loads(line) for line in file]
  train = [row for row in rows if row['phase'] == 'train']
  updates = [row for row in rows if row['phase'] == 'update']
  steady = None
  if len(train) >= 2:
    steady = ((train[-1]['step'] - train[0]['step'])
              / (train[-1]['wall_time'] - train[0]['wall_time']))
  last = updates[-1] if updates else {}
  scores = [row['mean_score'] for row in train if row['mean_score'] is not None]
  return {'variant': name, 'seed': seed, 'overrides': overrides, 'repo': repo,
          'steps': train[-1]['step'],
          # Learning check: mean training return of the last three logged intervals.
          'final_train_score': float(np.mean(scores[-3:])) if scores else None,
          'steady_steps_per_second': round(steady, 1) if steady else None,
          'wall_seconds': round(wall, 1), 'cpu_seconds': round(cpu, 1),
          'load_before': round(load, 2),
          'load_after': round(os.getloadavg()[0], 2),
          'last_update': {key: last.get(key) for key in ('entropy', 'kl', 'value_loss')},
          # For `python -m bench.baselines --run_dir RUN_DIR` (TWR50 of the trained policy).
          'run_dir': os.path.join(logdir, 'bench-balloon')}


def _split(text, flag, parser):
  key, sep, value = text.partition('=')
  if not sep or not key or not value:
    parser.error(f'{flag} {text!r}: expected NAME=VALUE.')
  return key, value


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--steps', type=int, default=46_080)
  parser.add_argument('--seeds', default='0,1',
                      help='One interleaved round per seed (every variant trains each seed).')
  parser.add_argument('--variants', default='baseline,threads2,bf16_threads2',
                      help='Variants of this checkout (VARIANTS); empty for none.')
  parser.add_argument('--checkout', action='append', default=[], metavar='NAME=PATH',
                      help="A variant NAME: the `balloon` config of the checkout at PATH, "
                      'with its code.')
  parser.add_argument('--set', dest='sets', action='append', default=[], metavar='KEY=VALUE',
                      help='A config override for every variant.')
  parser.add_argument('--reference', default='baseline',
                      help='The variant the ratios are taken to.')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  common = dict(_split(text, '--set', parser) for text in args.sets)
  plans = {}  # name -> (repo, overrides)
  for name in filter(None, args.variants.split(',')):
    if name not in VARIANTS:
      parser.error(f'Unknown variant {name!r}; expected one of {sorted(VARIANTS)}.')
    plans[name] = (ROOT, dict(VARIANTS[name], **common))
  for text in args.checkout:
    name, path = _split(text, '--checkout', parser)
    if not os.path.isdir(os.path.join(path, 'agents')):
      parser.error(f'--checkout {text!r}: {path} holds no agents/ package.')
    plans[name] = (os.path.abspath(path), dict(common))
  names = list(plans)
  runs = []
  for seed in (int(text) for text in args.seeds.split(',')):
    for name in names:
      runs.append(run_variant(name, args.steps, seed, *plans[name]))
      print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
  summary = {}
  for name in names:
    speeds = [run['steady_steps_per_second'] for run in runs
              if run['variant'] == name and run['steady_steps_per_second']]
    scores = [run['final_train_score'] for run in runs
              if run['variant'] == name and run['final_train_score'] is not None]
    cpu = [run['cpu_seconds'] for run in runs if run['variant'] == name]
    walls = [run['wall_seconds'] for run in runs if run['variant'] == name]
    summary[name] = {'median_wall_seconds': float(np.median(walls)),
                     'median_steady_steps_per_second': float(np.median(speeds)) if speeds
                     else None, 'rounds': speeds,
                     'median_cpu_seconds': float(np.median(cpu)),
                     'mean_final_train_score': float(np.mean(scores)) if scores else None}
  base = summary.get(args.reference, {}).get('median_steady_steps_per_second')
  for name in names:
    speed = summary[name]['median_steady_steps_per_second']
    summary[name][f'ratio_to_{args.reference}'] = round(speed / base, 2) if base and speed else None
    # Paired round by round: the reference's wall time over this variant's (start-up
    # included), and its steady rate's ratio.
    pairs = [(run, other) for run in runs for other in runs
             if run['variant'] == name and other['variant'] == args.reference
             and run['seed'] == other['seed']]
    if pairs and name != args.reference:
      summary[name]['paired_wall_speedups'] = [
          round(other['wall_seconds'] / run['wall_seconds'], 3) for run, other in pairs]
      summary[name]['paired_steady_speedups'] = [
          round(run['steady_steps_per_second'] / other['steady_steps_per_second'], 3)
          for run, other in pairs
          if run['steady_steps_per_second'] and other['steady_steps_per_second']]
  print(json.dumps({'steps': args.steps, 'cpus': os.cpu_count(), 'summary': summary,
                    'runs': runs}, indent=2))
  return 0


if __name__ == '__main__':
  sys.exit(main())
