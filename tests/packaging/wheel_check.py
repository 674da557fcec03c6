"""Builds the wheel and the sdist, installs the wheel alone in a fresh venv, and runs it.

    python -m tests.packaging.wheel_check [--workdir=DIR] [--keep]

CI runs this before the test suite (`.ci/run`); it needs `build` (the `test` extra has
it) and the package index or pip's cache, and takes a few minutes, most of them pip
installing TensorFlow into the new environment. The checks, in order:

1. `python -m build` makes `batchppo_agents-<version>-py3-none-any.whl` and the sdist,
   both named with `agents.__version__`; the sdist carries the shipped model.
2. A new virtual environment (no system site-packages) installs the wheel file and its
   dependencies, nothing else: no source tree, no PYTHONPATH, run from a scratch folder.
3. `agents` imports from that environment with the same `__version__`, and every file
   of the source package that is not Python (the data read at run time) is installed.
4. Every console script of the distribution answers `--help`.
5. `agents-train --config=cartpole` trains a tiny run: policy (with policy.yaml, whose
   commit is null, and MODEL_CARD.md), metrics.jsonl, run.yaml with the version.
6. `agents-evaluate` flies the balloon model shipped in `models/balloon_ppo`, which
   stays out of the wheel (docs/packaging.md says why) and is passed by its path.
7. With the `gin` extra added, BLE's commands run from the scratch folder: `train
   --agent=quantile` (its gin file from the package) and `eval --agent=dqn` (BLE's
   default agent, shipped in the package).

Any failure prints what failed, with the end of the command's output, and exits with 1.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DISTRIBUTION = 'batchppo-agents'
MODEL = os.path.join(ROOT, 'models', 'balloon_ppo')


class CheckFailedError(RuntimeError):
  """One check of the wheel failed; the message says which and why."""


def source_version():
  """`agents.__version__` as written in the source tree."""
  with open(os.path.join(ROOT, 'agents', '__init__.py'), encoding='utf-8') as file:
    return re.search(r"^__version__ = '([^']+)'$", file.read(), re.MULTILINE).group(1)


def package_data_files():
  """The package's files that are not Python, relative to the repository (git's list)."""
  listed = subprocess.run(['git', 'ls-files', '--', 'agents'], cwd=ROOT, capture_output=True,
                          text=True, check=False)
  if listed.returncode == 0:
    paths = listed.stdout.split()
  else:  # Not a git checkout (an unpacked sdist): walk the folder.
    paths = [os.path.relpath(os.path.join(folder, name), ROOT)
             for folder, _, names in os.walk(os.path.join(ROOT, 'agents')) for name in names]
  return sorted(path for path in paths if not path.endswith(('.py', '.pyc'))
                and '__pycache__' not in path)


def run(command, what, cwd, env=None, log=None):
  """Runs `command`; raises CheckFailedError naming `what` with its output's last lines."""
  result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
  if log is not None:
    with open(log, 'w', encoding='utf-8') as file:
      file.write(result.stdout + result.stderr)
  if result.returncode != 0:
    tail = '\n'.join((result.stdout + result.stderr).strip().splitlines()[-25:])
    raise CheckFailedError(f'{what}: exit code {result.returncode} from '
                           f'{" ".join(command)}\n{tail}')
  return result.stdout


def build(dist):
  """Builds the sdist and the wheel into `dist`; returns (wheel path, sdist path)."""
  run([sys.executable, '-m', 'build', '--outdir', dist, ROOT], 'python -m build', cwd=ROOT,
      log=os.path.join(dist, 'build.log'))
  version = source_version()
  wheel = os.path.join(dist, f'batchppo_agents-{version}-py3-none-any.whl')
  sdist = os.path.join(dist, f'batchppo_agents-{version}.tar.gz')
  for path in (wheel, sdist):
    if not os.path.exists(path):
      raise CheckFailedError(f'python -m build made {sorted(os.listdir(dist))}, not '
                             f'{os.path.basename(path)} (agents.__version__ is {version}).')
  with zipfile.ZipFile(wheel) as archive:
    names = set(archive.namelist())
  missing = [path for path in package_data_files() if path not in names]
  if missing:
    raise CheckFailedError(f'The wheel lacks package data {missing}: declare it in '
                           "setup.py's package_data.")
  with tarfile.open(sdist) as archive:
    top = f'batchppo_agents-{version}/'
    names = set(archive.getnames())
  for path in ('models/balloon_ppo/saved_model.pb', 'models/balloon_ppo/policy.yaml',
               'setup.py', 'README.md'):
    if top + path not in names:
      raise CheckFailedError(f'The sdist lacks {path} (MANIFEST.in).')
  return wheel, sdist


