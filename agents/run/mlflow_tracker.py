"""The MLflow tracker (`loop.track: [mlflow]`): the config as params, every row as metrics.

    pip install 'batchppo-agents[mlflow]'
    MLFLOW_TRACKING_URI=http://localhost:5000 python -m agents.scripts.train \
        --config=cartpole --logdir=logdir --track=mlflow

Where the runs go is MLflow's own setting, `MLFLOW_TRACKING_URI` (a server, a database
such as `sqlite:///mlflow.db`, a folder `file:/path/mlruns`). The run is named after the
run directory (an experiment's fit: '<experiment>-fit<k>') and filed under the MLflow
experiment of its group (the experiment manager's name; else `MLFLOW_EXPERIMENT_NAME`,
else 'Default'). Each row's measured numbers are metrics named '<phase>/<name>'
('train/mean_score', 'update/policy_loss') at the row's step. At the end the exported
policy folder and config.yaml are the run's artifacts (`policy/`, `config.yaml`).

A resumed run reopens its MLflow run (its id is kept in the run's `run.yaml`); the
params it already has keep their first values (MLflow refuses to change a param), and
the steps logged again after the checkpoint get a second value each.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

import agents
from agents.run import tracking

# MLflow's limits: 100 params per batch, 6,000 characters per value.
_PARAMS_PER_BATCH = 100
_PARAM_LENGTH = 6000
_STATUS = {tracking.FINISHED: 'FINISHED', tracking.INTERRUPTED: 'KILLED',
           tracking.FAILED: 'FAILED'}


class MLflowTracker(tracking.Tracker):
  """Sends a run to MLflow through `MlflowClient` (no global active run is set)."""

  name = 'mlflow'

  def __init__(self) -> None:
    self._client: Any = None  # The `MlflowClient`, once started.
    self._run_id: str | None = None

  def start(self, run: tracking.TrackedRun,
            previous: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Creates the MLflow run (or reopens `previous['run_id']`) and logs the params."""
    mlflow = tracking.import_client('mlflow', 'mlflow')
    from mlflow.entities import Param
    from mlflow.tracking import MlflowClient
    uri = mlflow.get_tracking_uri()
    tracking.check_reachable(uri, 'the MLflow tracking server')
    self._client = MlflowClient(uri)
    previous = previous or {}
    run_id = previous.get('run_id')
    if run_id and previous.get('tracking_uri') == uri and self._exists(run_id):
      self._client.update_run(run_id, status='RUNNING')
      logged = self._client.get_run(run_id).data.params
    else:
      experiment_id = self._experiment_id(
          run.group or os.environ.get('MLFLOW_EXPERIMENT_NAME') or 'Default')
      run_id = self._client.create_run(experiment_id, run_name=run.name, tags={
          'agents.run_dir': os.path.abspath(run.run_dir),
          'agents.version': agents.__version__}).info.run_id
      logged = {}
    self._run_id = run_id
    params = [Param(key, str(value)[:_PARAM_LENGTH]) for key, value in run.params.items()
              if key not in logged]
    for first in range(0, len(params), _PARAMS_PER_BATCH):
      self._client.log_batch(run_id, params=params[first:first + _PARAMS_PER_BATCH])
    return dict(run_id=run_id, tracking_uri=uri)

  def write(self, row: Mapping[str, Any]) -> None:
    """Logs the row's measured numbers as metrics at the row's step."""
    from mlflow.entities import Metric
    timestamp = int(1000 * (row.get('wall_time') or time.time()))
    metrics = [Metric(key, value, timestamp, int(row['step']))
               for key, value in tracking.measurements(row).items()]
    if metrics:
      self._client.log_batch(self._run_id, metrics=metrics)

  def log_artifact(self, path: str) -> None:
    """A folder becomes `<its name>/` among the artifacts; a file goes at their top."""
    if os.path.isdir(path):
      self._client.log_artifacts(self._run_id, path, artifact_path=os.path.basename(path))
    else:
      self._client.log_artifact(self._run_id, path)

  def finish(self, status: str) -> None:
    """Ends the run as FINISHED, KILLED (interrupted) or FAILED."""
    self._client.set_terminated(self._run_id, status=_STATUS[status])

  def _exists(self, run_id: str) -> bool:
    from mlflow.exceptions import MlflowException
    try:
      self._client.get_run(run_id)
    except MlflowException:
      return False
    return True

  def _experiment_id(self, name: str) -> str:
    """The id of the MLflow experiment `name`, created when missing."""
    from mlflow.exceptions import MlflowException
    experiment = self._client.get_experiment_by_name(name)
    if experiment is not None:
      return experiment.experiment_id
    try:
      return self._client.create_experiment(name)
    except MlflowException:
      # Another fit of the same experiment created it first.
      experiment = self._client.get_experiment_by_name(name)
      if experiment is None:
        raise
      return experiment.experiment_id
