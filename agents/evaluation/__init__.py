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
(`agents.plugins.EVALUATION`) adds its slabs, seed mapping, suite options, metrics,
baselines and flight renderer (the balloon's: `agents.env.balloon.evaluation`).

Modules: suites (names, seeds), environments (each environment's plug-in or the
generic default), policies (what can be flown), play (one episode at a time:
`DeterministicPolicy`, `play_episode`), runner (the batched episode loop and shards),
ray_runner (shards as Ray tasks), results (per-seed results and shard files),
statistics (scipy and rliable), suite_runs (`evaluate`, `summarize_dir`, `compare`),
plots, strata (the balloon's ranking), during_training (loop.eval_suite).
"""

from agents.evaluation.errors import EvaluationError
from agents.evaluation.play import DeterministicPolicy, play_episode
from agents.evaluation.policies import BLEAgentAdapter, make_policy
from agents.evaluation.results import EvaluationResult, combine, load
from agents.evaluation.runner import fly, fly_shard, run_shard
from agents.evaluation.statistics import compare_paired, summarize
from agents.evaluation.suite_runs import compare, evaluate, summarize_dir
from agents.evaluation.suites import Suite, episode_seed, get_suite, suite_names

__all__ = [
    'BLEAgentAdapter', 'DeterministicPolicy', 'EvaluationError', 'EvaluationResult', 'Suite',
    'combine', 'compare', 'compare_paired', 'episode_seed', 'evaluate', 'fly', 'fly_shard',
    'get_suite', 'load', 'make_policy', 'play_episode', 'run_shard', 'summarize',
    'summarize_dir', 'suite_names',
]
