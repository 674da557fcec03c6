"""Evaluation of balloon agents on fixed suites of seeded episodes, BLE's way, batched.

    from agents.evaluation import get_suite, evaluate, combine, summarize, compare

    suite = get_suite('small_eval')              # or Suite('mine', range(50), 480)
    outcome = evaluate('station_seeker', suite, 'out/ss', workers=2)
    outcome['summary']['twr50']                  # mean TWR50 + 95 % CI, IQM + CI, median
    header, results = combine('out/ss')          # merge shard files, check the seeds
    summary = summarize(results)                 # the same statistics from results
    comparison = compare(['out/ss', 'out/ppo'], output_dir='out/cmp')   # paired

Modules: suites (names, seeds, strata), policies (what can be flown), runner (the
batched episode loop and shards), ray_runner (shards as Ray tasks), results (per-seed
results and shard files), statistics (scipy and rliable), plots, strata (the ranking),
during_training (loop.eval_suite).
"""

from agents.evaluation.api import compare, evaluate, summarize_dir
from agents.evaluation.errors import EvaluationError
from agents.evaluation.policies import BLEAgentAdapter, make_policy
from agents.evaluation.results import EvaluationResult, combine, load
from agents.evaluation.runner import fly, fly_shard, run_shard
from agents.evaluation.statistics import compare_paired, summarize
from agents.evaluation.suites import Suite, episode_seed, get_suite, suite_names

__all__ = [
    'BLEAgentAdapter', 'EvaluationError', 'EvaluationResult', 'Suite', 'combine', 'compare',
    'compare_paired', 'episode_seed', 'evaluate', 'fly', 'fly_shard', 'get_suite', 'load',
    'make_policy', 'run_shard', 'summarize', 'summarize_dir', 'suite_names',
]
