"""Tests for agents/evaluation/ray_runner.py: shards on a local one-CPU Ray instance (one
worker flies the shards in turn)."""

import sys
import tempfile
import unittest
from unittest import mock

from agents.evaluation import ray_runner, results, runner, suites
from agents.evaluation.errors import EvaluationError
from tests.helpers import ray_instance

try:
  import ray
except ImportError:
  ray = None


class MissingRayTest(unittest.TestCase):

  def test_the_error_says_what_to_install(self):
    with mock.patch.dict(sys.modules, {'ray': None}):
      with self.assertRaisesRegex(EvaluationError, r"pip install -e '\.\[ray\]'"):
        ray_runner.import_ray()


@unittest.skipIf(ray is None, "Ray is not installed (pip install -e '.[ray]')")
class LocalRayTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    ray_instance.start()

  @classmethod
  def tearDownClass(cls):
    ray.shutdown()

  def test_tiny_eval_on_ray_equals_the_local_run_seed_by_seed(self):
    # tiny_eval's ten seeds, in episodes of 3 hours (60 steps) instead of 48 hours: the
    # shards' results, not the length of their flights, are what Ray must get right.
    suite = suites.get_suite('tiny_eval:wind=procedural').replace(episode_length=60)
    output_dir = tempfile.mkdtemp()
    on_ray = ray_runner.run_shards('station_seeker', suite, output_dir, num_shards=2,
                                   progress=False)
    local = []
    for index in range(2):
      local.extend(runner.fly_shard('station_seeker', suite, 2, index, workers=0)[1])
    self.assertEqual([r.seed for r in on_ray], list(suite.seeds))
    self.assertEqual(on_ray, sorted(local, key=lambda r: r.seed))
    _, combined = results.combine(output_dir)
    self.assertEqual(combined, on_ray)


if __name__ == '__main__':
  unittest.main()
