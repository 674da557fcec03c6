"""A write that fails for lack of space (simulated by a file-size limit) leaves the
previous checkpoint or results intact and says what failed.

The limit is this process's soft RLIMIT_FSIZE, lowered for the failing write only and
put back after it; with SIGXFSZ ignored, a write past it fails with EFBIG ("File too
large"), as a write to a full disk fails with ENOSPC.
"""

import contextlib
import json
import os
import resource
import signal
import tempfile
import unittest

from agents import configs
from agents.evaluation import errors, results
from agents.scripts import train as train_script
from agents.training import trainer
from tests.helpers import ballast_agent, commands


@contextlib.contextmanager
def _file_size_limit(limit):
  """Within the block, this process's files may not grow beyond `limit` bytes."""
  soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
  previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death
  resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
  try:
    yield
  finally:
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    signal.signal(signal.SIGXFSZ, previous)


# A CartPole run whose checkpoint (about 1 MB: the ballast agent's state) is larger than
# anything else the run writes; what is trained does not matter here.
_OVERRIDES = {
    'environment.num_agents': 2, 'algorithm.name': ballast_agent.ALGORITHM,
    'loop.checkpoint_every': 64, 'loop.log_every': 64,
}


def _train(run_dir, steps):
  """Trains (or resumes) that run to `steps` through the API, without exporting it."""
  config = configs.resolve('cartpole', dict(_OVERRIDES, **{'loop.steps': steps}))
  return trainer.train(config, run_dir, quiet=True, export_policy=False)


def _train_command(test, logdir, steps):
  """Runs `agents.scripts.train` on that run in this process; returns its exit code and
  stderr."""
  flags = [flag for key, value in _OVERRIDES.items() for flag in ('--set', f'{key}={value}')]
  return commands.run_main(test, train_script.main, [
      '--config=cartpole', '--logdir', logdir, '--timestamp=t', '--quiet', *flags,
      '--set', f'loop.steps={steps}'])


class DiskFullTest(unittest.TestCase):

  def test_a_checkpoint_that_cannot_be_written_keeps_the_one_before(self):
    logdir = tempfile.mkdtemp()
    run_dir = os.path.join(logdir, 't-cartpole')
    self.assertEqual(_train(run_dir, 64)['step'], 64)
    directory = os.path.join(run_dir, 'checkpoints')
    before = sorted(os.listdir(directory))
    data = os.path.getsize(os.path.join(directory, 'ckpt-64.data-00000-of-00001'))
    # The command resumes the run; its next checkpoint is as large as the first: it cannot
    # be written.
    with _file_size_limit(data // 2):
      code, stderr = _train_command(self, logdir, 512)
    self.assertEqual(code, 1, stderr[-2000:])
    self.assertNotIn('Traceback', stderr)
    self.assertIn('agents.scripts.train: error: Saving checkpoint ckpt-128 into '
                  f'{directory} failed (File too large); the previous checkpoint ckpt-64 '
                  'is intact and a resume starts from it.', stderr)
    self.assertEqual(sorted(os.listdir(directory)), before)
    with self.assertLogs('agents', 'INFO') as logs:
      self.assertEqual(_train(run_dir, 128)['step'], 128)
    self.assertIn('Restored', '\n'.join(logs.output))
    self.assertIn('ckpt-64 at global step 64', '\n'.join(logs.output))

  def test_results_that_cannot_be_written_keep_the_file_before(self):
    path = os.path.join(tempfile.mkdtemp(), 'results.json')
    with open(path, 'w') as file:
      json.dump({'results': [1, 2, 3]}, file)
    with self.assertRaises(errors.EvaluationError) as raised, _file_size_limit(4096):
      results.write_json(path, {'results': list(range(100_000))})
    self.assertIn(f'cannot write {path} (File too large); the previous one is intact.',
                  str(raised.exception))
    with open(path) as file:
      self.assertEqual(json.load(file), {'results': [1, 2, 3]})
    self.assertEqual(os.listdir(os.path.dirname(path)), ['results.json'])


if __name__ == '__main__':
  unittest.main()
