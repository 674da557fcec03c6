"""Short QR-DQN fits on the balloon, one lever at a time, each flown on a suite. Prints JSON.

    python -m bench.qrdqn_balloon_levers --levers=flat256,flat64,column,column_rscale \
        [--steps=409600] [--suite=small_eval] [--seed=0] [--output_dir=DIR]

Every lever is `balloon_qrdqn` with overrides (`LEVERS`): `flat256` is the config as it
was before 2026-11-28 (256 balloons, a flat (256, 256) MLP, 64,000 transitions, 4
gradient steps per batch step); `flat64` that with 64 balloons, 100,000 transitions and
one gradient step per batch step (the same 4 samples per transition); `column` that with
the column quantile network (today's `balloon_qrdqn`); `column_rscale` that with rewards
scaled by 1 - gamma. Each fit runs `agents.scripts.train` (nice 10, one at a time), then
`agents.scripts.evaluate --agent=run:<run dir>` flies the suite greedily. Reported per
lever: the overrides, steps, training wall seconds (the machine's load counts), and the
suite's TWR50 mean with its 95 % interval (the evaluation's summary.json).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

_OLD = ['--num_agents=256', '--set', 'network.kind=mlp',
        '--set', 'network.hidden_layers=[256,256]', '--set', 'algorithm.replay_capacity=64000',
        '--set', 'algorithm.gradient_steps=4']
_FLAT64 = ['--set', 'network.kind=mlp', '--set', 'network.hidden_layers=[256,256]']
LEVERS = {
    'flat256': _OLD,
    'flat64': _FLAT64,
    'column': [],
    'column_rscale': ['--set', 'algorithm.reward_scale=0.007'],
}


def _run(command):
  completed = subprocess.run(['nice', '-n', '10', sys.executable, '-m', *command],
                             capture_output=True, text=True, check=False)
  if completed.returncode:
    raise SystemExit(f'{" ".join(command[:2])} failed: {completed.stderr.strip()[-500:]}')


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--levers', default='flat256,flat64,column,column_rscale')
  parser.add_argument('--steps', type=int, default=409_600)
  parser.add_argument('--suite', default='small_eval')
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--output_dir', default=None)
  args = parser.parse_args(argv)
  names = args.levers.split(',')
  unknown = [name for name in names if name not in LEVERS]
  if unknown:
    parser.error(f'unknown lever {unknown[0]!r}; known: {", ".join(LEVERS)}.')
  output = args.output_dir or tempfile.mkdtemp(prefix='bench-qrdqn-levers-')
  results = []
  for name in names:
    overrides = LEVERS[name]
    start = time.time()
    _run(['agents.scripts.train', '--config=balloon_qrdqn', f'--logdir={output}',
          f'--timestamp={name}', f'--seed={args.seed}', '--quiet', *overrides,
          '--set', f'loop.steps={args.steps}'])
    train_seconds = time.time() - start
    evaluation = os.path.join(output, f'eval-{name}')
    _run(['agents.scripts.evaluate', f'--agent=run:{output}/{name}-balloon_qrdqn',
          f'--suite={args.suite}', f'--output_dir={evaluation}', '--quiet'])
    with open(os.path.join(evaluation, 'summary.json')) as file:
      summary = json.load(file)
    results.append({'lever': name, 'overrides': overrides, 'steps': args.steps,
                    'train_seconds': round(train_seconds, 1), 'suite': args.suite,
                    'twr50': summary['twr50']})
    print(json.dumps(results[-1]), flush=True)
  print(json.dumps({'output_dir': output, 'levers': results}, indent=1))


if __name__ == '__main__':
  main()
