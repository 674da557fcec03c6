"""The run directory: everything a training run writes and reads back.

- `run_manifest`: `run.yaml`, what ran (version, commit, command, placement);
- `checkpoints`: save, restore and validate the variables of a run;
- `metrics_writer`: `metrics.jsonl` beside TensorBoard's summaries;
- `tracking`, `mlflow_tracker`, `wandb_tracker`: optional experiment trackers;
- `directory_lock`, `interrupts`: one writer per run; Ctrl-C saves and stops;
- `policy_record`, `model_card`: the exported policy's `policy.yaml` and card;
- `weight_averaging`: the mean weights of a run's last checkpoints.
"""
