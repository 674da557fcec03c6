"""A run's exported policies: `policy/` at the end, `best_policy/` chosen on a suite.

    from agents.run import export
    export.save_policy(algorithm, observation_space, 'logdir/run/policy', config=config)

`save_policy` writes the SavedModel of an algorithm's deterministic policy with its
record (`policy.yaml`) and model card; `BestPolicy` keeps the weights that scored best
on `loop.select_suite` in `best_policy/`.
"""

import json
import os
from collections.abc import Callable
from typing import Any

from agents.configs.run_config import RunConfig
from agents.run import policy_record


def save_policy(algorithm: Any, observation_space: Any, path: str,
                config: RunConfig | None = None, run_dir: str | None = None,
                step: int | None = None, checkpoint: str | None = None,
                name: str | None = None, notes: str | None = None) -> str:
  """Saves the algorithm's deterministic policy (`export_policy`) as a SavedModel at `path`.

  With `config`, the folder also gets its record, `policy.yaml`, and its model card,
  `MODEL_CARD.md` (`agents.run.policy_record`, `agents.run.model_card`), with no evaluation.

  Args:
    algorithm: the algorithm whose policy is saved.
    observation_space: the environment's observation space.
    path: the folder to write.
    config: the run's config; None writes the SavedModel alone.
    run_dir: the run directory (its run.yaml and metrics.jsonl give versions and time).
    step: the global step (environment steps) of the saved weights.
    checkpoint: the checkpoint the weights come from.
    name: the policy's name in its record; None: the run directory's (or folder's) name.
    notes: free text for the record and card.

  Returns:
    `path`.
  """
  import tensorflow as tf

  # A record left by an earlier save describes other weights: it goes first, so a save
  # that fails midway leaves no record that claims the new weights.
  policy_record.remove(path)
  tf.saved_model.save(algorithm.export_policy(observation_space), path)
  if config is not None:
    training_record = policy_record.training_of(run_dir, config, step, checkpoint)
    name = name or os.path.basename(os.path.abspath(run_dir or path))
    record = policy_record.new_record(path, name, config, config.environment.id,
                                      observation_space.shape, training_record, notes)
    policy_record.write(path, record)
  return path


class BestPolicy:
  """Exports the weights that score best on `loop.select_suite` as `RUN_DIR/best_policy/`.

  Beside the SavedModel and its record (whose notes name the step, suite and score),
  `selection.json` holds `{step, suite, metric, value}` of the weights there, so a resumed
  run goes on from the best score so far. A later phase replaces them only when it
  scores strictly higher (ties keep the earlier weights).
  """

  FOLDER = 'best_policy'
  RECORD = 'selection.json'

  def __init__(self, run_dir: str, save: Callable[[str, int, str], Any]) -> None:
    """Args:
      run_dir: the run directory.
      save: callable(path, step, notes) that exports the current weights to `path`.
    """
    self.path = os.path.join(run_dir, self.FOLDER)
    self._save = save
    self.best = self.read(run_dir)

  @classmethod
  def read(cls, run_dir: str) -> dict[str, Any] | None:
    """The `selection.json` of a run's best policy, or None when it has none."""
    path = os.path.join(run_dir, cls.FOLDER, cls.RECORD)
    if not os.path.exists(path):
      return None
    with open(path, encoding='utf-8') as handle:
      return json.load(handle)

  def offer(self, step: int, suite: str, metric: str, value: float) -> bool:
    """Exports the current weights when `value` beats the best so far; True if it did."""
    if self.best is not None and value <= self.best['value']:
      return False
    record = os.path.join(self.path, self.RECORD)
    if os.path.exists(record):  # The weights are replaced first: no stale claim survives.
      os.remove(record)
    self._save(self.path, step, f'Selected by loop.select_suite: {metric} {value:.4f} on '
               f'{suite}, the best of the evaluation phases up to step {step}.')
    self.best = dict(step=int(step), suite=suite, metric=metric, value=float(value))
    with open(record, 'w', encoding='utf-8') as handle:
      json.dump(self.best, handle)
    return True
