"""A fit's score has one definition: the last mean score its metrics.jsonl holds, which
the fit table, `final_scores`, `compare` and `plot` all read (issue 26, defect 12)."""

import tempfile
import unittest

import numpy as np

from agents.experiment import ConfigExperiment, comparison
from tests.helpers import tiny_experiment

# A budget below the log interval: before, such a fit logged no row at all.
_SHORT = dict(tiny_experiment.LINEAR_OVERRIDES,
              **{'loop.log_every': 10_240, 'loop.checkpoint_every': 10_240})


def _experiment(output_dir, name, budget, n_fit):
  return ConfigExperiment('cartpole', n_fit=n_fit, fit_budget=budget, output_dir=output_dir,
                                   parallelization='inline', overrides=_SHORT, name=name,
                                   seed=7, quiet=True)


class FitScoresTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    # Two experiments of short fits, which both tests read: two fits in the first (a
    # confidence band to draw), one in the second (a second curve on the same axes).
    cls.output_dir = tempfile.mkdtemp()
    cls.experiments = [_experiment(cls.output_dir, name, 256, n_fit)
                       for name, n_fit in (('a', 2), ('b', 1))]
    cls.tables = [experiment.fit() for experiment in cls.experiments]

  def test_the_table_final_scores_compare_and_plot_agree_on_a_short_fit(self):
    output_dir, experiments = self.output_dir, self.experiments
    for experiment, table in zip(experiments, self.tables):
      final = experiment.final_scores()
      self.assertTrue(np.all(np.isfinite(final)), final)
      np.testing.assert_allclose(table['mean_score'].to_numpy(dtype=float), final)
    scores = comparison.scores_of(experiments)
    for experiment in experiments:
      np.testing.assert_allclose(scores[experiment.name], experiment.final_scores())
    figure = experiments[0].plot_writer_data('mean_score', managers=experiments[1:],
                                             path=f'{output_dir}/scores.png')
    self.assertIsNotNone(figure)

  def test_a_value_no_fit_logged_is_one_clear_error(self):
    with self.assertRaisesRegex(ValueError, "No experiment logged 'twr50' in phase 'train'"):
      self.experiments[0].plot_writer_data('twr50')


if __name__ == '__main__':
  unittest.main()
