"""Tests of agents.evaluation.fit_groups and `evaluate groups`: groups of fits paired by seed."""

import contextlib
import io
import os
import tempfile
import unittest

from agents.evaluation import EvaluationError, fit_groups
from agents.scripts import evaluate


class FitGroupsTableTest(unittest.TestCase):
  """Members given as `TABLE.csv:COLUMN` pair with the table's seeds."""

  def setUp(self):
    self.dir = tempfile.mkdtemp()
    self.table = os.path.join(self.dir, 'fits.csv')
    with open(self.table, 'w') as table:
      table.write('seed,fit0,fit1,seeker,blank\n0,0.5,0.7,0.4,\n1,0.1,0.3,0.2,0.1\n'
                  '2,0.9,0.9,0.6,0.2\n')

  def column(self, name):
    return f'{self.table}:{name}'

  def test_a_group_of_columns_is_the_mean_of_its_fits_per_seed(self):
    outcome = fit_groups.compare_groups({'fits': [self.column('fit0'), self.column('fit1')],
                                         'seeker': [self.column('seeker')]})
    fits, seeker = outcome['groups']
    self.assertEqual((fits['group'], fits['fits'], fits['seeds']), ('fits', 2, 3))
    self.assertAlmostEqual(fits['mean'], 0.5667, places=4)
    self.assertAlmostEqual(seeker['mean'], 0.4)
    # Per seed: 0.6 - 0.4, 0.2 - 0.2, 0.9 - 0.6.
    pair, = outcome['pairs']
    self.assertEqual((pair['x'], pair['y'], pair['num_seeds']), ('fits', 'seeker', 3))
    self.assertAlmostEqual(pair['mean_difference'], 0.1667, places=4)
    self.assertEqual((pair['wins'], pair['ties'], pair['losses']), (2, 1, 0))

  def test_groups_pair_on_the_seeds_they_share(self):
    other = os.path.join(self.dir, 'other.csv')
    with open(other, 'w') as table:
      table.write('seed,fit\n1,0.0\n2,0.5\n7,1.0\n')
    outcome = fit_groups.compare_groups({'fits': [self.column('fit0')], 'other': [f'{other}:fit']})
    pair, = outcome['pairs']
    self.assertEqual(pair['num_seeds'], 2)  # Seeds 1 and 2: 0.1 - 0.0, 0.9 - 0.5.
    self.assertAlmostEqual(pair['mean_difference'], 0.25)

  def test_a_missing_column_is_named_with_the_columns_there_are(self):
    with self.assertRaises(EvaluationError) as caught:
      fit_groups.compare_groups({'fits': [self.column('fit9')], 'seeker': [self.column('seeker')]})
    self.assertIn("'fit9'", str(caught.exception))
    self.assertIn("'seeker'", str(caught.exception))
    self.assertIn('group fits', str(caught.exception))

  def test_a_value_that_is_not_a_number_names_its_line(self):
    with self.assertRaisesRegex(EvaluationError, 'line 2'):
      fit_groups.compare_groups({'blank': [self.column('blank')],
                                 'seeker': [self.column('seeker')]})

  def test_one_group_is_refused(self):
    with self.assertRaisesRegex(EvaluationError, 'at least two groups'):
      fit_groups.compare_groups({'fits': [self.column('fit0')]})


class GroupsCommandTest(unittest.TestCase):
  """`python -m agents.scripts.evaluate groups`."""

  def setUp(self):
    self.dir = tempfile.mkdtemp()
    self.table = os.path.join(self.dir, 'fits.csv')
    with open(self.table, 'w') as table:
      table.write('seed,fit0,seeker\n0,0.5,0.4\n1,0.1,0.2\n2,0.9,0.6\n')

  def run_main(self, *argv):
    output, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(errors):
      code = evaluate.main(['groups', *argv])
    return code, output.getvalue(), errors.getvalue()

  def test_prints_each_group_and_the_difference(self):
    code, output, _ = self.run_main(f'--group=fits={self.table}:fit0',
                                    f'--group=seeker={self.table}:seeker')
    self.assertEqual(code, 0)
    self.assertIn('fits: 1 fits, 3 seeds, mean 0.5000', output)
    self.assertIn('fits - seeker: +0.1000', output)

  def test_a_missing_table_is_one_line_and_exit_code_2(self):
    code, _, errors = self.run_main(f'--group=fits={self.dir}/gone.csv:fit0',
                                    f'--group=seeker={self.table}:seeker')
    self.assertEqual(code, 2)
    self.assertIn('gone.csv', errors)
    self.assertEqual(len(errors.strip().splitlines()), 1)

  def test_a_group_without_members_is_refused(self):
    code, _, errors = self.run_main('--group=fits', f'--group=seeker={self.table}:seeker')
    self.assertEqual(code, 2)
    self.assertIn("'fits'", errors)


if __name__ == '__main__':
  unittest.main()
