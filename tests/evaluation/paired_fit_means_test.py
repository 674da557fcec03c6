"""Tests of bench.paired_fit_means: groups of fits paired by seed, from per-seed tables."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from bench import paired_fit_means


class PairedFitMeansTableTest(unittest.TestCase):
  """Members given as `TABLE.csv:COLUMN` pair with the table's seeds."""

  def setUp(self):
    self.dir = tempfile.mkdtemp()
    self.table = os.path.join(self.dir, 'round.csv')
    with open(self.table, 'w') as table:
      table.write('seed,fit0,fit1,seeker,blank\n0,0.5,0.7,0.4,\n1,0.1,0.3,0.2,0.1\n'
                  '2,0.9,0.9,0.6,0.2\n')

  def run_main(self, *groups):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
      paired_fit_means.main([f'--group={group}' for group in groups])
    return [json.loads(line) for line in output.getvalue().splitlines()]

  def test_a_group_of_columns_is_the_mean_of_its_fits_per_seed(self):
    lines = self.run_main(f'fits={self.table}:fit0,{self.table}:fit1',
                          f'seeker={self.table}:seeker')
    self.assertEqual(lines[0], {'group': 'fits', 'fits': 2, 'mean': 0.5667})
    self.assertEqual(lines[1], {'group': 'seeker', 'fits': 1, 'mean': 0.4})
    # Per seed: 0.6 - 0.4, 0.2 - 0.2, 0.9 - 0.6.
    self.assertEqual(lines[2]['comparison'], 'fits - seeker')
    self.assertEqual(lines[2]['seeds'], 3)
    self.assertAlmostEqual(lines[2]['mean_difference'], 0.1667, places=4)

  def test_a_missing_column_is_named_with_the_columns_there_are(self):
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), self.assertRaises(SystemExit) as caught:
      self.run_main(f'fits={self.table}:fit9', f'seeker={self.table}:seeker')
    self.assertEqual(caught.exception.code, 2)
    self.assertIn("'fit9'", errors.getvalue())
    self.assertIn("'seeker'", errors.getvalue())

  def test_a_value_that_is_not_a_number_names_its_line(self):
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), self.assertRaises(SystemExit):
      self.run_main(f'blank={self.table}:blank', f'seeker={self.table}:seeker')
    self.assertIn('line 2', errors.getvalue())

  def test_a_missing_table_is_named(self):
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), self.assertRaises(SystemExit):
      self.run_main(f'fits={self.dir}/gone.csv:fit0', f'seeker={self.table}:seeker')
    self.assertIn('gone.csv', errors.getvalue())


if __name__ == '__main__':
  unittest.main()
