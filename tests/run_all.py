"""Runs the whole unittest suite and ends with a plain `N passed, N failed` line.

`python -m unittest discover` reports counts only as `Ran N tests`; CI and
people both want the plain tally, so this wraps the same discovery (every
`*_test.py` under `tests/`, see tests/__init__.py).

    python -m tests.run_all [-k PATTERN] [--jobs N] [--durations N] [-v]

By default the test modules run in parallel, one worker process per core, at most 8
(`--jobs`, or the environment variable `TEST_JOBS`, choose): each worker imports
TensorFlow once and takes the next module from a queue, longest first by the
durations of an earlier run (`tests/durations.json`, rewritten by
`--record_durations`). Modules are independent (each test makes its own
temporary directories and picks free ports), so the order does not matter;
`--jobs=1` runs everything in this process, in discovery order, as plain
`unittest` would. What a test prints is held (unittest's `buffer`) and shown only with
its failure; failures and errors are printed in full at the end, before the tally.
"""

import argparse
import atexit
import collections
import concurrent.futures
import io
import json
import math
import multiprocessing
import os
import sys
import time
import traceback
import unittest

_TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TESTS = os.path.join(_TOP, 'tests')
DURATIONS_FILE = os.path.join(_TESTS, 'durations.json')
_SUFFIX = '_test.py'
# Modules slower than this (by the recorded durations) run as several shards of classes.
SHARD_SECONDS = 15.0
# Modules that must not share a process with another module's Ray session: a driver that
# ran a local Ray instance earlier cannot start actors on the multi-node test cluster.
FRESH_PROCESS_MODULES = ('tests.training.ray_training_test',)
# Each worker holds TensorFlow (over 1 GB): a machine that reports many cores (a container
# with a CPU quota, say) gets at most this many unless TEST_JOBS or --jobs says otherwise.
MAX_DEFAULT_JOBS = 8


def test_modules(root=_TESTS, top=_TOP):
  """Dotted names of the test modules under `root`, as `unittest` discovery finds them:
  files ending in `_test.py`, in packages (directories with an `__init__.py`); names are
  relative to `top`."""
  modules = []
  for directory, subdirectories, files in os.walk(root):
    if not os.path.exists(os.path.join(directory, '__init__.py')):
      subdirectories[:] = []
      continue
    subdirectories.sort()
    package = os.path.relpath(directory, top).replace(os.sep, '.')
    modules += [f'{package}.{name[:-3]}' for name in sorted(files) if name.endswith(_SUFFIX)]
  return modules


def import_tensorflow():
  """Imports TensorFlow in this process, once, before its first test module. Quietly: the
  `tests` package sets TF_CPP_MIN_LOG_LEVEL and imports `agents` first, whose
  `tensorflow_start` drops TensorFlow's start-up notices."""
  import tensorflow  # noqa: F401 -- imported for its side effect, once per process


def start_worker():
  """A pool worker's initializer: `import_tensorflow`, and an exit without teardown.

  A worker exits when the pool shuts down, after its last unit, and the run waits for it:
  the interpreter's teardown of TensorFlow and of the rest its tests imported (modules,
  objects, native libraries) takes 2-4 s there, on the run's critical path. The handler
  registered here runs after every exit handler registered later (those of TensorFlow,
  Ray, `tempfile` and the tests' own), then ends the process. Its results are sent by
  then; what it printed is flushed.
  """
  atexit.register(_exit_without_teardown)
  import_tensorflow()


def _exit_without_teardown():
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(0)


def _loader(patterns):
  loader = unittest.TestLoader()
  if patterns:
    loader.testNamePatterns = [f'*{p}*' for p in patterns]
  return loader


class _Tally:
  """Counts and the full reports of failures, summed over modules."""

  def __init__(self):
    self.passed = self.failed = self.skipped = 0
    self.reports = []
    self.test_seconds = []

  def add(self, outcome):
    self.passed += outcome['passed']
    self.failed += outcome['failed']
    self.skipped += outcome['skipped']
    self.reports += outcome['reports']
    self.test_seconds += outcome.get('test_seconds', [])

  def line(self):
    text = f'{self.passed} passed, {self.failed} failed'
    return text + (f', {self.skipped} skipped' if self.skipped else '')


