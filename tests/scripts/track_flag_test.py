"""The `--track` flag of agents.scripts.train and of `experiment fit` sets `loop.track`."""

import contextlib
import io
import os
import tempfile
import unittest

from agents.scripts import experiment, train


class TrackFlagTest(unittest.TestCase):

  def test_train_sets_the_config_key(self):
    logdir = tempfile.mkdtemp()
    args = train.parse_args(['--logdir', logdir, '--config', 'cartpole',
                             '--track=mlflow,wandb'])
    config, _ = train.resolve_run(args)
    self.assertEqual(config['loop']['track'], ['mlflow', 'wandb'])
    config, _ = train.resolve_run(train.parse_args(['--logdir', logdir, '--config',
                                                    'cartpole']))
    self.assertEqual(config['loop']['track'], [])

  def test_an_unknown_tracker_is_one_line_exit_2_and_writes_nothing(self):
    logdir = tempfile.mkdtemp()
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
      code = train.main(['--logdir', logdir, '--config', 'cartpole', '--track=mlfow'])
    self.assertEqual(code, 2)
    self.assertEqual(len(stderr.getvalue().strip().splitlines()), 1, stderr.getvalue())
    self.assertIn("'loop.track' must be a registered experiment tracker", stderr.getvalue())
    self.assertIn("Did you mean 'mlflow'?", stderr.getvalue())
    self.assertEqual(os.listdir(logdir), [])

  def test_experiment_fit_sets_the_key_of_every_fit(self):
    output_dir = tempfile.mkdtemp()
    args = experiment.parse_args(['fit', '--config=pendulum', f'--output_dir={output_dir}',
                                  '--n_fit=2', '--track=mlflow'])
    manager = experiment._manager(args)
    self.assertEqual([manager.fit_config(index)['loop']['track'] for index in (0, 1)],
                     [['mlflow'], ['mlflow']])
    args = experiment.parse_args(['fit', '--config=pendulum', f'--output_dir={output_dir}'])
    self.assertEqual(experiment._manager(args).config['loop']['track'], [])


if __name__ == '__main__':
  unittest.main()
