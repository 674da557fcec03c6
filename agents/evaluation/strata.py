"""Ranks the big_eval seeds into five difficulty strata by our station seeker; writes strata.json.

    OPENBLAS_NUM_THREADS=1 python -m agents.evaluation.strata [--results_dir=DIR] [--workers=2]

Flies (or, with `--results_dir`, reads) the station seeker on `big_eval` (in the default
wind, BLE's generative one; the shipped ranking was flown in the procedural wind), ranks
the 10,000 seeds hardest first (by TWR50, then cumulative reward, then seed) and writes
`agents/env/balloon/strata.json`: `hardest_strata` is the first 2,000 seeds of the
ranking, ..., `easiest_strata` the last 2,000. BLE ranks its strata the same way on
its own winds; ours are ranked on our winds, so seed N is not BLE's seed N.

The strata's names, size and file are the balloon's evaluation plug-in's (`strata`,
`stratum_size`, `strata_path`), found as the plug-in that has the station seeker.
"""

import argparse
import sys

import numpy as np

from agents.evaluation import environments, suite_runs
from agents.evaluation import results as results_lib
from agents.evaluation.errors import EvaluationError

COMMAND = 'OPENBLAS_NUM_THREADS=1 python -m agents.evaluation.strata'
RANKING_AGENT = 'station_seeker'


def balloon_plugin():
  """The evaluation plug-in of the environment whose baseline ranks the strata."""
  env_id = environments.baseline_env_id(RANKING_AGENT)
  if env_id is None:
    raise EvaluationError(f'no evaluation plug-in has the {RANKING_AGENT} baseline that '
                          'ranks the strata.')
  return environments.get(env_id).plugin


def rank(results):
  """Suite seeds hardest first: by TWR50, then cumulative reward, then seed."""
  ordered = sorted(results, key=lambda r: (r.twr50, r.cumulative_reward, r.seed))
  return [result.seed for result in ordered]


def ranking(header, results):
  """strata.json's content for a station seeker big_eval."""
  if header['agent'] != 'station_seeker' or header['suite']['name'] != 'big_eval':
    raise EvaluationError(f'the strata are ranked by station_seeker on big_eval, got '
                          f'{header["agent"]} on {header["suite"]["name"]}.')
  seeds = rank(results)
  by_seed = {result.seed: result for result in results}
  strata = {}
  plugin = balloon_plugin()
  size = plugin.stratum_size
  for index, name in enumerate(plugin.strata):
    members = seeds[index * size:(index + 1) * size]
    twr = np.array([by_seed[seed].twr50 for seed in members])
    strata[name] = {'station_seeker_twr50_mean': round(float(twr.mean()), 4),
                    'station_seeker_twr50_range': [float(twr.min()), float(twr.max())]}
  wind = header['suite'].get('wind', 'procedural')
  return {'ranked_by': 'station_seeker TWR50 (steps within 50 km / 960) on big_eval, '
                       f'{wind} wind; ties by cumulative reward, then seed',
          'command': COMMAND, 'strata': strata, 'seeds_hardest_first': seeds}


def main(argv=None):
  """Command line: writes the difficulty strata of a results directory."""
  parser = argparse.ArgumentParser(prog='agents.evaluation.strata',
                                   description=__doc__.split('\n', maxsplit=1)[0])
  parser.add_argument('--results_dir', default=None,
                      help='a finished station_seeker big_eval (else flown into --output_dir)')
  parser.add_argument('--output_dir', default='strata_station_seeker_big_eval')
  parser.add_argument('--workers', type=int, default=2)
  parser.add_argument('--path', default=None,
                      help="where to write (default: the balloon plug-in's strata.json)")
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  try:
    directory = args.results_dir
    if directory is None:
      suite_runs.evaluate('station_seeker', 'big_eval', args.output_dir, workers=args.workers,
                   artifacts=False)
      directory = args.output_dir
    header, results = results_lib.load(directory)
    data = ranking(header, results)
  except EvaluationError as error:
    print(f'strata: error: {error}', file=sys.stderr)
    return 2
  path = args.path or balloon_plugin().strata_path
  results_lib.write_json(path, data)
  print(f'Wrote {path}: ' + ', '.join(
      f'{name} {info["station_seeker_twr50_mean"]:.3f}' for name, info in data['strata'].items()))
  return 0


if __name__ == '__main__':
  sys.exit(main())
