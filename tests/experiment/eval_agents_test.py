"""Tests of ExperimentManager.eval_agents through the evaluation API (skipped without it)."""

import importlib.util
import os
import tempfile
import unittest

from agents.evaluation import results
from agents.experiment import ConfigExperiment, ExperimentError
from tests.helpers import tiny_experiment

_HAS_EVALUATION = importlib.util.find_spec('agents.evaluation') is not None

# Two in-process balloons and tiny CartPole fits by the worked example of a user's
# algorithm (a linear softmax policy, greedy when evaluated): policies to fly, trained in
# a fraction of PPO's time, not good ones.
# A short suite for the balloon: micro_eval's one seed, 32 of its 960 steps.
_SHORT_BALLOON_SUITE = 'custom:seeds=0,episode_length=32,wind=procedural'
_TINY_CARTPOLE = tiny_experiment.LINEAR_OVERRIDES
_TINY_BALLOON = dict(_TINY_CARTPOLE, **{
    'environment.processes': False,
    'environment.kwargs': {'progress_reward': 0.2, 'wind': 'procedural'}})


def _cartpole_experiment(n_fit=1, fit_budget=64, **overrides):
  """A CartPole experiment of tiny fits, run in this process; overrides by dotted key."""
  return ConfigExperiment(
      'cartpole', n_fit=n_fit, fit_budget=fit_budget, output_dir=tempfile.mkdtemp(), seed=0,
      overrides=dict(_TINY_CARTPOLE, **overrides), parallelization='inline', quiet=True)


class EvalAgentsTest(unittest.TestCase):

  @unittest.skipIf(_HAS_EVALUATION, 'agents.evaluation is present')
  def test_missing_evaluation_api_is_named(self):
    experiment = ConfigExperiment('pendulum', n_fit=1, output_dir=tempfile.mkdtemp(),
                                           seed=0, quiet=True)
    with self.assertRaisesRegex(NotImplementedError, 'agents.evaluation'):
      experiment.eval_agents('micro_eval')

  @unittest.skipUnless(_HAS_EVALUATION, 'agents.evaluation (issue 11) is not in this tree')
  def test_a_balloon_fit_flies_the_suite_and_scores_twr50(self):
    # One balloon fit: that every fit of an experiment flies the suite is checked on the
    # two fits of PlainCartPoleTest (a second balloon fit here would check nothing more).
    experiment = ConfigExperiment(
        'balloon', n_fit=1, fit_budget=64, output_dir=tempfile.mkdtemp(), seed=0,
        overrides=_TINY_BALLOON, parallelization='inline', quiet=True)
    with self.assertRaisesRegex(ExperimentError, 'no fit has finished'):
      experiment.eval_agents(_SHORT_BALLOON_SUITE)
    experiment.fit()
    frame = experiment.eval_agents(_SHORT_BALLOON_SUITE, workers=0)
    self.assertEqual(list(frame['fit']), [0])
    self.assertEqual(list(frame['seed']), [0])
    self.assertTrue(((frame['twr50'] >= 0) & (frame['twr50'] <= 1)).all())
    self.assertEqual(experiment.default_objective().__name__,
                     'twr50_on_tiny_eval')
    # (Trained further, the fits fly their newest checkpoint: checked on CartPole by
    # test_results_of_an_earlier_checkpoint_go_when_a_phase_flew_the_newest.)

  @unittest.skipUnless(_HAS_EVALUATION, 'agents.evaluation (issue 11) is not in this tree')
  def test_results_of_an_earlier_checkpoint_go_when_a_phase_flew_the_newest(self):
    from agents.evaluation import policies
    suite, other = 'custom:seeds=0-1,episode_length=30', 'custom:seeds=2,episode_length=30'
    experiment = _cartpole_experiment(**{
        'loop.eval_every': 128, 'loop.eval_steps': 16, 'loop.eval_suite': suite})
    experiment.fit()
    run_dir = experiment.run_dir(0)
    eval_dir, other_dir = (os.path.join(run_dir, f'eval-{name}') for name in (suite, other))
    experiment.eval_agents(suite, workers=0)  # no phase has flown ckpt-64: flown here
    self.assertEqual(results.run_checkpoints(eval_dir, run_dir), {'ckpt-64'})
    experiment.eval_agents(other, workers=0)  # a suite no phase flies
    self.assertEqual(results.run_checkpoints(other_dir, run_dir), {'ckpt-64'})
    experiment.fit(128)  # its phase at 128 flies the newest checkpoint
    frame = experiment.eval_agents(suite, workers=0)
    self.assertEqual(list(frame['seed']), [0, 1])
    self.assertFalse(os.path.exists(eval_dir))
    # Trained further (as a search's next chunk), a fit flies its newest checkpoint on a
    # suite no phase flew, whose results replace the earlier checkpoint's.
    self.assertEqual(list(experiment.eval_agents(other, workers=0)['seed']), [2])
    newest = policies.describe_agent(f'run:{run_dir}')['checkpoint']
    self.assertNotEqual(newest, 'ckpt-64')
    self.assertEqual(results.run_checkpoints(other_dir, run_dir), {newest})


# The suite of the training evaluation phases, and another one.
_PHASE_SUITE = 'custom:seeds=0-3,episode_length=40'
_OTHER_SUITE = 'custom:seeds=0-1,episode_length=30'
_PHASE_OVERRIDES = {
    'loop.eval_every': 64, 'loop.eval_steps': 16, 'loop.eval_suite': _PHASE_SUITE,
    'loop.select_suite': 'custom:seeds=100-103,episode_length=40'}