def clean_environment():
  """This process's environment without what would let Python see the source tree."""
  env = {key: value for key, value in os.environ.items()
         if key not in ('PYTHONPATH', 'PYTHONHOME', 'VIRTUAL_ENV')}
  env['TF_CPP_MIN_LOG_LEVEL'] = '2'
  return env


def install(wheel, venv, workdir):
  """Makes a fresh venv at `venv` and installs the wheel (and its dependencies) into it."""
  run([sys.executable, '-m', 'venv', '--clear', venv], 'python -m venv', cwd=workdir,
      env=clean_environment())
  with open(os.path.join(venv, 'pyvenv.cfg'), encoding='utf-8') as file:
    if re.search(r'include-system-site-packages\s*=\s*true', file.read()):
      raise CheckFailedError(f'{venv} sees the system site-packages.')
  run([os.path.join(venv, 'bin', 'python'), '-m', 'pip', 'install', wheel],
      'pip install of the wheel', cwd=workdir, env=clean_environment(),
      log=os.path.join(workdir, 'pip-install.log'))


def check_installed_package(venv, workdir):
  """`agents` imports from the venv, at the source's version, with its data files."""
  script = ('import agents, importlib.metadata, json, os; print(json.dumps(dict('
            'folder=os.path.dirname(agents.__file__), version=agents.__version__, '
            f'metadata=importlib.metadata.version({DISTRIBUTION!r}), scripts=sorted('
            "entry.name for entry in importlib.metadata.distribution("
            f"{DISTRIBUTION!r}).entry_points if entry.group == 'console_scripts'))))")
  found = json.loads(run([os.path.join(venv, 'bin', 'python'), '-c', script],
                         'import agents in the new venv', cwd=workdir,
                         env=clean_environment()).strip().splitlines()[-1])
  if not found['folder'].startswith(os.path.realpath(venv)) and \
      not found['folder'].startswith(venv):
    raise CheckFailedError(f"agents was imported from {found['folder']}, not from {venv}.")
  version = source_version()
  if (found['version'], found['metadata']) != (version, version):
    raise CheckFailedError(f"Installed agents.__version__ {found['version']} and metadata "
                           f"{found['metadata']} differ from the source's {version}.")
  site_packages = os.path.dirname(found['folder'])
  missing = [path for path in package_data_files()
             if not os.path.exists(os.path.join(site_packages, path))]
  if missing:
    raise CheckFailedError(f'Package data missing from the installed package: {missing}')
  return found['scripts']


def check_console_scripts(venv, scripts, workdir):
  """Every console script exists and answers --help."""
  if not scripts:
    raise CheckFailedError('The distribution declares no console script.')
  for name in scripts:
    run([os.path.join(venv, 'bin', name), '--help'], f'{name} --help', cwd=workdir,
        env=clean_environment())


def check_training(venv, workdir):
  """`agents-train --config=cartpole` trains a tiny run and exports its policy."""
  logdir = os.path.join(workdir, 'logdir')
  run([os.path.join(venv, 'bin', 'agents-train'), '--config=cartpole', f'--logdir={logdir}',
       '--timestamp=wheel', '--quiet', '--num_agents=2', '--set', 'loop.steps=256',
       '--set', 'loop.log_every=128', '--set', 'algorithm.segment_length=32'],
      'agents-train --config=cartpole', cwd=workdir, env=clean_environment())
  run_dir = os.path.join(logdir, 'wheel-cartpole')
  for name in ('policy/saved_model.pb', 'policy/policy.yaml', 'policy/MODEL_CARD.md',
               'metrics.jsonl', 'config.yaml', 'run.yaml'):
    if not os.path.exists(os.path.join(run_dir, name)):
      raise CheckFailedError(f'agents-train wrote no {name} in {run_dir}.')
  with open(os.path.join(run_dir, 'run.yaml'), encoding='utf-8') as file:
    if f'project_version: {source_version()}' not in file.read():
      raise CheckFailedError(f'{run_dir}/run.yaml does not record version {source_version()}.')
  with open(os.path.join(run_dir, 'policy', 'policy.yaml'), encoding='utf-8') as file:
    record = file.read()
  # Installed from the wheel, the package is no git checkout: its commit is unknown.
  if f'project_version: {source_version()}' not in record or 'commit: null' not in record:
    raise CheckFailedError(f'{run_dir}/policy/policy.yaml does not record version '
                           f'{source_version()} with an unknown commit.')


