"""Soak: long runs that survive repeated faults with nothing lost; prints one JSON object.

    python -m devtools.soak training [--minutes 30] [--config balloon] [--seed 0]
    python -m devtools.soak experiment [--budget 16384]
    python -m devtools.soak evaluation [--suite small_eval]
    python -m devtools.soak all --minutes 30

`training` trains `--config` through `python -m agents.scripts.train` and, at random
moments (every `--min_gap`..`--max_gap` seconds of training), injects one of:

- `kill_worker`: SIGKILL one environment worker; the run must stop with an error (no
  hang) and resume from its newest checkpoint;
- `sigterm`: SIGTERM the run's whole process group; it must save a checkpoint and exit
  with 128 + 15, then resume from that checkpoint;
- `truncate_checkpoint`: as `sigterm`, then the newest checkpoint's data file is cut to
  half before the resume, which must fall back to the checkpoint before it.

When `--minutes` are spent the run is resumed a last time to finish a short budget and
export its policy. Then it checks that the `train` rows of metrics.jsonl are continuous
(strictly increasing steps, none logged twice, no gap wider than one log interval), that
the policy loads, and that no process or shared-memory block of the run is left.

`experiment` fits `--n_fit` CartPole fits with `python -m agents.scripts.experiment fit`,
SIGKILLs one fit's training process half-way, reruns the same command (which resumes
it) and checks that every fit finished its budget. `evaluation` flies the station
seeker on `--suite`, SIGKILLs the evaluation half-way, reruns it, and compares the
per-seed results with an uninterrupted evaluation's.

The JSON reports, per part, the faults injected and survived by kind and each check.
"""

import argparse
import glob
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAULTS = ('kill_worker', 'sigterm', 'truncate_checkpoint')
START_TIMEOUT_S = 300
STOP_TIMEOUT_S = 180


def _environment():
  return dict(os.environ, PYTHONPATH=REPOSITORY, OPENBLAS_NUM_THREADS='1',
              TF_CPP_MIN_LOG_LEVEL='2', PYTHONUNBUFFERED='1')