@unittest.skipUnless(_HAS_EVALUATION, 'agents.evaluation (issue 11) is not in this tree')
class TrainingPhasesTest(unittest.TestCase):
  """A fit whose training flew `_PHASE_SUITE` every 64 steps (two phases) and chose its
  best weights on a selection suite, fitted once for the class's tests (which only read
  it, each on its own suite or weights)."""

  @classmethod
  def setUpClass(cls):
    cls.experiment = _cartpole_experiment(fit_budget=128, **_PHASE_OVERRIDES)
    cls.experiment.fit()
    cls.run_dir = cls.experiment.run_dir(0)

  def test_weights_other_than_newest_or_best_are_refused_before_any_fit(self):
    unfitted = _cartpole_experiment(fit_budget=128, **_PHASE_OVERRIDES)
    with self.assertRaisesRegex(ExperimentError, "weights must be 'newest' or 'best'"):
      unfitted.eval_agents(_PHASE_SUITE, weights='last')

  def test_the_last_training_phase_on_the_suite_is_not_flown_again(self):
    from agents import evaluation
    experiment, run_dir, suite = self.experiment, self.run_dir, _PHASE_SUITE
    frame = experiment.eval_agents(suite, workers=0)
    self.assertFalse(os.path.exists(os.path.join(run_dir, f'eval-{suite}')))
    self.assertEqual(list(frame['seed']), [0, 1, 2, 3])
    # The phase flew the weights of the newest checkpoint: flying it gives the same flights.
    flown_dir = os.path.join(tempfile.mkdtemp(), 'flown')
    evaluation.evaluate(f'run:{run_dir}', suite, flown_dir, workers=0, progress=False,
                        artifacts=False)
    _, flown = evaluation.load(flown_dir)
    for column in ('cumulative_reward', 'final_timestep'):
      self.assertEqual(list(frame[column]), [getattr(result, column) for result in flown])
    # Another suite is flown.
    other = _OTHER_SUITE
    self.assertEqual(list(experiment.eval_agents(other, workers=0)['seed']), [0, 1])
    self.assertTrue(os.path.exists(os.path.join(run_dir, f'eval-{other}')))

  def test_best_weights_are_those_that_scored_best_on_the_selection_suite(self):
    from agents import evaluation
    from agents.run import export
    experiment, run_dir = self.experiment, self.run_dir
    suite, other = _PHASE_SUITE, _OTHER_SUITE
    step = export.BestPolicy.read(run_dir)['step']
    # The training phase of the chosen step flew these weights on `suite`: its rows.
    frame = experiment.eval_agents(suite, workers=0, weights='best')
    _, phase = evaluation.load(os.path.join(run_dir, 'eval_suite', f'step-{step}'))
    self.assertEqual(list(frame['cumulative_reward']),
                     [result.cumulative_reward for result in phase])
    # Another suite flies best_policy/ into a folder named by the choice's step; a folder
    # of an earlier choice goes.
    earlier = os.path.join(run_dir, f'eval-{other}-best-step-1')
    os.makedirs(earlier)
    frame = experiment.eval_agents(other, workers=0, weights='best')
    self.assertFalse(os.path.exists(earlier))
    flown_dir = os.path.join(tempfile.mkdtemp(), 'flown')
    evaluation.evaluate(f"savedmodel:{os.path.join(run_dir, 'best_policy')}", other,
                        flown_dir, workers=0, progress=False, artifacts=False)
    _, flown = evaluation.load(flown_dir)
    self.assertEqual(list(frame['cumulative_reward']),
                     [result.cumulative_reward for result in flown])
    self.assertTrue(os.path.isdir(os.path.join(run_dir, f'eval-{other}-best-step-{step}')))



@unittest.skipUnless(_HAS_EVALUATION, 'agents.evaluation (issue 11) is not in this tree')
class PlainCartPoleTest(unittest.TestCase):
  """Two fits trained without evaluation options, fitted once for the class's tests (the
  module's check that every fit of an experiment flies the suite)."""

  @classmethod
  def setUpClass(cls):
    cls.experiment = _cartpole_experiment(n_fit=2)
    cls.experiment.fit()

  def test_a_cartpole_experiment_flies_the_suite(self):
    frame = self.experiment.eval_agents('custom:seeds=0-2,episode_length=50', workers=0)
    self.assertEqual(list(frame['fit']), [0, 0, 0, 1, 1, 1])
    self.assertEqual(list(frame['seed']), [0, 1, 2] * 2)
    # CartPole pays 1 per step: the return is the episode's length.
    self.assertEqual(list(frame['cumulative_reward']), list(frame['final_timestep'].astype(float)))
    self.assertTrue((frame['final_timestep'] <= 50).all())
    self.assertNotIn('twr50', frame)

  def test_best_weights_of_a_fit_trained_without_a_selection_suite_are_refused(self):
    with self.assertRaisesRegex(ExperimentError,
                                'fit 0 has no best_policy/ .*without loop.select_suite'):
      self.experiment.eval_agents('custom:seeds=0-1,episode_length=30', workers=0,
                                  weights='best')


if __name__ == '__main__':
  unittest.main()
