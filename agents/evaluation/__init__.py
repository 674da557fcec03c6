"""Evaluation of agents on fixed suites of seeded episodes, BLE's way, batched, any environment.

    from agents.evaluation import get_suite, evaluate, combine, summarize, compare

    outcome = evaluate('random', 'small_eval', 'out/cp', env_id='CartPole-v1')
    outcome['summary']['cumulative_reward']     # mean return + 95 % CI, IQM + CI, median
    outcome = evaluate('station_seeker', 'small_eval', 'out/ss', workers=2)  # the balloon
    outcome['summary']['twr50']                  # its headline metric, TWR50
    header, results = combine('out/ss')          # merge shard files, check the seeds
    summary = summarize(results)                 # the same statistics from results
    comparison = compare(['out/ss', 'out/ppo'], output_dir='out/cmp')   # paired

A suite is a name, seeds and an episode length; an environment's evaluation plug-in
(`agents.plugins.ENVIRONMENTS`) adds its slabs, seed mapping, suite options, metrics,
baselines and flight renderer (the balloon's: `agents.env.balloon.evaluation`).

Modules: suites (names, seeds), environments (each environment's plug-in or the
generic default), policies (what can be flown), play (one episode at a time:
`DeterministicPolicy`, `play_episode`), runner (the batched episode loop and shards),
ray_runner (shards as Ray tasks), results (per-seed results and shard files),
statistics (scipy and rliable), suite_runs (`evaluate`, `summarize_dir`, `compare`),
fit_groups (groups of fits paired by seed), ensemble (fits flown as one agent),
plots, strata (the balloon's ranking), during_training (loop.eval_suite).
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:  # What the lazy names are, for type checkers and the API reference.
  from agents.evaluation.errors import EvaluationError
  from agents.evaluation.play import DeterministicPolicy, play_episode
  from agents.evaluation.policies import BLEAgentAdapter, make_policy
  from agents.evaluation.results import SeedResult, combine, load
  from agents.evaluation.runner import fly, fly_shard, run_shard
  from agents.evaluation.statistics import compare_paired, summarize
  from agents.evaluation.suite_runs import compare, evaluate, summarize_dir
  from agents.evaluation.suites import Suite, episode_seed, get_suite, suite_names

# The public names and the module each lives in, imported on first use: a process that
# only loads the plug-ins (`agents.evaluation.plugin`, in every training run and every
# environment worker) must not pay for scipy and rliable (`statistics`), about a second.
_NAMES = {
    'EvaluationError': 'errors',
    'DeterministicPolicy': 'play', 'play_episode': 'play',
    'BLEAgentAdapter': 'policies', 'make_policy': 'policies',
    'SeedResult': 'results', 'combine': 'results', 'load': 'results',
    'fly': 'runner', 'fly_shard': 'runner', 'run_shard': 'runner',
    'compare_paired': 'statistics', 'summarize': 'statistics',
    'compare': 'suite_runs', 'evaluate': 'suite_runs', 'summarize_dir': 'suite_runs',
    'Suite': 'suites', 'episode_seed': 'suites', 'get_suite': 'suites',
    'suite_names': 'suites',
}

# Written out (not `sorted(_NAMES)`) so that the API reference and linters read it.
__all__ = [
    'BLEAgentAdapter', 'DeterministicPolicy', 'EvaluationError', 'SeedResult', 'Suite',
    'combine', 'compare', 'compare_paired', 'episode_seed', 'evaluate', 'fly', 'fly_shard',
    'get_suite', 'load', 'make_policy', 'play_episode', 'run_shard', 'summarize',
    'summarize_dir', 'suite_names',
]


def __getattr__(name: str) -> typing.Any:
  if name not in _NAMES:
    # A submodule not imported yet (`agents.evaluation.runner` after `import agents.evaluation`).
    try:
      return importlib.import_module(f'{__name__}.{name}')
    except ModuleNotFoundError as error:
      if error.name != f'{__name__}.{name}':
        raise
      raise AttributeError(f'module {__name__!r} has no attribute {name!r}') from None
  value = getattr(importlib.import_module(f'{__name__}.{_NAMES[name]}'), name)
  globals()[name] = value
  return value


def __dir__() -> list[str]:
  return sorted(set(globals()) | set(_NAMES))