class _TimedResult(unittest.TextTestResult):
  """A TextTestResult that also records each test's wall time (`test_seconds`)."""

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.test_seconds = []
    self._started = None

  def startTest(self, test):  # noqa: N802 -- unittest's name
    self._started = time.perf_counter()
    super().startTest(test)

  def stopTest(self, test):  # noqa: N802 -- unittest's name
    super().stopTest(test)
    self.test_seconds.append((test.id(), time.perf_counter() - self._started))


def _outcome(result, seconds):
  """A picklable summary of a unittest result."""
  problems = ([('FAIL', test, text) for test, text in result.failures]
              + [('ERROR', test, text) for test, text in result.errors])
  reports = [f'{kind}: {test}\n{text}' for kind, test, text in problems]
  reports += [f'UNEXPECTED SUCCESS: {test}' for test in result.unexpectedSuccesses]
  failed = len(reports)
  skipped = len(result.skipped)
  return {'passed': result.testsRun - failed - skipped, 'failed': failed,
          'skipped': skipped, 'reports': reports, 'seconds': seconds,
          'test_seconds': result.test_seconds}


def _test_classes(suite):
  """The suite's tests grouped by test class, in order: [[test, ...], ...]."""
  groups = {}
  stack = [suite]
  while stack:
    item = stack.pop(0)
    if isinstance(item, unittest.TestSuite):
      stack[:0] = list(item)
    else:
      groups.setdefault(type(item), []).append(item)
  return list(groups.values())


def _shard(suite, shard, num_shards):
  """Test classes shard, shard + num_shards, ... of the suite (whole classes, so a class's
  setUpClass runs once)."""
  classes = _test_classes(suite)
  return unittest.TestSuite([test for group in classes[shard::num_shards] for test in group])


def _error_outcome(report, seconds=0.0):
  """The outcome of a unit that could not run (its module did not import, its worker died)."""
  return {'passed': 0, 'failed': 1, 'skipped': 0, 'seconds': seconds, 'reports': [report]}


def run_module(module, patterns=None, verbose=False, shard=0, num_shards=1):
  """Runs one test module (or one shard of its test classes) in this process; returns its
  picklable outcome."""
  start = time.perf_counter()
  stream = sys.stderr if verbose else io.StringIO()
  try:
    suite = _loader(patterns).loadTestsFromName(module)
  except Exception:  # noqa: BLE001 -- an import error is that module's failure, reported
    return _error_outcome(f'ERROR: importing {module}\n{traceback.format_exc()}',
                          time.perf_counter() - start)
  if num_shards > 1:
    suite = _shard(suite, shard, num_shards)
  # buffer: what a test prints (stdout, stderr) is held and shown only with its failure.
  runner = unittest.TextTestRunner(stream=stream, verbosity=2 if verbose else 0,
                                   resultclass=_TimedResult, buffer=True)
  return _outcome(runner.run(suite), time.perf_counter() - start)


def _recorded_durations():
  try:
    with open(DURATIONS_FILE) as file:
      return json.load(file)
  except (OSError, ValueError):
    return {}


def _units(modules, durations, shard_seconds):
  """Work units (module, shard, num_shards, expected seconds), longest first.

  A module that took longer than `shard_seconds` is split into shards of its test
  classes, so one slow module does not hold up the end of the run; modules never timed
  go first, whole, and so do those that need a fresh process (each shard would pay a
  process and TensorFlow's import of its own, even a shard with no class in it).
  """
  units = []
  for module in modules:
    seconds = durations.get(module, float('inf'))
    whole = seconds == float('inf') or module in FRESH_PROCESS_MODULES
    shards = 1 if whole else max(1, math.ceil(seconds / shard_seconds))
    units += [(module, shard, shards, seconds / shards) for shard in range(shards)]
  return sorted(units, key=lambda unit: -unit[3])


def _record(durations):
  with open(DURATIONS_FILE, 'w') as file:
    json.dump({m: round(s, 2) for m, s in sorted(durations.items())}, file, indent=1)
    file.write('\n')