def check_evaluation(venv, workdir):
  """`agents-evaluate` flies the shipped balloon model on two short seeds."""
  output_dir = os.path.join(workdir, 'evaluation')
  run([os.path.join(venv, 'bin', 'agents-evaluate'), f'--agent=savedmodel:{MODEL}',
       '--suite=custom:seeds=0-1,episode_length=24', f'--output_dir={output_dir}',
       '--workers=0', '--quiet', '--nogallery'],
      'agents-evaluate of models/balloon_ppo', cwd=workdir, env=clean_environment())
  with open(os.path.join(output_dir, 'summary.json'), encoding='utf-8') as file:
    summary = json.load(file)
  if summary.get('num_seeds') != 2:
    raise CheckFailedError(f"agents-evaluate flew {summary.get('num_seeds')} seeds, not 2.")


def check_ble_commands(wheel, venv, workdir):
  """BLE's `train` and `eval` commands, with the gin extra, from the scratch folder."""
  python = os.path.join(venv, 'bin', 'python')
  run([python, '-m', 'pip', 'install', f'{wheel}[gin]'], 'pip install of the gin extra',
      cwd=workdir, env=clean_environment(), log=os.path.join(workdir, 'pip-gin.log'))
  base_dir, output_dir = os.path.join(workdir, 'ble'), os.path.join(workdir, 'ble-eval')
  run([python, '-m', 'agents.python_agents.train', '--agent=quantile', f'--base_dir={base_dir}',
       '--num_iterations=1', '--max_episode_length=3', '--episodes_per_iteration=1',
       '--collectors=jsonl'], 'python -m agents.python_agents.train --agent=quantile',
      cwd=workdir, env=clean_environment())
  if not os.path.isdir(os.path.join(base_dir, 'quantile', '1', 'checkpoints')):
    raise CheckFailedError(f'train --agent=quantile wrote no checkpoints in {base_dir}.')
  run([python, '-m', 'agents.python_agents.eval', '--agent=dqn', '--suite=micro_eval',
       f'--output_dir={output_dir}'], 'python -m agents.python_agents.eval --agent=dqn',
      cwd=workdir, env=clean_environment())
  if not os.path.exists(os.path.join(output_dir, 'micro_eval', 'dqn.json')):
    raise CheckFailedError(f'eval --agent=dqn wrote no micro_eval/dqn.json in {output_dir}.')


def main(argv=None):
  """Runs every check in order; returns the exit code (0 when all pass)."""
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--workdir', default=None, help='Scratch folder (default: a new one '
                      'in the temporary folder, removed at the end).')
  parser.add_argument('--keep', action='store_true', help='Keep the scratch folder.')
  args = parser.parse_args(argv)
  workdir = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix='wheel-check-'))
  os.makedirs(workdir, exist_ok=True)
  dist, venv = os.path.join(workdir, 'dist'), os.path.join(workdir, 'venv')
  os.makedirs(dist, exist_ok=True)
  found = {}  # What one step hands to the next: the wheel, the console scripts.
  steps = [
      ('python -m build makes the wheel and the sdist',
       lambda: found.update(wheel=build(dist)[0])),
      ('the wheel installs alone into a fresh venv',
       lambda: install(found['wheel'], venv, workdir)),
      ('the installed package has its version and its data',
       lambda: found.update(scripts=check_installed_package(venv, workdir))),
      ('every console script answers --help',
       lambda: check_console_scripts(venv, found['scripts'], workdir)),
      ('agents-train --config=cartpole trains', lambda: check_training(venv, workdir)),
      ('agents-evaluate flies models/balloon_ppo', lambda: check_evaluation(venv, workdir)),
      ("BLE's train and eval commands run with the gin extra",
       lambda: check_ble_commands(found['wheel'], venv, workdir)),
  ]
  try:
    for number, (what, step) in enumerate(steps, 1):
      step()
      print(f'wheel check {number}/{len(steps)}: {what}', flush=True)
  except CheckFailedError as error:
    print(f'wheel check failed: {error}', file=sys.stderr, flush=True)
    print(f'(scratch folder kept: {workdir})', file=sys.stderr)
    return 1
  if not args.keep and args.workdir is None:
    shutil.rmtree(workdir, ignore_errors=True)
  print(f'wheel check: the wheel of {DISTRIBUTION} {source_version()} installs and runs.')
  return 0


if __name__ == '__main__':
  sys.exit(main())
