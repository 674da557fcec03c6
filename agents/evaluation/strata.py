"""Ranks the big_eval seeds into five difficulty strata by our station seeker; writes strata.json.

    OPENBLAS_NUM_THREADS=1 python -m agents.evaluation.strata [--results_dir=DIR] [--workers=2]

Flies (or, with `--results_dir`, reads) the station seeker on `big_eval` with procedural
wind, ranks the 10,000 seeds hardest first (by TWR50, then cumulative reward, then seed)
and writes `agents/evaluation/strata.json`: `hardest_strata` is the first 2,000 seeds of
the ranking, ..., `easiest_strata` the last 2,000. BLE ranks its strata the same way on
its own winds; ours are ranked on our procedural wind, so seed N is not BLE's seed N.
"""

import argparse
import sys

import numpy as np

from agents.evaluation import api
from agents.evaluation import results as results_lib
from agents.evaluation import suites as suites_lib
from agents.evaluation.errors import EvaluationError

COMMAND = 'OPENBLAS_NUM_THREADS=1 python -m agents.evaluation.strata'


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
  for index, name in enumerate(suites_lib.STRATA):
    members = seeds[index * suites_lib.STRATUM_SIZE:(index + 1) * suites_lib.STRATUM_SIZE]
    twr = np.array([by_seed[seed].twr50 for seed in members])
    strata[name] = {'station_seeker_twr50_mean': round(float(twr.mean()), 4),
                    'station_seeker_twr50_range': [float(twr.min()), float(twr.max())]}
  return {'ranked_by': 'station_seeker TWR50 (steps within 50 km / 960) on big_eval, '
                       'procedural wind; ties by cumulative reward, then seed',
          'command': COMMAND, 'strata': strata, 'seeds_hardest_first': seeds}


def main(argv=None):
  parser = argparse.ArgumentParser(prog='agents.evaluation.strata',
                                   description=__doc__.split('\n')[0])
  parser.add_argument('--results_dir', default=None,
                      help='a finished station_seeker big_eval (else flown into --output_dir)')
  parser.add_argument('--output_dir', default='strata_station_seeker_big_eval')
  parser.add_argument('--workers', type=int, default=2)
  parser.add_argument('--path', default=suites_lib.STRATA_PATH, help='where to write')
  args = parser.parse_args(sys.argv[1:] if argv is None else argv)
  try:
    directory = args.results_dir
    if directory is None:
      api.evaluate('station_seeker', 'big_eval', args.output_dir, workers=args.workers,
                   artifacts=False)
      directory = args.output_dir
    header, results = results_lib.load(directory)
    data = ranking(header, results)
  except EvaluationError as error:
    print(f'strata: error: {error}', file=sys.stderr)
    return 2
  results_lib.write_json(args.path, data)
  print(f'Wrote {args.path}: ' + ', '.join(
      f'{name} {info["station_seeker_twr50_mean"]:.3f}' for name, info in data['strata'].items()))
  return 0


if __name__ == '__main__':
  sys.exit(main())
