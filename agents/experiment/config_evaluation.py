"""`ConfigExperiment.eval_agents`: its fits' policies flown on an evaluation suite.

The fits' run directories hold what evaluating them needs: each fit's newest checkpoint
(or its `best_policy/`) flies through the evaluation API (`agents.evaluation`), and the
results stay in the run directory, replaced when the fit's checkpoint changes.
"""

import logging
import os
import shutil

from agents.experiment import fitting
from agents.experiment.errors import ExperimentError

_LOG = logging.getLogger(__name__)


def eval_agents(experiment, suite=None, workers=None, use_ray=None, weights='newest'):
  """Evaluates every finished fit on a suite through the evaluation API (`agents.evaluation`).

  Each fit's policy (`run:<run_dir>`, its latest checkpoint) flies every seed
  of the suite; the results go to `<run_dir>/eval-<suite>/` (the evaluation's
  own shard files, so an interrupted evaluation resumes), replacing results of an
  earlier checkpoint of the run there. A fit whose last training evaluation phase
  (`loop.eval_suite`) flew that checkpoint on the same suite is not flown again: its
  rows are that phase's, `<run_dir>/eval_suite/step-<STEP>/`, and an
  `eval-<suite>/` holding an earlier checkpoint's results is removed, so no folder
  of the fit shows stale results.

  With `weights='best'`, each fit's `best_policy/` flies instead: the weights that
  scored best on the run's `loop.select_suite` (`agents.run.export.BestPolicy`). The
  training evaluation phase of the same step flew those weights, so its rows are taken
  when it flew this suite; otherwise they fly into
  `<run_dir>/eval-<suite>-best-step-<STEP>/`, and the folder of an earlier choice goes.

  Args:
    experiment: the `ConfigExperiment`.
    suite: a suite name (see `agents.evaluation.suite_names()`) or `Suite`;
      defaults to the manager's `eval_suite`, else 'small_eval'.
    workers: local worker processes of each evaluation (None: the CPU count).
    use_ray: fly on Ray (default: when the manager's parallelization is 'ray').
    weights: 'newest' (the latest checkpoint) or 'best' (`best_policy/`).

  Returns:
    DataFrame with one row per fit and seed: name, fit, seed, and the
    evaluation's per-seed fields (twr50, cumulative_reward, ...).

  Raises:
    NotImplementedError: the evaluation package is not installed in this tree.
    ExperimentError: no fit has finished, `weights` is unknown, or a fit has no
      `best_policy/` (trained without `loop.select_suite`) for `weights='best'`.
  """
  if weights not in ('newest', 'best'):
    raise ExperimentError(f"weights must be 'newest' or 'best', got {weights!r}.")
  try:
    from agents.evaluation import during_training, policies
  except ImportError as error:
    raise NotImplementedError(
        'eval_agents needs the evaluation API agents.evaluation (issue 11), which is not '
        f'in this tree ({error}); final training scores are in final_scores() and '
        'get_writer_data().') from error
  import pandas as pd
  suite = suite or experiment.eval_suite or 'small_eval'
  finished = [fit for fit in experiment.fits if fit['status'] == fitting.FINISHED]
  if not finished:
    raise ExperimentError(f'{experiment.name}: no fit has finished; call fit() first.')
  rows = []
  for fit in finished:
    run_dir = experiment.run_dir(fit['index'])
    if weights == 'best':
      results = _best_results(experiment, fit['index'], suite, workers, use_ray)
    else:
      newest = policies.describe_agent(f'run:{run_dir}')['checkpoint']
      # Training's last evaluation phase may have flown this checkpoint on this suite.
      results = during_training.phase_results(run_dir, newest, suite)
      if results is None:
        results = _fly(experiment, run_dir, newest, suite, workers, use_ray)
      else:
        _drop_stale_results(run_dir, newest, suite)
    for result in results:
      record = result.to_dict()
      record.pop('flight_path', None)
      rows.append(dict(name=experiment.name, fit=fit['index'], **record))
  return pd.DataFrame(rows).sort_values(['fit', 'seed']).reset_index(drop=True)

def _best_results(experiment, index, suite, workers, use_ray):
  """A fit's `best_policy/` on a suite: its training phase's rows, else flown."""
  from agents.evaluation import during_training
  from agents.run import export
  run_dir = experiment.run_dir(index)
  selection = export.BestPolicy.read(run_dir)
  if selection is None:
    raise ExperimentError(f'{experiment.name}: fit {index} has no best_policy/ (it was trained '
                          'without loop.select_suite); evaluate its newest weights.')
  results = during_training.phase_results(run_dir, f"ckpt-{selection['step']}", suite)
  if results is not None:
    return results
  # One folder per choice, named by its step: those of earlier choices are removed.
  eval_dir = f"{_eval_dir(run_dir, suite)}-best-step-{selection['step']}"
  prefix = os.path.basename(_eval_dir(run_dir, suite)) + '-best-step-'
  for name in os.listdir(run_dir):
    if name.startswith(prefix) and os.path.join(run_dir, name) != eval_dir:
      shutil.rmtree(os.path.join(run_dir, name))
  return _evaluate(experiment, f'savedmodel:{os.path.join(run_dir, export.BestPolicy.FOLDER)}',
                        suite, eval_dir, workers, use_ray)

def _fly(experiment, run_dir, checkpoint, suite, workers, use_ray):
  """Flies a fit's newest checkpoint on a suite into `<run_dir>/eval-<suite>/`; its results."""
  from agents.evaluation import results as results_lib
  eval_dir = _eval_dir(run_dir, suite)
  # The folder holds the run's newest checkpoint's results: those of an earlier one
  # (a search evaluates after every chunk of training) are replaced.
  stale = results_lib.run_checkpoints(eval_dir, run_dir) - {checkpoint}
  return _evaluate(experiment, f'run:{run_dir}', suite, eval_dir, workers, use_ray,
                        overwrite=bool(stale))

def _evaluate(experiment, spec, suite, eval_dir, workers, use_ray, overwrite=False):
  """Flies an agent spec on a suite into `eval_dir` (resuming it); every seed's results."""
  from agents import evaluation
  evaluation.evaluate(
      spec, suite, eval_dir,
      workers=workers if workers is not None else (os.cpu_count() or 1),
      use_ray=experiment.parallelization == 'ray' if use_ray is None else use_ray,
      ray_address=experiment.ray_address, progress=not experiment.quiet, artifacts=False,
      overwrite=overwrite)
  _, results = evaluation.load(eval_dir)  # Every seed, also those flown before.
  return results


def _eval_dir(run_dir, suite):
  """`<run_dir>/eval-<suite>/`, where `eval_agents` flies a fit (suite: a name or `Suite`)."""
  return os.path.join(run_dir, f'eval-{suite if isinstance(suite, str) else suite.name}')


def _drop_stale_results(run_dir, checkpoint, suite):
  """Removes `<run_dir>/eval-<suite>/` when it holds only results of the run's other
  checkpoints (its newest, `checkpoint`, was flown by a training evaluation phase)."""
  from agents.evaluation import results as results_lib
  eval_dir = _eval_dir(run_dir, suite)
  if not os.path.isdir(eval_dir):
    return
  flown = results_lib.run_checkpoints(eval_dir, run_dir)
  if flown and checkpoint not in flown:
    shutil.rmtree(eval_dir)
    _LOG.info('Removed %s: it held results of %s; %s was flown by training\'s last '
              'evaluation phase.', eval_dir, ', '.join(sorted(flown)), checkpoint)
