"""The iteration records of a training run (`run_training_loop`'s), read and resumed from.

After each iteration the loop saves the agent's checkpoint and writes
`<base_dir>/checkpoints/iteration_<n>.json`: the agent's class and name, the episodes
flown so far, the batch size, the seed and the iteration's means. A run that starts
again in the same `base_dir` resumes after the newest iteration whose checkpoint loads.
`train_lib.read_records` is `read_records` here.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any

from agents.python_agents import agent as agent_lib

# The training loop's logger: its warnings keep the name they had in train_lib.
_LOG = logging.getLogger('agents.python_agents.train_lib')
_RECORD = re.compile(r'^iteration_(\d+)\.json$')


def read_records(checkpoint_dir: str) -> dict[int, dict[str, Any]]:
  """{iteration: record} of the iteration records in `checkpoint_dir` that read."""
  records: dict[int, dict[str, Any]] = {}
  if not os.path.isdir(checkpoint_dir):
    return records
  for name in os.listdir(checkpoint_dir):
    match = _RECORD.match(name)
    if not match:
      continue
    try:
      with open(os.path.join(checkpoint_dir, name), encoding='utf-8') as file:
        record = json.load(file)
      records[int(match.group(1))] = record
    except (OSError, ValueError) as error:
      _LOG.warning('Skipping the unreadable iteration record %s: %s', name, error)
  return records


def resume(agent: Any, agent_class: str, checkpoint_dir: str,
           episodes_per_iteration: int) -> tuple[int, int]:
  """Loads the newest readable checkpoint; returns (next iteration, episodes so far).

  Raises:
    CheckpointMismatchError: the newest record names another agent class.
    CheckpointLoadError: records exist but none of their checkpoints loads.
  """
  records = read_records(checkpoint_dir)
  if records:
    newest = records[max(records)]
    if newest.get('agent_class') != agent_class:
      raise agent_lib.CheckpointMismatchError(
          f'{checkpoint_dir} holds the checkpoints of agent class '
          f'{newest.get("agent_class")!r} (iteration {max(records)}), not of '
          f'{agent_class!r}; pass another base_dir to train this agent.')
  latest = agent.reload_latest_checkpoint(checkpoint_dir)
  if latest is not None and latest >= 0:
    record = records.get(latest)
    return latest + 1, (record['episodes'] if record else
                        (latest + 1) * episodes_per_iteration)
  failures = []
  for iteration in sorted(records, reverse=True):
    try:
      agent.load_checkpoint(checkpoint_dir, iteration)
    except Exception as error:  # noqa: BLE001 - any failure: try the older checkpoint
      failures.append(f'iteration {iteration}: {type(error).__name__}: {error}')
      _LOG.warning('Checkpoint of iteration %d does not load (%s); trying an older one.',
                   iteration, error)
      continue
    return iteration + 1, records[iteration]['episodes']
  if failures:
    raise agent_lib.CheckpointLoadError(
        f'no checkpoint in {checkpoint_dir} loads into the agent: ' + '; '.join(failures))
  return 0, 0


def write_json(path: str, data: Any) -> None:
  """Writes JSON atomically: a temporary file, then a rename."""
  temporary = f'{path}.tmp-{os.getpid()}'
  with open(temporary, 'w', encoding='utf-8') as file:
    json.dump(data, file, indent=1)
  os.replace(temporary, path)
