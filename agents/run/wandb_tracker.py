"""The Weights & Biases tracker (`loop.track: [wandb]`): the config, every row, the policy.

    pip install 'batchppo-agents[wandb]'
    wandb login
    python -m agents.scripts.train --config=cartpole --logdir=logdir --track=wandb

W&B's own settings apply: `WANDB_PROJECT` (default 'agents'), `WANDB_ENTITY`,
`WANDB_MODE=offline` (then `wandb sync` uploads later), `WANDB_DIR` (default: the run
directory, so an offline run's files stay beside its checkpoints). The run is named
after the run directory (an experiment's fit: '<experiment>-fit<k>') and grouped by
its experiment's name. Each row's measured numbers are logged as '<phase>/<name>'
against `global_step`, the row's step (W&B's own `_step` counts the calls). At the end
the exported policy folder is a 'model' artifact and config.yaml a 'config' artifact.

A resumed run reopens its W&B run (its id is kept in the run's `run.yaml`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import agents
from agents.run import tracking

_STEP = 'global_step'


class WandbTracker(tracking.Tracker):
  """Sends a run to W&B through `wandb.init` (online, or offline with WANDB_MODE)."""

  name = 'wandb'

  def __init__(self) -> None:
    self._wandb: Any = None  # The `wandb` module, once started.
    self._run: Any = None
    self._prefix: str | None = None

  def start(self, run: tracking.TrackedRun,
            previous: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Starts the W&B run (or resumes `previous['id']`) with the config."""
    self._wandb = wandb = tracking.import_client('wandb', 'wandb')
    if os.environ.get('WANDB_MODE', 'online') in ('online', 'run'):
      tracking.check_reachable(os.environ.get('WANDB_BASE_URL', 'https://api.wandb.ai'),
                               'the W&B server')
    resume_id = (previous or {}).get('id')
    self._run = wandb.init(
        project=os.environ.get('WANDB_PROJECT', 'agents'), name=run.name, group=run.group,
        config=run.config, dir=os.environ.get('WANDB_DIR', run.run_dir),
        id=resume_id, resume='allow' if resume_id else None,
        tags=[f'agents-{agents.__version__}'],
        # W&B would otherwise wrap stdout and stderr (the progress bar, a fit's log).
        settings=wandb.Settings(console='off'))
    if resume_id:
      self._run.config.update(run.config, allow_val_change=True)
    self._run.define_metric(_STEP)
    self._run.define_metric('*', step_metric=_STEP)
    self._prefix = re.sub(r'[^A-Za-z0-9_.-]', '-', run.name)
    return dict(id=self._run.id, project=self._run.project)

  def write(self, row: Mapping[str, Any]) -> None:
    """Logs the row's measured numbers against `global_step`."""
    values = tracking.measurements(row)
    if values:
      self._run.log({_STEP: int(row['step']), **values})

  def log_artifact(self, path: str) -> None:
    """A folder (the policy) becomes a 'model' artifact, a file a 'config' artifact."""
    is_folder = os.path.isdir(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    artifact = self._wandb.Artifact(f'{self._prefix}-{stem}',
                                    type='model' if is_folder else 'config')
    if is_folder:
      artifact.add_dir(path)
    else:
      artifact.add_file(path)
    self._run.log_artifact(artifact)

  def finish(self, status: str) -> None:
    """Ends the run; a failed run exits with code 1, others with 0."""
    self._run.summary['status'] = status
    self._run.finish(exit_code=1 if status == tracking.FAILED else 0)
