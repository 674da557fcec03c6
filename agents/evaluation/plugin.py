"""Evaluation's registrations in the core's extension points (`agents.plugins`).

setup.py declares `register` as an `agents.plugins` entry point, so training flies
`loop.eval_suite` through `plugins.TRAINING_EVALUATORS['suite']` without the core
importing this layer.
"""

from agents import plugins


def register():
  """Registers the suite flown during training; calling it again changes nothing."""
  plugins.TRAINING_EVALUATORS.register(
      'suite', 'agents.evaluation.during_training:SuiteEvaluator')
