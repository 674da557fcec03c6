"""A tracker that cannot start costs one line and nothing else (agents/run/tracking.py).

MLflow and W&B are tracked together in one tiny CartPole run per fault: both servers
unreachable, then both packages missing. Each tracker says so in one line, and the run
trains and writes its own logs (metrics.jsonl, TensorBoard events, the policy) as it would
untracked.
"""

import contextlib
import glob
import importlib.util
import os
import sys
import tempfile
import unittest
from unittest import mock

from agents.run import metrics_writer, run_manifest
from agents.training import trainer
from tests.helpers import tiny_experiment, tiny_run

_HAS_TRACKERS = all(importlib.util.find_spec(name) for name in ('mlflow', 'wandb'))
_ABSENT = object()


@contextlib.contextmanager
def _not_installed(*names):
  """Imports of the packages `names` fail inside. Only their own `sys.modules` entries are
  put back after (`mock.patch.dict` of `sys.modules` would also drop every module first
  imported inside, TensorFlow's among them, which cannot be imported twice)."""
  saved = {name: sys.modules.get(name, _ABSENT) for name in names}
  sys.modules.update(dict.fromkeys(names))
  try:
    yield
  finally:
    for name, module in saved.items():
      if module is _ABSENT:
        del sys.modules[name]
      else:
        sys.modules[name] = module


class TrackerFailuresTest(unittest.TestCase):

  def _train(self, environ, missing=(), export_policy=True):
    """A tracked tiny run (the linear softmax policy: the trackers are checked, not what
    learns) under `environ`, the packages `missing` not installed; checks that
    its local logs are whole and returns (run_dir, the tracking warnings)."""
    run_dir = os.path.join(tempfile.mkdtemp(), 'run')
    with _not_installed(*missing), mock.patch.dict(os.environ, environ), \
        self.assertLogs('agents.run.tracking', 'WARNING') as logs:
      config = tiny_run.tiny_config(steps=64, track=['mlflow', 'wandb'],
                                    **{'algorithm.name': tiny_experiment.LINEAR_SOFTMAX})
      result = trainer.train(config, run_dir, quiet=True, export_policy=export_policy)
    self.assertEqual(result['step'], 64)
    rows = metrics_writer.read_metrics(os.path.join(run_dir, 'metrics.jsonl'))
    self.assertEqual([row['step'] for row in rows if row['phase'] == 'train'], [64])
    self.assertTrue(glob.glob(os.path.join(run_dir, 'train', 'events.out.tfevents*')))
    self.assertEqual(run_manifest.read(run_dir)['trackers'], {})
    return run_dir, logs.output

  @unittest.skipUnless(_HAS_TRACKERS, "needs the 'mlflow' and 'wandb' extras")
  def test_unreachable_servers_are_one_line_each_and_the_local_logs_are_whole(self):
    run_dir, lines = self._train({
        'MLFLOW_TRACKING_URI': 'http://127.0.0.1:1', 'MLFLOW_ALLOW_FILE_STORE': 'true',
        'WANDB_MODE': 'online', 'WANDB_BASE_URL': 'http://127.0.0.1:1'})
    self.assertEqual(len(lines), 2, lines)
    text = '\n'.join(lines)
    self.assertIn("Tracker 'mlflow' cannot start (cannot reach the MLflow tracking server at "
                  'http://127.0.0.1:1: Connection refused)', text)
    self.assertIn('cannot reach the W&B server at http://127.0.0.1:1: Connection refused',
                  text)
    self.assertTrue(os.path.exists(os.path.join(run_dir, 'policy', 'saved_model.pb')))

  def test_missing_packages_are_one_line_each_and_the_local_logs_are_whole(self):
    run_dir, lines = self._train({'WANDB_MODE': 'offline', 'WANDB_SILENT': 'true'},
                                 missing=('mlflow', 'wandb'), export_policy=False)
    self.assertEqual(len(lines), 2, lines)
    text = '\n'.join(lines)
    self.assertIn("mlflow is not installed: pip install 'batchppo-agents[mlflow]'", text)
    self.assertIn("wandb is not installed: pip install 'batchppo-agents[wandb]'", text)
    self.assertFalse(os.path.exists(os.path.join(run_dir, 'wandb')))


if __name__ == '__main__':
  unittest.main()
