"""Balloon training throughput of QR-DQN next to PPO, and QR-DQN's share in its update. Prints JSON.

    python -m bench.qrdqn_balloon_throughput [--steps=46080]

Trains, one after the other in this process (workers in processes, as in a real
run), `balloon_qrdqn` with learning from the first step (`learning_starts=0`),
`balloon_qrdqn` without any update (`learning_starts` beyond the run) and the
PPO `balloon` config, each for `--steps` environment steps. Reported per variant
is the steps/s of the logged rows after the first (start-up and tracing
excluded); the update's share of QR-DQN's step is 1 - (steps/s with updates) /
(steps/s without).
"""

import argparse
import json
import os
import sys
import tempfile


def _config(variant, steps):
  from agents import configs
  from agents.env.balloon import configs as balloon_configs
  if variant == 'ppo':
    config = configs.resolve('balloon')
  else:
    config = balloon_configs.balloon_qrdqn()
    config['algorithm']['learning_starts'] = 0 if variant == 'qrdqn' else 10**12
  config['loop'].update(steps=steps, checkpoint_every=10**9)
  return configs.validate(config)


def measure(variant, steps):
  from agents.training import trainer
  run_dir = tempfile.mkdtemp(prefix=f'bench-throughput-{variant}-')
  trainer.train(_config(variant, steps), run_dir, quiet=True, export_policy=False)
  with open(os.path.join(run_dir, 'metrics.jsonl'), encoding='utf-8') as file:
    rows = [json.loads(line) for line in file if '"train"' in line]
  steady = rows[1:] or rows
  seconds = sum((row['phase_step'] - previous['phase_step']) / row['steps_per_second']
                for previous, row in zip(rows, steady)) if len(rows) > 1 else None
  moved = rows[-1]['phase_step'] - rows[0]['phase_step'] if len(rows) > 1 else None
  return {'variant': variant, 'steady_steps_per_second':
          round(moved / seconds, 1) if seconds else rows[-1]['steps_per_second'],
          'rows': [round(row['steps_per_second'], 1) for row in rows], 'run_dir': run_dir}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--steps', type=int, default=46_080)
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
  results = {variant: measure(variant, args.steps)
             for variant in ('qrdqn', 'qrdqn_no_update', 'ppo')}
  with_update = results['qrdqn']['steady_steps_per_second']
  without = results['qrdqn_no_update']['steady_steps_per_second']
  summary = {'qrdqn_steps_per_second': with_update, 'ppo_steps_per_second':
             results['ppo']['steady_steps_per_second'],
             'qrdqn_update_share': round(1 - with_update / without, 3)}
  print(json.dumps({'summary': summary, 'runs': list(results.values())}, indent=1))
  return 0


if __name__ == '__main__':
  sys.exit(main())
