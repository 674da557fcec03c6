"""Tests of tests/run_all.py: which modules it finds, how it shards and schedules them."""

import os
import tempfile
import unittest

from tests import run_all


def _sample_cases():
  """Three test classes, made here so that discovery does not run them as tests."""

  class First(unittest.TestCase):

    def test_a(self):
      pass

    def test_b(self):
      pass

  class Second(unittest.TestCase):

    def test_c(self):
      pass

  class Third(unittest.TestCase):

    @unittest.skip('to count a skip')
    def test_d(self):
      pass

    def test_e(self):
      self.fail('to count a failure')

  return First, Second, Third


def _touch(*parts):
  path = os.path.join(*parts)
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, 'w'):
    pass


class RunAllTest(unittest.TestCase):

  def test_finds_test_files_in_packages_only(self):
    top = tempfile.mkdtemp()
    root = os.path.join(top, 'tests')
    _touch(root, '__init__.py')
    _touch(root, 'a_test.py')
    _touch(root, 'helper.py')
    _touch(root, 'sub', '__init__.py')
    _touch(root, 'sub', 'b_test.py')
    _touch(root, 'data', 'c_test.py')  # no __init__.py: not a package, as in discovery
    self.assertEqual(run_all.test_modules(root, top), ['tests.a_test', 'tests.sub.b_test'])

  def test_finds_this_module(self):
    self.assertIn(__name__, run_all.test_modules())

  def test_slow_modules_are_split_and_the_longest_units_go_first(self):
    units = run_all._units(['fast', 'slow', 'new'], {'fast': 2.0, 'slow': 40.0},
                           shard_seconds=15.0)
    self.assertEqual([unit[:3] for unit in units],
                     [('new', 0, 1), ('slow', 0, 3), ('slow', 1, 3), ('slow', 2, 3),
                      ('fast', 0, 1)])

  def test_a_module_that_needs_a_fresh_process_stays_whole(self):
    fresh = run_all.FRESH_PROCESS_MODULES[0]
    units = run_all._units([fresh, 'slow'], {fresh: 150.0, 'slow': 40.0}, shard_seconds=15.0)
    self.assertEqual([unit[:3] for unit in units if unit[0] == fresh], [(fresh, 0, 1)])

  def test_shards_are_whole_classes_and_cover_the_suite_once(self):
    loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromTestCase(case) for case in _sample_cases())
    shards = [[test.id() for test in run_all._shard(suite, shard, 2)] for shard in range(2)]
    classes = [[name.split('.')[-2] for name in shard] for shard in shards]
    self.assertEqual(classes, [['First', 'First', 'Third', 'Third'], ['Second']])

  def test_outcome_counts_and_reports(self):
    suite = unittest.TestLoader().loadTestsFromTestCase(_sample_cases()[2])
    with open(os.devnull, 'w') as devnull:
      runner = unittest.TextTestRunner(stream=devnull, verbosity=0,
                                       resultclass=run_all._TimedResult)
      outcome = run_all._outcome(runner.run(suite), 0.0)
    self.assertEqual((outcome['passed'], outcome['failed'], outcome['skipped']), (0, 1, 1))
    self.assertIn('to count a failure', outcome['reports'][0])
    self.assertEqual(len(outcome['test_seconds']), 2)
    tally = run_all._Tally()
    tally.add(outcome)
    self.assertEqual(tally.line(), '0 passed, 1 failed, 1 skipped')


if __name__ == '__main__':
  unittest.main()
