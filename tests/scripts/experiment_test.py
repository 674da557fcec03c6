"""Tests of agents/scripts/experiment.py: commands on hand-made experiments, and bad input."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from agents import configs
from agents.experiment import ConfigExperiment
from agents.scripts import experiment
from tests.helpers import tiny_experiment


def _main(argv):
  """Runs main(argv); returns (exit code, stdout, stderr)."""
  stdout, stderr = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
    try:
      code = experiment.main(argv)
    except SystemExit as exit_:
      code = exit_.code
  return code, stdout.getvalue(), stderr.getvalue()


def _fake_experiment(output_dir, name, scores):
  """A saved experiment whose fits 'logged' the given final scores (no training)."""
  made = ConfigExperiment('pendulum', n_fit=len(scores), output_dir=output_dir,
                                   seed=0, overrides=tiny_experiment.TINY_OVERRIDES, name=name,
                                   quiet=True)
  for index, score in enumerate(scores):
    run_dir = made.run_dir(index)
    os.makedirs(run_dir)
    with open(os.path.join(run_dir, 'metrics.jsonl'), 'w', encoding='utf-8') as file:
      for step in (100, 200):
        file.write(json.dumps(dict(step=step, phase='train', mean_score=score * step / 200))
                   + '\n')
  made.save()
  return made.directory


class ExperimentScriptTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.output_dir = tempfile.mkdtemp()
    cls.a = _fake_experiment(cls.output_dir, 'kl', [-150.0, -160.0, -145.0, -155.0])
    cls.b = _fake_experiment(cls.output_dir, 'clipped', [-210.0, -190.0, -205.0, -200.0])

  def test_plot(self):
    path = os.path.join(self.output_dir, 'curves.png')
    code, out, _ = _main(['plot', self.a, self.b, '--output', path])
    self.assertEqual(code, 0)
    self.assertTrue(os.path.getsize(path) > 0)
    self.assertIn('final mean_score', out)
    self.assertIn('-145', out)

  def test_plot_draws_reference_lines(self):
    figure = ConfigExperiment.load(self.a).plot_writer_data(
        references={'station seeker': -170.0}, path=os.path.join(self.output_dir, 'ref.png'))
    labels = [line.get_label() for line in figure.axes[0].get_lines()]
    self.assertIn('station seeker (-170)', labels)
    path = os.path.join(self.output_dir, 'with-reference.png')
    code, _, _ = _main(['plot', self.a, '--output', path, '--reference', 'seeker=-170'])
    self.assertEqual(code, 0)

  def test_plot_labels_the_curves(self):
    figure = ConfigExperiment.load(self.a).plot_writer_data(
        managers=[ConfigExperiment.load(self.b)], labels=['KL penalty', 'clipped'],
        path=os.path.join(self.output_dir, 'labelled.png'))
    labels = [line.get_label() for line in figure.axes[0].get_lines()]
    self.assertEqual(labels, ['KL penalty (4 fits)', 'clipped (4 fits)'])
    with self.assertRaisesRegex(ValueError, '1 curve labels for 2 experiments'):
      ConfigExperiment.load(self.a).plot_writer_data(
          managers=[ConfigExperiment.load(self.b)], labels=['KL penalty'])
    path = os.path.join(self.output_dir, 'labelled-cli.png')
    code, _, _ = _main(['plot', self.a, self.b, '--output', path, '--label', 'KL penalty',
                        '--label', 'clipped'])
    self.assertEqual(code, 0)
    self.assertTrue(os.path.getsize(path) > 0)

  def test_compare(self):
    code, out, _ = _main(['compare', self.a, self.b, '--method', 'welch'])
    self.assertEqual(code, 0)
    self.assertIn('iqm', out)
    self.assertIn('larger', out)

  def test_bad_input_is_one_line_and_exit_2(self):
    empty = tempfile.mkdtemp()
    cases = [
        (['fit', '--config=pendulum', '--n_fit=0', f'--output_dir={empty}'], 'n_fit must be'),
        (['fit', '--config=pendulm', f'--output_dir={empty}'], "Unknown config 'pendulm'"),
        (['fit', '--config=pendulum', '--set', 'algorithm.learning_rat=1e-3',
          f'--output_dir={empty}'], 'learning_rat'),
        (['fit', '--config=pendulum', '--set', 'learning_rate', f'--output_dir={empty}'],
         'must look like'),
        (['plot', empty], 'is not an experiment'),
        (['plot', self.a, '--reference', 'seeker=high'], 'LABEL=NUMBER'),
        (['plot', self.a, self.b, '--label', 'only one'], '2 directories but 1 --label'),
        (['compare', self.a, '--method', 'bayes'], 'invalid choice'),
        (['compare', self.a], 'at least two experiments'),
        # Without agents.evaluation: not available; with it: no fit has finished.
        (['evaluate', self.a], None),
        (['optimize', '--config=pendulum', '--sampler=bayes', f'--output_dir={empty}'],
         'sampler must be one of'),
        (['frobnicate'], 'invalid choice'),
    ]
    for argv, message in cases:
      with self.subTest(argv=argv):
        code, _, err = _main(argv)
        self.assertEqual(code, 2)
        if message:
          self.assertIn(message, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
    self.assertEqual(os.listdir(empty), [])  # Nothing written by refused commands.

  def test_overrides_are_parsed_as_train_parses_them(self):
    self.assertIs(experiment.parse_override, configs.parse_override)
    self.assertEqual(experiment.parse_override('network.policy_layers=[8, 8]'),
                     ('network.policy_layers', [8, 8]))

if __name__ == '__main__':
  unittest.main()
