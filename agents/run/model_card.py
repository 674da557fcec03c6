"""An exported policy's model card, `MODEL_CARD.md`: its record as Markdown to publish.

    from agents.run import model_card, policy_record
    model_card.write('runs/x/policy', policy_record.load('runs/x/policy'))

The card says what the policy is, what it was trained on and for how long, its
evaluations (each with its suite and the command that measured it), how to load and
fly it, and its limitations. It is written from the record alone, so it claims nothing
the record does not hold, and it is written again whenever the record changes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from agents.configs import yaml_io

FILENAME = 'MODEL_CARD.md'


def path_in(directory: str) -> str:
  """The card's path in an exported policy folder."""
  return os.path.join(directory, FILENAME)


def write(directory: str, record: Mapping[str, Any]) -> str:
  """Writes the card of `record` into `directory`, atomically; returns its path."""
  path = path_in(directory)
  temporary = path + '.tmp'
  with open(temporary, 'w', encoding='utf-8') as file:
    file.write(render(record))
  os.replace(temporary, path)
  return path


# How the built-in algorithms' names are written; another algorithm's in capitals.
_ALGORITHM_NAMES = {'ppo': 'PPO', 'qrdqn': 'QR-DQN'}
# What the exported policy's determinism is, per built-in algorithm.
_DETERMINISTIC_ACTIONS = {'ppo': 'the mode of its action distribution',
                          'qrdqn': 'the greedy action'}


def render(record: Mapping[str, Any]) -> str:
  """The Markdown text of a record's card."""
  training = record['training']
  network = record['config'].get('network', {}).get('kind', 'unknown')
  algorithm = _ALGORITHM_NAMES.get(record['algorithm'], record['algorithm'].upper())
  exporter = record['exported']['project_version']
  sections = [
      f'# {record["name"]}: a {algorithm} policy for {record["env_id"]}',
      f'The deterministic policy of a trained {algorithm} run with '
      f'the `{network}` network, exported as a TensorFlow SavedModel'
      + (f' by agents {exporter}' if exporter else '') + '. Its machine-readable record, '
      'with the full config, is `policy.yaml` beside this card.',
      '## Training\n\n' + _training(training),
      '## Evaluation\n\n' + _evaluations(record['evaluations']),
      '## How to load and fly it\n\n' + _load(record['load']),
      '## Limitations\n\n' + _limitations(record),
  ]
  if record.get('notes'):
    sections.append('## Notes\n\n' + record['notes'].strip())
  config = yaml_io.dump_yaml(record['config']).rstrip()
  sections.append(f'## Config\n\n```yaml\n{config}\n```')
  return '\n\n'.join(sections) + '\n'


def _training(training: Mapping[str, Any]) -> str:
  steps = 'unknown' if training['steps'] is None else f'{training["steps"]:,}'
  seconds = training['seconds']
  duration = 'unknown' if seconds is None else _duration(seconds)
  return '\n'.join([
      f'- Environment steps: {steps}',
      f'- Wall-clock training time: {duration}',
      f'- Checkpoint: {training["checkpoint"] or "unknown"}',
      f'- Seed: {"unknown" if training["seed"] is None else training["seed"]}',
      f'- Trained by agents {training["project_version"] or "(version unknown)"} at commit '
      f'{training["commit"] or "unknown"}',
  ])


def _duration(seconds: float) -> str:
  minutes, seconds = divmod(int(round(seconds)), 60)
  hours, minutes = divmod(minutes, 60)
  return f'{hours} h {minutes} min {seconds} s' if hours else f'{minutes} min {seconds} s'


def _evaluations(evaluations: Sequence[Mapping[str, Any]]) -> str:
  if not evaluations:
    return ('Not evaluated: this record holds no measured results. Measure them with '
            '`python -m agents.scripts.evaluate --agent=savedmodel:DIR --suite=small_eval '
            '--output_dir=eval/DIR --record`.')
  lines = ['| suite | seeds | episode length | metric | mean [95% CI] | IQM [95% CI] | median |'
           ' measured |', '|---|---|---|---|---|---|---|---|']
  for evaluation in evaluations:
    suite = evaluation['suite']
    statistics = evaluation['statistics'][evaluation['metric']]
    measured = evaluation['measured']
    lines.append(
        f'| {suite["name"]} | {suite["num_seeds"]} | {suite["episode_length"]} | '
        f'{evaluation["metric"]} | {_interval(statistics["mean"], statistics["mean_ci95"])} | '
        f'{_interval(statistics["iqm"], statistics["iqm_ci95"])} | {statistics["median"]:.3f}'
        f' | {measured["date"][:10]}, agents {measured["project_version"]} |')
  commands = '\n'.join(f'    {evaluation["command"]}' for evaluation in evaluations)
  return '\n'.join(lines) + '\n\nMeasured with:\n\n' + commands


def _interval(point: float, interval: Sequence[float]) -> str:
  return f'{point:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]'


def _load(load: Mapping[str, str]) -> str:
  return '\n'.join([
      f'In any TensorFlow program, without this package: `{load["tensorflow"]}`.',
      '',
      'With this package:',
      '',
      f'    {load["evaluate"]}',
      f'    {load["visualize"]}',
  ])


def _limitations(record: Mapping[str, Any]) -> str:
  suites = sorted({evaluation['suite']['name'] for evaluation in record['evaluations']})
  measured = (f'Its results hold for the suites measured ({", ".join(suites)}) only'
              if suites else 'It has not been evaluated')
  shape = ', '.join(str(size) for size in record['observation_shape'])
  action = _DETERMINISTIC_ACTIONS.get(record['algorithm'], 'the mode of the policy')
  return '\n'.join([
      f'- It takes the observations of {record["env_id"]} as this version of agents makes '
      f'them ([N, {shape}] float32); another observation layout flies wrongly or not at all.',
      f'- It is deterministic ({action}) and does not learn further.',
      f'- {measured}; other seeds, episode lengths or environment settings may differ.',
  ])
