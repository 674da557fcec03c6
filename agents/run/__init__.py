"""The run directory: everything a training run writes and reads back.

- `session`: config.yaml checked and written; a session recorded and its trackers started;
- `run_manifest`: `run.yaml`, what ran (version, commit, command, placement);
- `checkpoints`: save, restore and validate the variables of a run;
- `metrics_writer`, `run_metrics`: `metrics.jsonl` beside TensorBoard's summaries, and
  every sink of a row;
- `tracking`, `mlflow_tracker`, `wandb_tracker`: optional experiment trackers;
- `directory_lock`: one writer per run;
- `export`: the exported policies, `policy/` and `best_policy/`;
- `policy_record`, `model_card`: the exported policy's `policy.yaml` and card.
"""