def _start(module, argv, log_path):
  """Starts `python -m module argv` in its own session, its output appended to a log."""
  log = open(log_path, 'a')  # noqa: SIM115 - closed by the caller through _finish.
  process = subprocess.Popen([sys.executable, '-m', module, *argv], cwd=REPOSITORY,
                             env=_environment(), stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
  process.log = log
  return process


def _finish(process, timeout=STOP_TIMEOUT_S):
  """Waits for `process`; returns its exit code, or None if it hung (it is then killed)."""
  try:
    code = process.wait(timeout)
  except subprocess.TimeoutExpired:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    code = None
  process.log.close()
  return code


def descendants(pid):
  """The pids of every process below `pid` (Linux /proc)."""
  found, frontier = [], [pid]
  while frontier:
    parent = frontier.pop()
    for task in glob.glob(f'/proc/{parent}/task/*/children'):
      try:
        with open(task) as children:
          pids = [int(child) for child in children.read().split()]
      except OSError:
        continue
      found.extend(pids)
      frontier.extend(pids)
  return found


def _command_line(pid):
  try:
    with open(f'/proc/{pid}/cmdline', 'rb') as file:
      return file.read().replace(b'\0', b' ').decode(errors='replace')
  except OSError:
    return ''


def environment_workers(pid):
  """The environment workers below `pid`: the children of its forkserver (or of the run
  itself with spawn), not the forkserver or the resource tracker."""
  workers = []
  for child in descendants(pid):
    line = _command_line(child)
    if 'resource_tracker' in line:
      continue
    parent = _parent(child)
    if parent != pid and 'forkserver' in _command_line(parent) and 'forkserver' in line:
      workers.append(child)
    elif parent == pid and 'spawn_main' in line:
      workers.append(child)
  return workers


def _parent(pid):
  try:
    with open(f'/proc/{pid}/stat') as file:
      return int(file.read().rsplit(')', 1)[1].split()[1])
  except (OSError, IndexError, ValueError):
    return None


def _rows(run_dir, phase='train'):
  path = os.path.join(run_dir, 'metrics.jsonl')
  if not os.path.exists(path):
    return []
  rows = []
  with open(path) as file:
    for line in file:
      try:
        row = json.loads(line)
      except json.JSONDecodeError:
        continue  # a row cut by a kill; the resumed run truncates it away
      if row.get('phase') == phase:
        rows.append(row)
  return rows


def _checkpoints(run_dir):
  paths = glob.glob(os.path.join(run_dir, 'checkpoints', 'ckpt-*.index'))
  return sorted(paths, key=lambda path: int(re.search(r'ckpt-(\d+)', path).group(1)))


def _wait_for_progress(process, run_dir, beyond_step, deadline_s=START_TIMEOUT_S):
  """Waits until the run logs a train row past `beyond_step`; False if it exits first."""
  deadline = time.monotonic() + deadline_s
  while time.monotonic() < deadline:
    rows = _rows(run_dir)
    if rows and rows[-1]['step'] > beyond_step:
      return True
    if process.poll() is not None:
      return False
    time.sleep(1.0)
  return False


def _shared_memory_blocks():
  return set(glob.glob('/dev/shm/psm_*')) | set(glob.glob('/dev/shm/wnsm_*'))


def _inject(fault, process, run_dir, rng):
  """Injects `fault` into the running `process`; returns (exit code, detail)."""
  if fault == 'kill_worker':
    workers = environment_workers(process.pid)
    if not workers:
      return None, 'no worker found'
    victim = rng.choice(workers)
    os.kill(victim, signal.SIGKILL)
    return _finish(process), f'killed worker {victim}'
  os.killpg(process.pid, signal.SIGTERM)
  code = _finish(process)
  if fault == 'truncate_checkpoint':
    newest = _checkpoints(run_dir)[-1]
    data = sorted(glob.glob(newest[:-len('.index')] + '.data-*'))[0]
    with open(data, 'r+b') as file:
      file.truncate(os.path.getsize(data) // 2)
    return code, f'truncated {os.path.basename(data)}'
  return code, 'SIGTERM to the process group'


def soak_training(args, workdir):
  """The training part: faults at random moments for `args.minutes`, then the checks."""
  rng = random.Random(args.seed)
  logdir = os.path.join(workdir, 'train')
  run_dir = os.path.join(logdir, f'soak-{args.config}')
  log_path = os.path.join(workdir, 'train.log')
  base = ['--config', args.config, '--logdir', logdir, '--timestamp', 'soak', '--quiet',
          '--seed', str(args.seed)]
  blocks_before = _shared_memory_blocks()
  injected = dict.fromkeys(FAULTS, 0)
  survived = dict.fromkeys(FAULTS, 0)
  events, seen_pids = [], set()
  end = time.monotonic() + 60 * args.minutes
  process = _start('agents.scripts.train', base + ['--set', 'loop.steps=1000000000000'],
                   log_path)
  pending = None  # the fault whose resume has not yet shown progress
  restored = -1
  while True:
    if not _wait_for_progress(process, run_dir, restored):
      return dict(error=f'the run did not train after {pending}; see {log_path}',
                  injected=injected, survived=survived, events=events)
    if pending is not None:
      survived[pending] += 1
    seen_pids.update([process.pid, *descendants(process.pid)])
    if time.monotonic() >= end:
      break
    time.sleep(rng.uniform(args.min_gap, args.max_gap))
    seen_pids.update(descendants(process.pid))
    fault = rng.choice(FAULTS)
    rows = _rows(run_dir)
    code, detail = _inject(fault, process, run_dir, rng)
    injected[fault] += 1
    checkpoints = _checkpoints(run_dir)
    restored = int(re.search(r'ckpt-(\d+)', checkpoints[-1]).group(1)) if checkpoints else 0
    events.append(dict(fault=fault, detail=detail, exit_code=code,
                       last_row_step=rows[-1]['step'] if rows else None,
                       elapsed_s=round(60 * args.minutes - (end - time.monotonic()))))
    if code is None:
      return dict(error=f'{fault}: the run hung', injected=injected, survived=survived,
                  events=events)
    pending = fault
    process = _start('agents.scripts.train', base + ['--set', 'loop.steps=1000000000000'],
                     log_path)
  # The last stretch: stop, then finish a short budget past the newest checkpoint.
  os.killpg(process.pid, signal.SIGTERM)
  _finish(process)
  newest = int(re.search(r'ckpt-(\d+)', _checkpoints(run_dir)[-1]).group(1))
  final = _start('agents.scripts.train',
                 base + ['--set', f'loop.steps={newest + args.final_steps}'], log_path)
  seen_pids.update(descendants(final.pid))
  final_code = _finish(final, timeout=START_TIMEOUT_S + STOP_TIMEOUT_S)
  time.sleep(2.0)  # workers leave after their parent
  return dict(injected=injected, survived=survived, final_exit_code=final_code,
              checks=_final_checks(run_dir, seen_pids, blocks_before), events=events)


def _final_checks(run_dir, seen_pids, blocks_before):
  steps = [row['step'] for row in _rows(run_dir)]
  gaps = [after - before for before, after in zip(steps, steps[1:])]
  with open(os.path.join(run_dir, 'config.yaml')) as file:
    log_every = int(re.search(r'log_every: (\d+)', file.read()).group(1))
  policy_loads = subprocess.run(
      [sys.executable, '-c', 'import sys, tensorflow as tf; tf.saved_model.load(sys.argv[1])',
       os.path.join(run_dir, 'policy')], env=_environment(), capture_output=True).returncode == 0
  left = sorted(pid for pid in seen_pids if os.path.exists(f'/proc/{pid}')
                and _parent(pid) is not None and 'python' in _command_line(pid))
  return dict(rows=len(steps), last_step=steps[-1] if steps else None,
              steps_strictly_increasing=all(gap > 0 for gap in gaps),
              duplicated_steps=len(steps) - len(set(steps)),
              widest_gap=max(gaps, default=0), log_every=log_every,
              no_gap_wider_than_log_every=max(gaps, default=0) <= log_every,
              policy_loads=policy_loads, processes_left=left,
              shared_memory_left=_leaked(_shared_memory_blocks() - blocks_before))


def _leaked(blocks):
  """The blocks no live process holds open or mapped: a block that other jobs on the
  machine (a test suite, say) are using when the check runs is theirs, not a leak."""
  used = set()
  for proc in glob.glob('/proc/[0-9]*'):
    try:
      used.update(os.readlink(link) for link in glob.glob(f'{proc}/fd/*'))
      with open(f'{proc}/maps') as maps:
        used.update(line.split()[-1] for line in maps if '/dev/shm/' in line)
    except OSError:
      continue
  return sorted(block for block in blocks if block not in used)


def soak_experiment(args, workdir):
  """Three fits; one fit's training process is SIGKILLed; the rerun finishes them."""
  argv = ['fit', '--config=cartpole', f'--output_dir={workdir}', '--name=soak',
          f'--n_fit={args.n_fit}', f'--budget={args.budget}', '--max_workers=1', '--quiet',
          '--set', 'loop.log_every=1024', '--set', 'loop.checkpoint_every=2048']
  log_path = os.path.join(workdir, 'experiment.log')
  process = _start('agents.scripts.experiment', argv, log_path)
  experiment_dir = os.path.join(workdir, 'soak')
  killed = None
  deadline = time.monotonic() + 20 * 60
  while killed is None and process.poll() is None and time.monotonic() < deadline:
    for run_dir in glob.glob(os.path.join(experiment_dir, '**', 'metrics.jsonl'),
                             recursive=True):
      rows = _rows(os.path.dirname(run_dir))
      if rows and rows[-1]['step'] >= args.budget // 2:
        fits = [pid for pid in descendants(process.pid)
                if 'forkserver' not in _command_line(pid) and _parent(pid) == process.pid]
        if fits:
          killed = fits[0]
          os.kill(killed, signal.SIGKILL)
          break
    time.sleep(0.5)
  first_code = _finish(process, timeout=20 * 60)
  rerun_code = _finish(_start('agents.scripts.experiment', argv, log_path), timeout=20 * 60)
  finished = []
  for run_dir in sorted(glob.glob(os.path.join(experiment_dir, '**', 'config.yaml'),
                                  recursive=True)):
    rows = _rows(os.path.dirname(run_dir))
    finished.append(bool(rows) and rows[-1]['step'] >= args.budget)
  return dict(injected=dict(kill_fit=int(killed is not None)),
              survived=dict(kill_fit=int(killed is not None and all(finished)
                                         and len(finished) == args.n_fit)),
              first_exit_code=first_code, rerun_exit_code=rerun_code,
              fits_finished=finished)


def soak_evaluation(args, workdir):
  """An evaluation killed half-way and rerun gives the per-seed results of a whole one."""
  def argv(output_dir):
    return ['--agent=station_seeker', f'--suite={args.suite}', f'--output_dir={output_dir}',
            '--quiet', '--nogallery']
  log_path = os.path.join(workdir, 'evaluation.log')
  whole, cut = os.path.join(workdir, 'whole'), os.path.join(workdir, 'cut')
  _finish(_start('agents.scripts.evaluate', argv(whole), log_path), timeout=30 * 60)
  process = _start('agents.scripts.evaluate', argv(cut), log_path)
  killed = False
  deadline = time.monotonic() + 30 * 60
  while process.poll() is None and time.monotonic() < deadline:
    shards = glob.glob(os.path.join(cut, 'shard-*.json'))
    if shards and _seeds_done(shards[0]) >= 1:
      os.killpg(process.pid, signal.SIGKILL)
      killed = True
      break
    time.sleep(0.2)
  _finish(process)
  _finish(_start('agents.scripts.evaluate', argv(cut), log_path), timeout=30 * 60)
  identical = _per_seed(whole) == _per_seed(cut)
  return dict(injected=dict(kill_evaluation=int(killed)),
              survived=dict(kill_evaluation=int(killed and identical)),
              per_seed_identical=identical, seeds=len(_per_seed(whole)))


def _seeds_done(path):
  try:
    with open(path) as file:
      return len(json.load(file)['results'])
  except (OSError, ValueError, KeyError):
    return 0


def _per_seed(output_dir):
  results = []
  for path in sorted(glob.glob(os.path.join(output_dir, 'shard-*.json'))):
    with open(path) as file:
      results.extend(json.load(file)['results'])
  return sorted(json.dumps(result, sort_keys=True) for result in results)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument('part', choices=('training', 'experiment', 'evaluation', 'all'))
  parser.add_argument('--minutes', type=float, default=30.0)
  parser.add_argument('--config', default='balloon')
  parser.add_argument('--seed', type=int, default=0)
  parser.add_argument('--min_gap', type=float, default=30.0)
  parser.add_argument('--max_gap', type=float, default=150.0)
  parser.add_argument('--final_steps', type=int, default=30_720)
  parser.add_argument('--n_fit', type=int, default=3)
  parser.add_argument('--budget', type=int, default=16_384)
  parser.add_argument('--suite', default='small_eval')
  parser.add_argument('--workdir', default=None)
  args = parser.parse_args()
  workdir = args.workdir or tempfile.mkdtemp(prefix='soak-')
  parts = ('training', 'experiment', 'evaluation') if args.part == 'all' else (args.part,)
  report = dict(workdir=workdir, args=vars(args))
  functions = dict(training=soak_training, experiment=soak_experiment,
                   evaluation=soak_evaluation)
  for part in parts:
    started = time.monotonic()
    os.makedirs(os.path.join(workdir, part), exist_ok=True)
    report[part] = functions[part](args, os.path.join(workdir, part))
    report[part]['wall_s'] = round(time.monotonic() - started, 1)
    print(json.dumps({part: report[part]}), file=sys.stderr, flush=True)
  print(json.dumps(report, indent=1))


if __name__ == '__main__':
  main()
