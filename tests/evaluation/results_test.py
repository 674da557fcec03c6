"""Tests for agents/evaluation/results.py: shard files, combine, the output dir's guard."""

import json
import os
import tempfile
import unittest

from agents.env.balloon import evaluation as balloon_evaluation
from agents.evaluation import results, suites
from agents.evaluation.errors import EvaluationError
from tests.helpers.fake_results import balloon_result


def _read(path):
  with open(path) as file:
    return file.read()


def fake_result(seed, twr=0.5):
  return balloon_result(seed, 100.0 + seed, twr, twr)


class CombineTest(unittest.TestCase):

  def setUp(self):
    self.dir = tempfile.mkdtemp()
    self.suite = suites.Suite('five', range(5))

  def write(self, index, seeds, num_shards=2, agent='station_seeker', suite=None):
    header = results.header(agent, suite or self.suite, num_shards, index)
    results.write_shard(self.dir, header, [fake_result(seed) for seed in seeds], True)

  def test_combines_in_suite_order_and_writes_results_json(self):
    self.write(1, [3, 4])
    self.write(0, [0, 1, 2])
    header, combined = results.combine(self.dir)
    self.assertEqual([r.seed for r in combined], [0, 1, 2, 3, 4])
    self.assertEqual(header['agent'], 'station_seeker')
    _, again = results.load_combined(os.path.join(self.dir, 'results.json'))
    self.assertEqual(again, combined)

  def test_a_malformed_result_is_refused_naming_the_file_entry_and_field(self):
    self.write(0, [0, 1, 2])
    path = os.path.join(self.dir, results.shard_filename(2, 0))
    with open(path) as file:
      data = json.load(file)
    for field, value, expected in (('seed', '1; import os', 'int'),
                                   ('cumulative_reward', None, 'int or float'),
                                   ('twr50', 'high', 'bool or int or float or NoneType'),
                                   ('out_of_power', 'yes', 'bool or int or float or NoneType'),
                                   ('flight_path', [1], 'dict or NoneType')):
      with self.subTest(field=field):
        broken = json.loads(json.dumps(data))
        broken['results'][1][field] = value
        with open(path, 'w') as file:
          json.dump(broken, file)
        with self.assertRaisesRegex(EvaluationError,
                                    rf'{path}: result 1 has {field} = .*; expected {expected}'):
          results.load_shard(path)

  def test_refuses_missing_seeds_naming_them(self):
    self.write(0, [0, 1, 2])
    self.write(1, [4])
    with self.assertRaisesRegex(EvaluationError, r'seeds \[3\] .* have no result'):
      results.combine(self.dir)
    self.assertFalse(os.path.exists(os.path.join(self.dir, 'results.json')))

  def test_refuses_duplicate_seeds_naming_them(self):
    self.write(0, [0, 1, 2])
    self.write(1, [2, 3, 4])
    with self.assertRaisesRegex(EvaluationError, r'seeds \[2\] .* more than one shard'):
      results.combine(self.dir)

  def test_refuses_shards_of_different_agents(self):
    self.write(0, [0, 1, 2])
    self.write(1, [3, 4], agent='random')
    with self.assertRaisesRegex(EvaluationError, 'agent random'):
      results.combine(self.dir)

  def test_flight_path_round_trips(self):
    result = fake_result(1)
    result.flight_path = {key: [1.0, 2.0] for key in balloon_evaluation.FLIGHT_PATH_KEYS}
    self.assertEqual(results.SeedResult.from_dict(
        json.loads(json.dumps(result.to_dict()))), result)

  def test_balloon_fields_keep_bles_names_and_order(self):
    self.assertEqual(list(fake_result(3).to_dict()), [
        'seed', 'cumulative_reward', 'time_within_radius', 'twr50', 'out_of_power',
        'envelope_burst', 'zeropressure', 'final_timestep'])
    self.assertEqual(fake_result(3, twr=0.25).twr50, 0.25)
    with self.assertRaisesRegex(EvaluationError, "no field 'twr60'.*twr50"):
      fake_result(3).value('twr60')

  def test_reads_a_results_file_written_before_the_environment_was_recorded(self):
    # Format 1 as the balloon-only evaluation wrote it: no env_id in the header.
    suite = suites.get_suite('micro_eval')
    old = {'format': results.FORMAT, 'agent': 'station_seeker', 'agent_info': {'kind':
           'baseline'}, 'suite': suite.to_dict(), 'results': [fake_result(0).to_dict()]}
    self.assertEqual(set(suite.to_dict()), {'name', 'episode_length', 'wind', 'num_seeds',
                                            'seeds'})
    results.write_json(os.path.join(self.dir, 'results.json'), old)
    header, loaded = results.load(self.dir)
    self.assertEqual(header['env_id'], balloon_evaluation.constants.BALLOON_ENV_ID)
    self.assertEqual(loaded, [fake_result(0)])


class OutputDirTest(unittest.TestCase):

  def setUp(self):
    self.dir = tempfile.mkdtemp()
    self.suite = suites.Suite('five', range(5))
    self.header = results.header('station_seeker', self.suite, 1, 0)
    results.write_shard(self.dir, self.header, [fake_result(0), fake_result(1)], False)
    self.path = os.path.join(self.dir, results.shard_filename(1, 0))

  def test_resumes_its_own_shard(self):
    done = results.check_output_dir(self.dir, self.header)
    self.assertEqual([r.seed for r in done], [0, 1])

  def test_refuses_another_agent_suite_or_split_and_keeps_the_files(self):
    before = _read(self.path)
    for header, pattern in (
        (results.header('random', self.suite, 1, 0), 'agent station_seeker'),
        (results.header('station_seeker', suites.Suite('six', range(6)), 1, 0), 'suite five'),
        (results.header('station_seeker', self.suite, 2, 0), 'split into 1 shards')):
      with self.assertRaisesRegex(EvaluationError, pattern + '.*--overwrite'):
        results.check_output_dir(self.dir, header)
    self.assertEqual(_read(self.path), before)

  def test_overwrite_removes_the_other_evaluation(self):
    other = results.header('random', self.suite, 1, 0)
    self.assertEqual(results.check_output_dir(self.dir, other, overwrite=True), [])
    self.assertFalse(os.path.exists(self.path))


if __name__ == '__main__':
  unittest.main()