def run_parallel(modules, jobs, patterns=None, verbose=False, shard_seconds=SHARD_SECONDS):
  """Runs the modules in `jobs` worker processes; returns (tally, seconds per module)."""
  tally, durations = _Tally(), collections.defaultdict(float)
  units = _units(modules, _recorded_durations(), shard_seconds)
  context = multiprocessing.get_context('spawn')  # no fork of a process with threads
  # A worker imports `tests` (and so its TF_CPP_MIN_LOG_LEVEL and `agents`) as it unpickles
  # its initializer, a function of tests.run_all, before that imports TensorFlow.
  with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context,
                                              initializer=start_worker) as pool, \
       concurrent.futures.ProcessPoolExecutor(1, mp_context=context,
                                              initializer=start_worker,
                                              max_tasks_per_child=1) as fresh:
    futures = {(fresh if module in FRESH_PROCESS_MODULES else pool).submit(
                   run_module, module, patterns, False, shard, shards):
               (module, shard, shards) for module, shard, shards, _ in units}
    try:
      for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
        module, shard, shards = futures[future]
        name = module if shards == 1 else f'{module} [{shard + 1}/{shards}]'
        try:
          outcome = future.result()
        except Exception:  # noqa: BLE001 -- a worker that died fails its unit, not the run
          outcome = _error_outcome(f'ERROR: worker running {name}\n{traceback.format_exc()}')
        tally.add(outcome)
        durations[module] += outcome['seconds']
        if verbose or outcome['failed']:
          status = 'FAILED' if outcome['failed'] else 'ok'
          print(f'[{done}/{len(units)}] {name}: {status} ({outcome["seconds"]:.1f} s)',
                flush=True)
        else:
          print('.', end='', flush=True)
    except KeyboardInterrupt:
      pool.shutdown(wait=False, cancel_futures=True)
      raise
  print()
  return tally, dict(durations)


def run_serial(modules, patterns=None, verbose=False):
  """Runs the modules one after another in this process."""
  tally, durations = _Tally(), {}
  for module in modules:
    outcome = run_module(module, patterns, verbose)
    tally.add(outcome)
    durations[module] = outcome['seconds']
    if not verbose:
      print('F' if outcome['failed'] else '.', end='', flush=True)
  print()
  return tally, durations


def default_jobs():
  """`TEST_JOBS` if set, else the cores this process may use, at most MAX_DEFAULT_JOBS."""
  if os.environ.get('TEST_JOBS'):
    return int(os.environ['TEST_JOBS'])
  cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
  return max(1, min(cores or 1, MAX_DEFAULT_JOBS))


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument('-k', dest='patterns', action='append', default=None,
                      help='Only run tests whose name contains this substring.')
  parser.add_argument('-v', '--verbose', action='store_true')
  parser.add_argument('--jobs', type=int, default=None,
                      help='Worker processes (default: TEST_JOBS, else one per core; '
                           '1 runs in this process).')
  parser.add_argument('--durations', type=int, default=0, metavar='N',
                      help='Print the N slowest tests.')
  parser.add_argument('--record_durations', action='store_true',
                      help=f'Write each module\'s time to {os.path.relpath(DURATIONS_FILE)}.')
  args = parser.parse_args(argv)
  jobs = args.jobs if args.jobs is not None else default_jobs()
  if jobs < 1:
    parser.error(f'--jobs must be >= 1, got {jobs}')
  modules = test_modules()
  start = time.perf_counter()
  if jobs == 1:
    import_tensorflow()
    tally, durations = run_serial(modules, args.patterns, args.verbose)
  else:
    tally, durations = run_parallel(modules, jobs, args.patterns, args.verbose)
  for report in tally.reports:
    print('=' * 70, report, sep='\n')
  if args.durations:
    print(f'Slowest {args.durations} tests:')
    for test, seconds in sorted(tally.test_seconds, key=lambda item: -item[1])[:args.durations]:
      print(f'  {seconds:6.1f} s  {test}')
  if args.record_durations:
    _record(durations)
  print(f'{len(modules)} modules in {time.perf_counter() - start:.0f} s with {jobs} '
        f'job{"s" if jobs > 1 else ""}')
  print(tally.line())
  return 0 if tally.failed == 0 else 1


if __name__ == '__main__':
  sys.exit(main())
